// Comparing a computed tensor with an expected one: the single rule behind the conformance runner,
// `run_model --check` and the kernel unit tests (TensorsNear).
//
// - Types and shapes must be equal.
// - Integers, booleans, strings and the 8-bit/sub-byte float formats compare exactly, in their own
//   type (an int64 is never routed through double, which is inexact above 2^53).
// - float/double/float16/bfloat16/complex: |actual - expected| <= atol + rtol * |expected|; NaN
//   matches only NaN, and an infinity only the same infinity (rtol * inf would accept anything).
#pragma once

#include <string>

#include "include/onnxflow/tensor.h"

namespace onnxflow {

struct TensorComparison {
  bool match = true;
  double max_abs_error = 0;  // over the finite elements compared with a tolerance, and integers
  std::string mismatch;      // the first difference, when !match
};

TensorComparison CompareTensors(const Tensor& expected, const Tensor& actual, double rtol, double atol);

}  // namespace onnxflow
