#include "ops/quant/quant_params.h"

#include "ops/cast/cast_elements.h"
#include "ops/framework/shape.h"

namespace onnxflow {

Result<QuantLayout> QuantLayout::Make(const Shape& x_shape, const Tensor& scale, const Tensor* zero_point,
                                      int64_t axis, int64_t block_size) {
  if (zero_point != nullptr && zero_point->shape() != scale.shape() &&
      !(zero_point->size() == 1 && scale.size() == 1)) {
    return InvalidArgument("zero point shape " + ShapeToString(zero_point->shape()) + " differs from scale shape " +
                           ShapeToString(scale.shape()));
  }
  QuantLayout layout;
  const int64_t rank = static_cast<int64_t>(x_shape.size());
  const int64_t total = ElementCount(x_shape);
  if (scale.size() == 1) {  // one scale for everything, whatever its rank
    layout.mode_ = Mode::kPerTensor;
    layout.inner_ = total;
    return layout;
  }
  ONNXFLOW_ASSIGN_OR_RETURN(const int64_t a, NormalizeAxis(axis, rank));
  layout.outer_ = SizeToDim(x_shape, a);
  layout.dim_ = x_shape[a];
  layout.inner_ = SizeFromDim(x_shape, a + 1);
  if (block_size <= 0) {
    if (scale.rank() != 1 || scale.size() != x_shape[a]) {
      return InvalidArgument("scale shape " + ShapeToString(scale.shape()) + " must be a scalar or 1-D of length " +
                             std::to_string(x_shape[a]) + " (x.shape[" + std::to_string(a) + "]) for x of shape " +
                             ShapeToString(x_shape));
    }
    layout.mode_ = Mode::kPerAxis;
    return layout;
  }
  // Blocked.
  bool shape_ok = scale.rank() == rank;
  for (int64_t i = 0; shape_ok && i < rank; ++i) {
    if (i == a) {
      shape_ok = scale.dim(i) == (x_shape[i] + block_size - 1) / block_size;
    } else {
      shape_ok = scale.dim(i) == x_shape[i];
    }
  }
  if (!shape_ok) {
    return InvalidArgument("scale shape " + ShapeToString(scale.shape()) + " does not fit blocked quantization of x " +
                           ShapeToString(x_shape) + " with axis " + std::to_string(a) + " and block_size " +
                           std::to_string(block_size));
  }
  layout.mode_ = Mode::kBlocked;
  layout.blocks_ = scale.dim(a);
  layout.block_size_ = block_size;
  return layout;
}

Result<std::vector<double>> ParamsAsDouble(const Tensor& t, const char* input_name) {
  if (t.dtype() == DataType::kString || !IsCastableType(t.dtype())) {
    return InvalidArgument(std::string(input_name) + " has unsupported type " + DataTypeName(t.dtype()));
  }
  Tensor as_double(DataType::kDouble, t.shape());
  ONNXFLOW_RETURN_IF_ERROR(CastElements(t, &as_double, CastOptions()));
  const double* p = as_double.data<double>();
  return std::vector<double>(p, p + t.size());
}

}  // namespace onnxflow
