#include "ops/controlflow/kernels.h"
#include "ops/framework/concat.h"

namespace onnxflow {

Result<Tensor> StackIterations(const std::vector<Tensor>& parts, int64_t axis, bool reverse, KernelContext& ctx,
                               int output_index) {
  std::vector<const Tensor*> ordered;
  ordered.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) ordered.push_back(&parts[reverse ? parts.size() - 1 - i : i]);
  if (axis < 0 || axis > ordered[0]->rank()) {
    return InvalidArgument("scan output axis " + std::to_string(axis) + " is out of range for rank " +
                           std::to_string(ordered[0]->rank() + 1));
  }
  auto shape = ConcatOutputShape(ordered, axis, /*new_axis=*/true);
  if (!shape.ok()) return shape.status().WithContext("iterations produced tensors that do not stack");
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor* out, ctx.Allocate(output_index, ordered[0]->dtype(), *shape));
  ConcatInto(ordered, axis, /*new_axis=*/true, out);
  return *out;
}

}  // namespace onnxflow
