// WebP decoding through libwebp (libwebp-dev), linked like the other codec libraries.
#include <webp/decode.h>

#include "ops/image/image_codecs.h"

namespace onnxflow {
namespace image {

Result<RgbImage> DecodeWebp(const uint8_t* data, size_t size, int64_t max_bytes) {
  int w = 0, h = 0;
  if (!WebPGetInfo(data, size, &w, &h)) return InvalidArgument("cannot decode the WebP image: bad header");
  if (w <= 0 || h <= 0 || static_cast<int64_t>(w) * h * 3 > max_bytes) {
    return ResourceExhausted("the WebP image is empty or larger than the tensor size limit");
  }
  uint8_t* rgb = WebPDecodeRGB(data, size, &w, &h);
  if (rgb == nullptr) return InvalidArgument("cannot decode the WebP image");
  RgbImage image;
  image.width = w;
  image.height = h;
  image.pixels.assign(rgb, rgb + static_cast<size_t>(w) * h * 3);
  WebPFree(rgb);
  return image;
}

}  // namespace image
}  // namespace onnxflow
