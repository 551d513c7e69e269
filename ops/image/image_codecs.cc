// Format detection, the dispatch to a decoder, and the two library-backed decoders (JPEG, PNG).
// The hand-written ones (BMP, PNM, TIFF) are in bitmap_codecs.cc.
#include "ops/image/image_codecs.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

#include <jpeglib.h>
#include <png.h>

namespace onnxflow {
namespace image {

ImageFormat DetectImageFormat(const uint8_t* d, size_t n) {
  auto starts = [&](const char* magic, size_t len, size_t at = 0) {
    return n >= at + len && std::memcmp(d + at, magic, len) == 0;
  };
  if (starts("\xFF\xD8\xFF", 3)) return ImageFormat::kJpeg;
  if (starts("\x89PNG\r\n\x1A\n", 8)) return ImageFormat::kPng;
  if (starts("BM", 2)) return ImageFormat::kBmp;
  if (n >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6') return ImageFormat::kPnm;
  if (starts("II*\0", 4) || starts("MM\0*", 4)) return ImageFormat::kTiff;
  if (starts("RIFF", 4) && starts("WEBP", 4, 8)) return ImageFormat::kWebp;
  if (starts("\0\0\0\x0CjP  \r\n\x87\n", 12) || starts("\xFF\x4F\xFF\x51", 4)) return ImageFormat::kJpeg2000;
  return ImageFormat::kUnknown;
}

const char* ImageFormatName(ImageFormat f) {
  switch (f) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kPnm: return "PNM";
    case ImageFormat::kTiff: return "TIFF";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kJpeg2000: return "JPEG 2000";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

Result<RgbImage> DecodeImage(const uint8_t* data, size_t size, int64_t max_bytes) {
  const ImageFormat f = DetectImageFormat(data, size);
  switch (f) {
    case ImageFormat::kJpeg: return DecodeJpeg(data, size, max_bytes);
    case ImageFormat::kPng: return DecodePng(data, size, max_bytes);
    case ImageFormat::kBmp: return DecodeBmp(data, size, max_bytes);
    case ImageFormat::kPnm: return DecodePnm(data, size, max_bytes);
    case ImageFormat::kTiff: return DecodeTiff(data, size, max_bytes);
    case ImageFormat::kWebp: return DecodeWebp(data, size, max_bytes);
    case ImageFormat::kJpeg2000:
      return Unimplemented(std::string(ImageFormatName(f)) + " images are not supported (no decoder is linked)");
    case ImageFormat::kUnknown: break;
  }
  return InvalidArgument("the encoded stream is not a known image format");
}

// ---- JPEG ----

namespace {

// libjpeg reports fatal errors through error_exit, which must not return: jump back out.
struct JpegErrorManager {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void JpegSilence(j_common_ptr, int) {}

// Everything between setjmp and the last libjpeg call lives here, with no C++ objects whose
// destructors a longjmp could skip. Returns 0 on success, 1 on a libjpeg error, 2 when too big.
int JpegDecodeRaw(const uint8_t* data, size_t size, int64_t max_bytes, RgbImage* out, JpegErrorManager* err) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err->mgr);
  err->mgr.error_exit = JpegErrorExit;
  err->mgr.emit_message = JpegSilence;
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(&cinfo);
    return 1;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));  // NOLINT(runtime/int): libjpeg's type
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  const int64_t w = cinfo.image_width, h = cinfo.image_height;
  if (w <= 0 || h <= 0 || w * h * 3 > max_bytes) {
    jpeg_destroy_decompress(&cinfo);
    return 2;
  }
  jpeg_start_decompress(&cinfo);
  out->width = cinfo.output_width;
  out->height = cinfo.output_height;
  out->pixels.resize(static_cast<size_t>(out->width * out->height * 3));
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out->pixels.data() + static_cast<size_t>(cinfo.output_scanline) * out->width * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return 0;
}

}  // namespace

Result<RgbImage> DecodeJpeg(const uint8_t* data, size_t size, int64_t max_bytes) {
  RgbImage image;
  JpegErrorManager err;
  err.message[0] = '\0';
  switch (JpegDecodeRaw(data, size, max_bytes, &image, &err)) {
    case 0: return image;
    case 2: return ResourceExhausted("the JPEG image is empty or larger than the tensor size limit");
    default: return InvalidArgument(std::string("cannot decode the JPEG image: ") + err.message);
  }
}

// ---- PNG ----

Result<RgbImage> DecodePng(const uint8_t* data, size_t size, int64_t max_bytes) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, data, size)) {
    return InvalidArgument(std::string("cannot decode the PNG image: ") + png.message);
  }
  const int64_t w = png.width, h = png.height;
  if (w <= 0 || h <= 0 || w * h * 4 > max_bytes) {
    png_image_free(&png);
    return ResourceExhausted("the PNG image is empty or larger than the tensor size limit");
  }
  // Read with alpha and drop it afterwards, as converting to RGB does (no blending).
  png.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> rgba(static_cast<size_t>(w * h * 4));
  if (!png_image_finish_read(&png, nullptr, rgba.data(), 0, nullptr)) {
    const std::string message = png.message;
    png_image_free(&png);
    return InvalidArgument("cannot decode the PNG image: " + message);
  }
  RgbImage image;
  image.width = w;
  image.height = h;
  image.pixels.resize(static_cast<size_t>(w * h * 3));
  for (int64_t i = 0; i < w * h; ++i) {
    for (int c = 0; c < 3; ++c) image.pixels[i * 3 + c] = rgba[i * 4 + c];
  }
  return image;
}

}  // namespace image
}  // namespace onnxflow
