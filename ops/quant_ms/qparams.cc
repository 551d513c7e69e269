#include "ops/quant_ms/qparams.h"

namespace onnxflow {
namespace quant_ms {

Status CheckQuantType(DataType t, const char* input_name) {
  if (t == DataType::kUint8 || t == DataType::kInt8) return Status::Ok();
  return InvalidArgument(std::string("input '") + input_name + "' has type " + DataTypeName(t) +
                         "; expected uint8 or int8");
}

Result<QParams> ReadQParams(const KernelContext& ctx, int scale_index, int zero_index, DataType type,
                            const char* scale_name, const char* zero_name) {
  QParams q;
  if (!ctx.has_input(scale_index)) {
    return InvalidArgument(std::string("input '") + scale_name + "' is required but absent");
  }
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(scale_index));
  if (scale->dtype() != DataType::kFloat || scale->size() != 1) {
    return InvalidArgument(std::string("input '") + scale_name + "' must be a float with one element, got " +
                           DataTypeName(scale->dtype()) + " " + ShapeToString(scale->shape()));
  }
  q.scale = scale->data<float>()[0];
  const Tensor* zero = ctx.input_tensor(zero_index);
  if (zero != nullptr) {
    if (zero->dtype() != type || zero->size() != 1) {
      return InvalidArgument(std::string("input '") + zero_name + "' must be a " + DataTypeName(type) +
                             " with one element, got " + DataTypeName(zero->dtype()) + " " +
                             ShapeToString(zero->shape()));
    }
    q.zero = type == DataType::kInt8 ? static_cast<float>(zero->data<int8_t>()[0])
                                     : static_cast<float>(zero->data<uint8_t>()[0]);
  }
  return q;
}

}  // namespace quant_ms
}  // namespace onnxflow
