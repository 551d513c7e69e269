// Test helpers the blocked kernels' tests share (blocked_test.cc, blocked_group_norm_test.cc: one
// binary): seeded inputs, the blocked layout by its index formula, and one kernel run.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/register.h"
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

}  // namespace onnxflow::blocked_test
