// Short copies of a runtime length: a window row of a quantized convolution, a short Concat or
// Split run. A libc memcpy call per run of a few dozen bytes cost more than the copy (the RGB
// stem's 21-byte runs, 7 per pixel), and a byte loop of a runtime length runs a byte at a time;
// fixed-size pieces the compiler inlines are single loads and stores.
#pragma once

#include <cstdint>
#include <cstring>

namespace onnxflow {

inline void CopyShortBytes(void* dst, const void* src, int64_t n) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) std::memcpy(d + i, s + i, 16);
  if (i + 8 <= n) {
    std::memcpy(d + i, s + i, 8);
    i += 8;
  }
  if (i + 4 <= n) {
    std::memcpy(d + i, s + i, 4);
    i += 4;
  }
  for (; i < n; ++i) d[i] = s[i];
}

}  // namespace onnxflow
