// Gemm (all versions) and com.onnxflow FusedGemm.
#pragma once

#include <cstdint>

#include "ops/framework/registry.h"

namespace onnxflow {

// How Gemm's (and QGemm's) C broadcasts onto [M, N]: rows 1 or M, columns 1 or N.
struct BiasShape {
  int64_t rows = 1, cols = 1;
};
// C's shape as a BiasShape, or InvalidArgument naming `op` when it does not broadcast.
Result<BiasShape> ResolveBias(const char* op, const Shape& c, int64_t m, int64_t n);

}  // namespace onnxflow
