// The hand-written decoders of ImageDecoder: BMP and PNM (TIFF goes through libtiff, in
// tiff_codec.cc). Each reads only bytes it has checked are present.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "ops/image/image_codecs.h"

namespace onnxflow {
namespace image {
namespace {

Status CheckDimensions(const char* format, int64_t width, int64_t height, int64_t max_bytes) {
  if (width <= 0 || height <= 0) {
    return InvalidArgument(std::string(format) + " image has size " + std::to_string(width) + "x" +
                           std::to_string(height));
  }
  if (width > (int64_t{1} << 24) || height > (int64_t{1} << 24) || width * height * 3 > max_bytes) {
    return ResourceExhausted(std::string(format) + " image of " + std::to_string(width) + "x" +
                             std::to_string(height) + " exceeds the tensor size limit");
  }
  return Status::Ok();
}

RgbImage Blank(int64_t width, int64_t height) {
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.assign(static_cast<size_t>(width * height * 3), 0);
  return image;
}

uint32_t Le16(const uint8_t* p) { return p[0] | (p[1] << 8); }
uint32_t Le32(const uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// The 8-bit value of a channel under a BMP bit-field mask.
uint8_t MaskedChannel(uint32_t pixel, uint32_t mask) {
  if (mask == 0) return 0;
  int shift = 0;
  while (((mask >> shift) & 1) == 0) ++shift;
  const uint32_t m = mask >> shift;
  const uint32_t v = (pixel >> shift) & m;
  return static_cast<uint8_t>((v * 255 + m / 2) / m);
}

}  // namespace

// ---- BMP ----

Result<RgbImage> DecodeBmp(const uint8_t* d, size_t n, int64_t max_bytes) {
  if (n < 26) return InvalidArgument("BMP stream is truncated");
  const uint32_t pixel_offset = Le32(d + 10);
  const uint32_t dib = Le32(d + 14);
  int64_t width, height;
  uint32_t bpp, compression = 0, colors = 0;
  size_t palette_entry = 4;
  if (dib == 12) {  // OS/2 BITMAPCOREHEADER
    width = Le16(d + 18);
    height = static_cast<int16_t>(Le16(d + 20));
    bpp = Le16(d + 24);
    palette_entry = 3;
  } else if (dib >= 40 && n >= 54) {
    width = static_cast<int32_t>(Le32(d + 18));
    height = static_cast<int32_t>(Le32(d + 22));
    bpp = Le16(d + 28);
    compression = Le32(d + 30);
    colors = Le32(d + 46);
  } else {
    return InvalidArgument("BMP header of " + std::to_string(dib) + " bytes is not supported");
  }
  const bool top_down = height < 0;
  height = std::abs(height);
  ONNXFLOW_RETURN_IF_ERROR(CheckDimensions("BMP", width, height, max_bytes));
  uint32_t masks[3] = {0x00FF0000u, 0x0000FF00u, 0x000000FFu};
  if (bpp == 16) {
    masks[0] = 0x7C00;
    masks[1] = 0x03E0;
    masks[2] = 0x001F;
  }
  if (compression == 3 || compression == 6) {  // BI_BITFIELDS: masks after a 40-byte header, or inside V4/V5
    if (n < 14 + 40 + 12) return InvalidArgument("BMP bit-field masks are truncated");
    for (int c = 0; c < 3; ++c) masks[c] = Le32(d + 54 + 4 * c);
  } else if (compression != 0) {
    return Unimplemented("compressed BMP (compression " + std::to_string(compression) + ") is not supported");
  }
  if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) {
    return Unimplemented("BMP with " + std::to_string(bpp) + " bits per pixel is not supported");
  }
  // Palette for 1/4/8-bit images: BGR(X) entries right after the headers.
  std::vector<uint8_t> palette;
  if (bpp <= 8) {
    const size_t entries = colors != 0 ? std::min<size_t>(colors, size_t{1} << bpp) : size_t{1} << bpp;
    const size_t start = 14 + dib;
    if (start + entries * palette_entry > n) return InvalidArgument("BMP palette is truncated");
    for (size_t i = 0; i < entries; ++i) {
      const uint8_t* e = d + start + i * palette_entry;
      palette.insert(palette.end(), {e[2], e[1], e[0]});
    }
  }
  const int64_t stride = ((width * bpp + 31) / 32) * 4;
  if (pixel_offset > n || static_cast<int64_t>(n - pixel_offset) < stride * height) {
    return InvalidArgument("BMP pixel data is truncated");
  }
  RgbImage image = Blank(width, height);
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* row = d + pixel_offset + (top_down ? y : height - 1 - y) * stride;
    uint8_t* out = image.pixels.data() + y * width * 3;
    for (int64_t x = 0; x < width; ++x, out += 3) {
      if (bpp <= 8) {
        const int64_t bit = x * bpp;
        const uint32_t index = (row[bit / 8] >> (8 - bpp - bit % 8)) & ((1u << bpp) - 1);
        if (index * 3 + 2 >= palette.size()) return InvalidArgument("BMP pixel uses a colour outside the palette");
        std::memcpy(out, palette.data() + index * 3, 3);
      } else if (bpp == 24) {
        out[0] = row[x * 3 + 2];
        out[1] = row[x * 3 + 1];
        out[2] = row[x * 3];
      } else {
        const uint32_t pixel = bpp == 16 ? Le16(row + x * 2) : Le32(row + x * 4);
        for (int c = 0; c < 3; ++c) out[c] = MaskedChannel(pixel, masks[c]);
      }
    }
  }
  return image;
}

// ---- PNM ----

Result<RgbImage> DecodePnm(const uint8_t* d, size_t n, int64_t max_bytes) {
  if (n < 3 || d[0] != 'P' || d[1] < '1' || d[1] > '6') return InvalidArgument("not a PNM stream");
  const char kind = static_cast<char>(d[1]);
  size_t pos = 2;
  // Header numbers: whitespace and '#' comments between them.
  auto number = [&](int64_t* value) -> bool {
    while (pos < n) {
      if (d[pos] == '#') {
        while (pos < n && d[pos] != '\n') ++pos;
      } else if (std::isspace(d[pos])) {
        ++pos;
      } else {
        break;
      }
    }
    if (pos >= n || !std::isdigit(d[pos])) return false;
    int64_t v = 0;
    while (pos < n && std::isdigit(d[pos])) {
      v = v * 10 + (d[pos++] - '0');
      if (v > (int64_t{1} << 40)) return false;
    }
    *value = v;
    return true;
  };
  int64_t width = 0, height = 0, maxval = 1;
  const bool bitmap = kind == '1' || kind == '4';
  if (!number(&width) || !number(&height) || (!bitmap && !number(&maxval))) {
    return InvalidArgument("PNM header is malformed");
  }
  if (maxval < 1 || maxval > 65535) return InvalidArgument("PNM maxval " + std::to_string(maxval) + " is out of range");
  ONNXFLOW_RETURN_IF_ERROR(CheckDimensions("PNM", width, height, max_bytes));
  const int channels = (kind == '3' || kind == '6') ? 3 : 1;
  const bool ascii = kind <= '3';
  if (!ascii) ++pos;  // the single whitespace before the raster
  RgbImage image = Blank(width, height);
  auto scale = [&](int64_t v) -> uint8_t {
    v = std::min(v, maxval);
    return static_cast<uint8_t>((v * 255 + maxval / 2) / maxval);
  };
  const int64_t samples = width * height * channels;
  std::vector<uint8_t> values(static_cast<size_t>(samples));
  if (kind == '4') {
    const int64_t stride = (width + 7) / 8;
    if (pos > n || static_cast<int64_t>(n - pos) < stride * height) return InvalidArgument("PBM raster is truncated");
    for (int64_t y = 0; y < height; ++y) {
      for (int64_t x = 0; x < width; ++x) {
        const bool black = (d[pos + y * stride + x / 8] >> (7 - x % 8)) & 1;
        values[y * width + x] = black ? 0 : 255;
      }
    }
  } else if (kind == '1') {
    for (int64_t i = 0; i < samples; ++i) {
      while (pos < n && (std::isspace(d[pos]) || d[pos] == '#')) {
        if (d[pos] == '#') {
          while (pos < n && d[pos] != '\n') ++pos;
        } else {
          ++pos;
        }
      }
      if (pos >= n || (d[pos] != '0' && d[pos] != '1')) return InvalidArgument("PBM raster is truncated");
      values[i] = d[pos++] == '1' ? 0 : 255;
    }
  } else if (ascii) {
    for (int64_t i = 0; i < samples; ++i) {
      int64_t v;
      if (!number(&v)) return InvalidArgument("PNM raster is truncated");
      values[i] = scale(v);
    }
  } else {
    const int bytes = maxval > 255 ? 2 : 1;
    if (pos > n || static_cast<int64_t>(n - pos) < samples * bytes) return InvalidArgument("PNM raster is truncated");
    for (int64_t i = 0; i < samples; ++i) {
      const uint8_t* p = d + pos + i * bytes;
      values[i] = scale(bytes == 2 ? (p[0] << 8) | p[1] : p[0]);
    }
  }
  for (int64_t i = 0; i < width * height; ++i) {
    for (int c = 0; c < 3; ++c) image.pixels[i * 3 + c] = values[i * channels + (channels == 3 ? c : 0)];
  }
  return image;
}

}  // namespace image
}  // namespace onnxflow
