// Test helpers the blocked kernels' tests share (blocked_test.cc, blocked_group_norm_test.cc, the
// float16 tests: one binary): seeded inputs, the blocked layout by its index formula, one kernel
// run, and float16 inputs with the bit-for-bit comparison of a float16 result.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/register.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/framework/testing.h"
#include "ops/nn/register.h"

namespace onnxflow::blocked_test {

// n values in [offset - 1, offset + 1), the same for the same seed.
inline std::vector<float> Random(int64_t n, uint32_t seed, float offset = 0.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = offset + dist(rng);
  return v;
}

// Element (n, c, h, w) of an NCHW tensor sits at ((n * ceil(C/16) + c/16) * H * W + h * W + w) * 16
// + c % 16; pad lanes are zero.
inline Tensor ToBlockedRef(const Tensor& nchw) {
  const int64_t n_n = nchw.dim(0), c_n = nchw.dim(1), pixels = nchw.dim(2) * nchw.dim(3);
  const int64_t blocks = (c_n + kChannelBlock - 1) / kChannelBlock;
  Tensor out(DataType::kFloat, BlockedShape(nchw.shape()));  // zeros: the pad lanes stay 0
  for (int64_t n = 0; n < n_n; ++n) {
    for (int64_t c = 0; c < c_n; ++c) {
      for (int64_t p = 0; p < pixels; ++p) {
        out.mutable_data<float>()[((n * blocks + c / kChannelBlock) * pixels + p) * kChannelBlock +
                                  c % kChannelBlock] = nchw.data<float>()[(n * c_n + c) * pixels + p];
      }
    }
  }
  return out;
}

// The first output of `test` run with the plain and the blocked kernels registered.
inline Result<Tensor> RunOne(OpTest& test) {
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> out, test.Run([](KernelRegistry& r) {
    ONNXFLOW_RETURN_IF_ERROR(RegisterNnKernels(r));
    return RegisterBlockedKernels(r);
  }));
  return out[0].tensor();
}

// A blocked X, as float16 and as the floats those stand for.
struct HalfInput {
  Tensor half, widened;
};

// A blocked X of the plain shape `nchw` (pad lanes zero): values in [-1, 1), with `special` ones
// at positions of the plain tensor, rounded to float16.
inline HalfInput BlockedHalfInput(const Shape& nchw, uint32_t seed,
                           const std::vector<std::pair<int64_t, float>>& special = {}) {
  std::vector<float> plain = Random(ElementCount(nchw), seed);
  for (const auto& [at, value] : special) plain[static_cast<size_t>(at)] = value;
  const Tensor blocked = ToBlockedRef(Tensor::FromVector<float>(nchw, plain));
  const std::vector<float> values(blocked.data<float>(), blocked.data<float>() + blocked.size());
  SixteenBitValues rounded = RoundToSixteenBits(values, DataType::kFloat16, blocked.shape());
  return {rounded.tensor, Tensor::FromVector<float>(blocked.shape(), rounded.widened)};
}

// FloatToHalf of each value of a float tensor.
inline Tensor Narrowed(const Tensor& y) {
  std::vector<Float16> h(static_cast<size_t>(y.size()));
  for (size_t i = 0; i < h.size(); ++i) h[i].bits = FloatToHalf(y.data<float>()[i]);
  return Tensor::FromVector<Float16>(y.shape(), h);
}

// The same type, shape and bytes. TensorsEqual compares values (it takes -0 for 0 and any NaN for
// another): past it, the bits.
inline ::testing::AssertionResult SameBits(const Tensor& want, const Tensor& got) {
  ::testing::AssertionResult equal = TensorsEqual(want, got);
  if (!equal) return equal;
  const size_t bytes = ElementSize(want.dtype());
  const char* w = static_cast<const char*>(want.raw_data());
  const char* g = static_cast<const char*>(got.raw_data());
  for (int64_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(w + i * bytes, g + i * bytes, bytes) != 0) {
      return ::testing::AssertionFailure() << "element " << i << " has other bits than expected (-0 or a NaN's)";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace onnxflow::blocked_test
