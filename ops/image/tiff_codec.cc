// TIFF decoding through libtiff (libtiff-dev), reading from memory: every compression, layout
// and photometric interpretation libtiff knows, converted to RGB by TIFFReadRGBAImageOriented.
// Hostile files meet a well-kept decoder instead of a hand-written one; its allocations are capped
// (TIFFOpenOptionsSetMaxSingleMemAlloc) and its messages go into the Status, never to stderr.
#include <tiffio.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ops/image/image_codecs.h"

namespace onnxflow {
namespace image {
namespace {

// The bytes libtiff reads through its client callbacks, and the first error it reported.
struct Source {
  const uint8_t* data;
  toff_t size;
  toff_t pos = 0;
  std::string error;
};

tmsize_t Read(thandle_t h, void* buffer, tmsize_t n) {
  auto* s = static_cast<Source*>(h);
  if (n < 0 || s->pos >= s->size) return 0;
  const toff_t count = std::min<toff_t>(static_cast<toff_t>(n), s->size - s->pos);
  std::memcpy(buffer, s->data + s->pos, count);
  s->pos += count;
  return static_cast<tmsize_t>(count);
}

tmsize_t Write(thandle_t, void*, tmsize_t) { return -1; }

toff_t Seek(thandle_t h, toff_t offset, int whence) {
  auto* s = static_cast<Source*>(h);
  const toff_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->size : 0;
  if (offset > ~toff_t{0} - base) return static_cast<toff_t>(-1);
  s->pos = base + offset;  // past the end is allowed; reads there return nothing
  return s->pos;
}

int Close(thandle_t) { return 0; }
toff_t Size(thandle_t h) { return static_cast<Source*>(h)->size; }
int Map(thandle_t, void**, toff_t*) { return 0; }
void Unmap(thandle_t, void*, toff_t) {}

int OnError(TIFF*, void* user, const char* module, const char* format, va_list args) {
  auto* s = static_cast<Source*>(user);
  if (s->error.empty()) {
    char buffer[256];
    std::vsnprintf(buffer, sizeof buffer, format, args);
    s->error = std::string(module != nullptr ? module : "libtiff") + ": " + buffer;
  }
  return 1;  // handled: libtiff's default handler would print to stderr
}

int OnWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

}  // namespace

Result<RgbImage> DecodeTiff(const uint8_t* data, size_t size, int64_t max_bytes) {
  Source source{data, static_cast<toff_t>(size)};
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  if (options == nullptr) return ResourceExhausted("cannot allocate the TIFF decoder");
  TIFFOpenOptionsSetErrorHandlerExtR(options, OnError, &source);
  TIFFOpenOptionsSetWarningHandlerExtR(options, OnWarning, &source);
  // No single allocation (a strip, a tile, a table) beyond the tensor limit.
  TIFFOpenOptionsSetMaxSingleMemAlloc(options, static_cast<tmsize_t>(std::max<int64_t>(max_bytes, 1 << 20)));
  // "m": no memory mapping (the callbacks read from the buffer).
  TIFF* tiff = TIFFClientOpenExt("image", "rm", &source, Read, Write, Seek, Close, Size, Map, Unmap, options);
  TIFFOpenOptionsFree(options);
  if (tiff == nullptr) return InvalidArgument("cannot decode the TIFF image: " + source.error);
  struct Closer {
    TIFF* t;
    ~Closer() { TIFFClose(t); }
  } closer{tiff};

  uint32_t width = 0, height = 0;
  TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, &height);
  if (width == 0 || height == 0) {
    return InvalidArgument("TIFF image has size " + std::to_string(width) + "x" + std::to_string(height));
  }
  // The RGBA raster takes 4 bytes a pixel, the result 3: both within the limit.
  if (static_cast<int64_t>(width) * height * 4 > max_bytes) {
    return ResourceExhausted("TIFF image of " + std::to_string(width) + "x" + std::to_string(height) +
                             " exceeds the tensor size limit");
  }
  char why[1024] = "";
  if (!TIFFRGBAImageOK(tiff, why)) return Unimplemented(std::string("TIFF image is not supported: ") + why);
  std::vector<uint32_t> rgba(static_cast<size_t>(width) * height);
  if (!TIFFReadRGBAImageOriented(tiff, width, height, rgba.data(), ORIENTATION_TOPLEFT, /*stop_on_error=*/1) ||
      !source.error.empty()) {
    return InvalidArgument("cannot decode the TIFF image: " + (source.error.empty() ? "bad data" : source.error));
  }
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.resize(rgba.size() * 3);
  for (size_t i = 0; i < rgba.size(); ++i) {
    image.pixels[i * 3 + 0] = static_cast<uint8_t>(TIFFGetR(rgba[i]));
    image.pixels[i * 3 + 1] = static_cast<uint8_t>(TIFFGetG(rgba[i]));
    image.pixels[i * 3 + 2] = static_cast<uint8_t>(TIFFGetB(rgba[i]));
  }
  return image;
}

}  // namespace image
}  // namespace onnxflow
