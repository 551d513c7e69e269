#include "ops/framework/kernel.h"

#include "ops/framework/shape.h"

namespace onnxflow {

Result<const Tensor*> KernelContext::RequireTensor(int i) const {
  const Value* v = input(i);
  if (v == nullptr) return InvalidArgument("input " + std::to_string(i) + " is required but absent");
  if (!v->is_tensor()) return InvalidArgument("input " + std::to_string(i) + " must be a tensor");
  return &v->tensor();
}

Result<Tensor*> KernelContext::Allocate(int i, DataType dtype, const Shape& shape) {
  ONNXFLOW_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(shape));
  const size_t element = ElementSize(dtype);
  if (element == 0) return InvalidArgument(std::string("cannot allocate a tensor of type ") + DataTypeName(dtype));
  if (count > run_->limits().max_tensor_bytes / static_cast<int64_t>(element)) {
    return ResourceExhausted("output " + std::to_string(i) + " of shape " + ShapeToString(shape) + " (" +
                             DataTypeName(dtype) + ") exceeds the limit of " +
                             std::to_string(run_->limits().max_tensor_bytes) + " bytes per tensor");
  }
  Tensor t(dtype, shape);
  if (!has_output(i)) {
    scratch_ = std::move(t);
    return &scratch_;
  }
  Value& slot = values_[slots_.outputs[i]];
  slot = Value(std::move(t));
  return &slot.mutable_tensor();
}

void KernelContext::SetOutput(int i, Value value) {
  if (has_output(i)) values_[slots_.outputs[i]] = std::move(value);
}

}  // namespace onnxflow
