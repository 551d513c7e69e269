#include "ops/sequence/sequence_util.h"

namespace onnxflow {

Result<const Sequence*> RequireSequence(const KernelContext& ctx, int i) {
  const Value* v = ctx.input(i);
  if (v == nullptr || !v->is_sequence()) return InvalidArgument("input " + std::to_string(i) + " must be a sequence");
  return &v->sequence();
}

Status ReadPosition(const KernelContext& ctx, int i, int64_t size, bool allow_end, int64_t* position) {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
  int64_t p;
  if (t->dtype() == DataType::kInt64 && t->size() == 1) {
    p = t->data<int64_t>()[0];
  } else if (t->dtype() == DataType::kInt32 && t->size() == 1) {
    p = t->data<int32_t>()[0];
  } else {
    return InvalidArgument("position must be a single int32 or int64");
  }
  const int64_t limit = allow_end ? size : size - 1;
  if (p < -size || p > limit) {
    return OutOfRange("position " + std::to_string(p) + " is out of range for a sequence of " + std::to_string(size));
  }
  *position = p < 0 ? p + size : p;
  return Status::Ok();
}

}  // namespace onnxflow
