// Highway body of TransposeBytes (transpose_bytes.cc), compiled once per target.
//
// A tile of R rows (R = 16, 8, 4 or 2) by 16 columns is R vectors of 16 bytes. One round pairs
// vector i with vector i + R/2 and interleaves their bytes (lower halves into vector 2i, upper
// into 2i + 1): seen as the bits of (row, column), that rotates them left by one, so after
// log2(R) rounds vector j holds columns j * 16/R ... as R bytes each, the rows of the output.
// 16 x 16 bytes take 64 interleaves, where element by element they took 256 loads and stores
// (about 1 ns a byte, 0.11 ms for a 136-channel 28x28 layout change).
#if defined(ONNXFLOW_OPS_TENSOR_TRANSPOSE_BYTES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_TENSOR_TRANSPOSE_BYTES_INL_H_
#undef ONNXFLOW_OPS_TENSOR_TRANSPOSE_BYTES_INL_H_
#else
#define ONNXFLOW_OPS_TENSOR_TRANSPOSE_BYTES_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace tensor_ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

inline void TransposeBytesScalar(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds, int64_t rows,
                                 int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) dst[c * ds + r] = src[r * ss + c];
  }
}

#if HWY_TARGET != HWY_SCALAR
// R rows by 16 columns from src to dst (both at the tile's first element).
template <int R>
inline void TransposeTile(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds) {
  const hn::FixedTag<uint8_t, 16> d;
  using V = hn::Vec<decltype(d)>;
  V v[R], w[R];
  for (int i = 0; i < R; ++i) v[i] = hn::LoadU(d, src + i * ss);
  for (int round = 1; round < R; round *= 2) {
    for (int i = 0; i < R / 2; ++i) {
      w[2 * i] = hn::InterleaveLower(d, v[i], v[i + R / 2]);
      w[2 * i + 1] = hn::InterleaveUpper(d, v[i], v[i + R / 2]);
    }
    for (int i = 0; i < R; ++i) v[i] = w[i];
  }
  constexpr int kColumns = 16 / R;  // output rows per vector
  if (ds == R) {  // the output rows are adjacent: one store per vector
    for (int j = 0; j < R; ++j) hn::StoreU(v[j], d, dst + j * 16);
    return;
  }
  alignas(16) uint8_t bytes[16];
  for (int j = 0; j < R; ++j) {
    hn::Store(v[j], d, bytes);
    for (int q = 0; q < kColumns; ++q) std::memcpy(dst + (j * kColumns + q) * ds, bytes + q * R, R);
  }
}

// Rows [r0, r0 + R) of every column, in tiles of 16 columns, the last columns one by one.
template <int R>
inline void TransposeRows(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds, int64_t cols) {
  int64_t c = 0;
  for (; c + 16 <= cols; c += 16) TransposeTile<R>(src + c, ss, dst + c * ds, ds);
  TransposeBytesScalar(src + c, ss, dst + c * ds, ds, R, cols - c);
}
#endif

#if HWY_TARGET != HWY_SCALAR
// Three or four rows into adjacent output rows (a 3-channel image into channels-last): each
// column's bytes interleaved at full vector width, where a 2-row tile and a row alone stored 2
// bytes, then 1, at a time. With permute.cc's wider tiles for few rows, YOLOv8n's 640 x 640 8-bit
// image into channels-last went 0.55 -> 0.07 ms.
template <int R>
inline void InterleaveRows(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t cols) {
  const hn::ScalableTag<uint8_t> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t c = 0;
  for (; c + lanes <= cols; c += lanes) {
    const auto v0 = hn::LoadU(d, src + c), v1 = hn::LoadU(d, src + ss + c), v2 = hn::LoadU(d, src + 2 * ss + c);
    if constexpr (R == 3) {
      hn::StoreInterleaved3(v0, v1, v2, d, dst + c * 3);
    } else {
      hn::StoreInterleaved4(v0, v1, v2, hn::LoadU(d, src + 3 * ss + c), d, dst + c * 4);
    }
  }
  TransposeBytesScalar(src + c, ss, dst + c * R, R, R, cols - c);
}
#endif

inline void TransposeBytesImpl(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds, int64_t rows,
                               int64_t cols) {
#if HWY_TARGET == HWY_SCALAR
  TransposeBytesScalar(src, ss, dst, ds, rows, cols);
#else
  if (rows == 3 && ds == 3) return InterleaveRows<3>(src, ss, dst, cols);
  if (rows == 4 && ds == 4) return InterleaveRows<4>(src, ss, dst, cols);
  int64_t r = 0;
  for (; r + 16 <= rows; r += 16) TransposeRows<16>(src + r * ss, ss, dst + r, ds, cols);
  if (r + 8 <= rows) {
    TransposeRows<8>(src + r * ss, ss, dst + r, ds, cols);
    r += 8;
  }
  if (r + 4 <= rows) {
    TransposeRows<4>(src + r * ss, ss, dst + r, ds, cols);
    r += 4;
  }
  if (r + 2 <= rows) {
    TransposeRows<2>(src + r * ss, ss, dst + r, ds, cols);
    r += 2;
  }
  TransposeBytesScalar(src + r * ss, ss, dst + r, ds, rows - r, cols);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace tensor_ops
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
