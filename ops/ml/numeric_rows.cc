#include "ops/ml/numeric_rows.h"

#include <string>

#include "ops/framework/numeric.h"

namespace onnxflow {
namespace {

template <typename T>
void LoadRow(const void* data, int64_t offset, int64_t n, double* out) {
  const T* in = static_cast<const T*>(data) + offset;
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(ToCompute(in[i]));
}

}  // namespace

Result<RowLoader> NumericRowLoader(DataType dtype, const char* what, bool allow_float16) {
  switch (dtype) {
    case DataType::kFloat: return &LoadRow<float>;
    case DataType::kDouble: return &LoadRow<double>;
    case DataType::kInt64: return &LoadRow<int64_t>;
    case DataType::kInt32: return &LoadRow<int32_t>;
    case DataType::kFloat16:
      if (allow_float16) return &LoadRow<Float16>;
      break;
    default:
      break;
  }
  return InvalidArgument(std::string(what) + " must be float, double, int64 or int32" +
                         (allow_float16 ? " (or float16)" : "") + ", got " + DataTypeName(dtype));
}

Result<RowsView> AsRows(const Tensor& x, const char* what) {
  if (x.rank() == 1) return RowsView{1, x.dim(0)};
  if (x.rank() == 2) return RowsView{x.dim(0), x.dim(1)};
  return InvalidArgument(std::string(what) + " must be [C] or [N, C], got " + ShapeToString(x.shape()));
}

}  // namespace onnxflow
