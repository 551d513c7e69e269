// Reading numeric inputs of the ml ops (float, double, int64, int32; some ops also float16) as
// doubles, a row at a time, so one scalar code path serves every input type exactly.
#pragma once

#include <cstdint>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

// Copies elements [offset, offset + n) of a tensor's data, converted to double, into out.
using RowLoader = void (*)(const void* data, int64_t offset, int64_t n, double* out);

// The loader for `dtype`, or InvalidArgument naming `what` and the type when it is not one of
// float, double, int64, int32 (or float16 when allow_float16).
Result<RowLoader> NumericRowLoader(DataType dtype, const char* what, bool allow_float16 = false);

// X viewed as [N, C]: a [C] input is one row; rank 0 or > 2 is refused.
struct RowsView {
  int64_t rows = 0;
  int64_t cols = 0;
};
Result<RowsView> AsRows(const Tensor& x, const char* what);

}  // namespace onnxflow
