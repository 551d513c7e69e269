// The hand-written decoders of ImageDecoder: BMP, PNM and baseline TIFF (strips; uncompressed,
// PackBits, LZW or Deflate through zlib; horizontal predictor). Each reads only bytes it has
// checked are present.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include <zlib.h>

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

// ---- TIFF (baseline) ----

namespace {

class TiffReader {
 public:
  TiffReader(const uint8_t* d, size_t n) : d_(d), n_(n), little_(d[0] == 'I') {}

  bool U16(size_t at, uint32_t* v) const {
    if (at + 2 > n_) return false;
    *v = little_ ? (d_[at] | (d_[at + 1] << 8)) : ((d_[at] << 8) | d_[at + 1]);
    return true;
  }
  bool U32(size_t at, uint32_t* v) const {
    if (at + 4 > n_) return false;
    const uint8_t* p = d_ + at;
    *v = little_ ? (p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24))
                 : ((static_cast<uint32_t>(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) | p[3]);
    return true;
  }

  // The values of one IFD entry (SHORT or LONG; BYTE read as small ints).
  bool Values(size_t entry, std::vector<uint32_t>* out) const {
    uint32_t type, count;
    if (!U16(entry + 2, &type) || !U32(entry + 4, &count)) return false;
    const size_t size = type == 3 ? 2 : type == 4 ? 4 : type == 1 ? 1 : 0;
    if (size == 0 || count > (1u << 24)) return false;
    size_t at = entry + 8;
    if (size * count > 4) {
      uint32_t offset;
      if (!U32(entry + 8, &offset)) return false;
      at = offset;
    }
    if (at + size * count > n_) return false;
    out->resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t v = 0;
      if (size == 1) v = d_[at + i];
      if (size == 2) U16(at + 2 * i, &v);
      if (size == 4) U32(at + 4 * i, &v);
      (*out)[i] = v;
    }
    return true;
  }

 private:
  const uint8_t* d_;
  size_t n_;
  bool little_;
};

// PackBits: a header byte h; 0..127 copies h+1 literal bytes, -1..-127 repeats the next byte 1-h times.
bool UnpackBits(const uint8_t* src, size_t n, std::vector<uint8_t>* out, size_t want) {
  size_t i = 0;
  while (i < n && out->size() < want) {
    const int8_t h = static_cast<int8_t>(src[i++]);
    if (h >= 0) {
      const size_t len = static_cast<size_t>(h) + 1;
      if (i + len > n) return false;
      out->insert(out->end(), src + i, src + i + len);
      i += len;
    } else if (h != -128) {
      if (i >= n) return false;
      out->insert(out->end(), static_cast<size_t>(1 - h), src[i++]);
    }
  }
  return true;
}

// TIFF's LZW: MSB-first codes of 9 to 12 bits, 256 = clear, 257 = end, and the code width grows
// one code early ("early change"). Appends at most `want` bytes to out.
bool UnpackLzw(const uint8_t* src, size_t n, std::vector<uint8_t>* out, size_t want) {
  constexpr int kClear = 256, kEnd = 257;
  std::vector<std::vector<uint8_t>> table(4096);
  for (int i = 0; i < 256; ++i) table[i] = {static_cast<uint8_t>(i)};
  int next = 258, width = 9, old = -1;
  size_t bitpos = 0;
  auto read = [&](int bits) -> int {
    if (bitpos + bits > n * 8) return kEnd;  // a stream cut short ends like an end code
    int v = 0;
    for (int b = 0; b < bits; ++b, ++bitpos) v = (v << 1) | ((src[bitpos / 8] >> (7 - bitpos % 8)) & 1);
    return v;
  };
  auto emit = [&](const std::vector<uint8_t>& s) {
    out->insert(out->end(), s.begin(), s.begin() + std::min(s.size(), want - out->size()));
  };
  while (out->size() < want) {
    const int code = read(width);
    if (code == kEnd) break;
    if (code == kClear) {
      next = 258;
      width = 9;
      old = -1;
      continue;
    }
    std::vector<uint8_t> entry;
    if (code < next) {
      entry = table[code];
      if (old >= 0 && next < 4096) {
        table[next] = table[old];
        table[next].push_back(entry[0]);
        ++next;
      }
    } else if (code == next && old >= 0 && next < 4096) {
      entry = table[old];
      entry.push_back(table[old][0]);
      table[next++] = entry;
    } else {
      return false;
    }
    if (entry.empty()) return false;
    emit(entry);
    old = code;
    if (next >= (1 << width) - 1 && width < 12) ++width;
  }
  return true;
}

// zlib-wrapped Deflate (compression 8 and the old 32946).
bool UnpackDeflate(const uint8_t* src, size_t n, std::vector<uint8_t>* out, size_t want) {
  const size_t start = out->size();
  out->resize(want);
  uLongf produced = static_cast<uLongf>(want - start);
  const int rc = uncompress(out->data() + start, &produced, src, static_cast<uLong>(n));
  if (rc != Z_OK && rc != Z_BUF_ERROR) return false;
  out->resize(start + produced);
  return true;
}

}  // namespace

Result<RgbImage> DecodeTiff(const uint8_t* d, size_t n, int64_t max_bytes) {
  if (n < 8) return InvalidArgument("TIFF header is truncated");
  TiffReader r(d, n);
  uint32_t ifd;
  if (!r.U32(4, &ifd)) return InvalidArgument("TIFF header is truncated");
  uint32_t entries;
  if (!r.U16(ifd, &entries)) return InvalidArgument("TIFF directory is truncated");
  uint32_t width = 0, height = 0, compression = 1, photometric = 2, samples = 1, planar = 1, predictor = 1;
  uint32_t rows_per_strip = 0xFFFFFFFFu;
  std::vector<uint32_t> bits = {1}, offsets, counts, colormap;
  for (uint32_t e = 0; e < entries; ++e) {
    const size_t entry = ifd + 2 + 12 * static_cast<size_t>(e);
    uint32_t tag;
    std::vector<uint32_t> v;
    if (!r.U16(entry, &tag)) return InvalidArgument("TIFF directory is truncated");
    if (!r.Values(entry, &v) || v.empty()) continue;  // tags of other types are not needed here
    switch (tag) {
      case 256: width = v[0]; break;
      case 257: height = v[0]; break;
      case 258: bits = v; break;
      case 259: compression = v[0]; break;
      case 262: photometric = v[0]; break;
      case 273: offsets = v; break;
      case 277: samples = v[0]; break;
      case 278: rows_per_strip = v[0]; break;
      case 279: counts = v; break;
      case 284: planar = v[0]; break;
      case 317: predictor = v[0]; break;
      case 320: colormap = v; break;
      default: break;
    }
  }
  ONNXFLOW_RETURN_IF_ERROR(CheckDimensions("TIFF", width, height, max_bytes));
  for (uint32_t b : bits) {
    if (b != 8) return Unimplemented("TIFF with " + std::to_string(b) + " bits per sample is not supported");
  }
  if (compression != 1 && compression != 5 && compression != 8 && compression != 32946 && compression != 32773) {
    return Unimplemented("TIFF compression " + std::to_string(compression) + " is not supported");
  }
  if (planar != 1 && samples > 1) return Unimplemented("planar TIFF is not supported");
  if (photometric > 3 || samples < 1 || samples > 8 || (photometric == 2 && samples < 3)) {
    return Unimplemented("TIFF photometric " + std::to_string(photometric) + " with " + std::to_string(samples) +
                         " samples is not supported");
  }
  if (photometric == 3 && colormap.size() != 3 * 256) return InvalidArgument("TIFF palette image without a colour map");
  if (offsets.empty() || offsets.size() != counts.size()) return InvalidArgument("TIFF strips are missing");

  const size_t want = static_cast<size_t>(width) * height * samples;
  std::vector<uint8_t> raster;
  raster.reserve(want);
  for (size_t s = 0; s < offsets.size() && raster.size() < want; ++s) {
    if (offsets[s] > n || counts[s] > n - offsets[s]) return InvalidArgument("TIFF strip is outside the stream");
    const uint8_t* strip = d + offsets[s];
    bool ok = true;
    if (compression == 1) {
      raster.insert(raster.end(), strip, strip + std::min<size_t>(counts[s], want - raster.size()));
    } else if (compression == 32773) {
      ok = UnpackBits(strip, counts[s], &raster, want);
    } else if (compression == 5) {
      ok = UnpackLzw(strip, counts[s], &raster, want);
    } else {
      ok = UnpackDeflate(strip, counts[s], &raster, want);
    }
    if (!ok) return InvalidArgument("TIFF strip " + std::to_string(s) + " is malformed");
  }
  (void)rows_per_strip;  // strips are contiguous rows; their row count only matters for their length
  if (raster.size() < want) return InvalidArgument("TIFF pixel data is truncated");
  if (predictor == 2) {  // horizontal differencing: each sample is stored as the change from its left
    const size_t row = static_cast<size_t>(width) * samples;
    for (size_t y = 0; y < height; ++y) {
      uint8_t* p = raster.data() + y * row;
      for (size_t i = samples; i < row; ++i) p[i] = static_cast<uint8_t>(p[i] + p[i - samples]);
    }
  } else if (predictor != 1) {
    return Unimplemented("TIFF predictor " + std::to_string(predictor) + " is not supported");
  }

  RgbImage image = Blank(width, height);
  for (size_t i = 0; i < static_cast<size_t>(width) * height; ++i) {
    const uint8_t* p = raster.data() + i * samples;
    uint8_t* out = image.pixels.data() + i * 3;
    switch (photometric) {
      case 0: out[0] = out[1] = out[2] = static_cast<uint8_t>(255 - p[0]); break;  // WhiteIsZero
      case 1: out[0] = out[1] = out[2] = p[0]; break;                              // BlackIsZero
      case 2: out[0] = p[0]; out[1] = p[1]; out[2] = p[2]; break;                  // RGB
      case 3:                                                                      // palette, 16-bit entries
        for (int c = 0; c < 3; ++c) out[c] = static_cast<uint8_t>(colormap[c * 256 + p[0]] >> 8);
        break;
      default: break;
    }
  }
  return image;
}

}  // namespace image
}  // namespace onnxflow
