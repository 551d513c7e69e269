// Decoders behind ImageDecoder: every format decodes to 8-bit RGB, row-major, 3 bytes a pixel.
//   JPEG  libjpeg(-turbo)                 PNG   libpng (simplified API)
//   BMP   by hand: 1/4/8-bit palette, 16/24/32-bit (BI_RGB and BI_BITFIELDS), no RLE
//   PNM   by hand: P1..P6, maxval up to 65535
//   TIFF  by hand: baseline strips, uncompressed / PackBits / LZW / Deflate (zlib), predictor 2,
//         8-bit gray / RGB(A) / palette
//   WebP  the system's libwebp, loaded at run time when present (webp_codec.cc)
// JPEG 2000 is recognised and refused (no decoding library is available).
// Every decoder checks sizes against the bytes present and against max_bytes before allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "include/onnxflow/status.h"

namespace onnxflow {
namespace image {

struct RgbImage {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;  // height * width * 3
};

enum class ImageFormat { kUnknown, kJpeg, kPng, kBmp, kPnm, kTiff, kWebp, kJpeg2000 };

ImageFormat DetectImageFormat(const uint8_t* data, size_t size);
const char* ImageFormatName(ImageFormat format);

// Decodes any supported format to RGB; InvalidArgument for broken data, Unimplemented for a
// format or variant not supported, ResourceExhausted when the image would exceed max_bytes.
Result<RgbImage> DecodeImage(const uint8_t* data, size_t size, int64_t max_bytes);

Result<RgbImage> DecodeJpeg(const uint8_t* data, size_t size, int64_t max_bytes);
Result<RgbImage> DecodePng(const uint8_t* data, size_t size, int64_t max_bytes);
Result<RgbImage> DecodeBmp(const uint8_t* data, size_t size, int64_t max_bytes);
Result<RgbImage> DecodePnm(const uint8_t* data, size_t size, int64_t max_bytes);
Result<RgbImage> DecodeTiff(const uint8_t* data, size_t size, int64_t max_bytes);
Result<RgbImage> DecodeWebp(const uint8_t* data, size_t size, int64_t max_bytes);

}  // namespace image
}  // namespace onnxflow
