// WebP decoding through the system's libwebp, loaded at run time (dlopen) rather than linked:
// Debian ships the library (libwebp7) on machines that have no libwebp-dev, and a missing library
// must not break the build of every binary that links the kernels. Only the stable C entry points
// WebPGetInfo / WebPDecodeRGB / WebPFree are used; their signatures are declared here.
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>

#include "ops/image/image_codecs.h"

namespace onnxflow {
namespace image {
namespace {

struct WebpApi {
  int (*get_info)(const uint8_t*, size_t, int*, int*) = nullptr;
  uint8_t* (*decode_rgb)(const uint8_t*, size_t, int*, int*) = nullptr;
  void (*free)(void*) = nullptr;
  bool ok() const { return get_info != nullptr && decode_rgb != nullptr && free != nullptr; }
};

const WebpApi& Api() {
  static const WebpApi api = [] {
    WebpApi a;
    void* lib = nullptr;
    for (const char* name : {"libwebp.so.7", "libwebp.so"}) {
      lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib != nullptr) break;
    }
    if (lib == nullptr) return a;  // kept loaded for the life of the process once found
    a.get_info = reinterpret_cast<decltype(a.get_info)>(dlsym(lib, "WebPGetInfo"));
    a.decode_rgb = reinterpret_cast<decltype(a.decode_rgb)>(dlsym(lib, "WebPDecodeRGB"));
    a.free = reinterpret_cast<decltype(a.free)>(dlsym(lib, "WebPFree"));
    return a;
  }();
  return api;
}

}  // namespace

Result<RgbImage> DecodeWebp(const uint8_t* data, size_t size, int64_t max_bytes) {
  const WebpApi& api = Api();
  if (!api.ok()) return Unimplemented("WebP images need the system's libwebp (libwebp.so.7), which is not installed");
  int w = 0, h = 0;
  if (!api.get_info(data, size, &w, &h)) return InvalidArgument("cannot decode the WebP image: bad header");
  if (w <= 0 || h <= 0 || static_cast<int64_t>(w) * h * 3 > max_bytes) {
    return ResourceExhausted("the WebP image is empty or larger than the tensor size limit");
  }
  uint8_t* rgb = api.decode_rgb(data, size, &w, &h);
  if (rgb == nullptr) return InvalidArgument("cannot decode the WebP image");
  RgbImage image;
  image.width = w;
  image.height = h;
  image.pixels.assign(rgb, rgb + static_cast<size_t>(w) * h * 3);
  api.free(rgb);
  return image;
}

}  // namespace image
}  // namespace onnxflow
