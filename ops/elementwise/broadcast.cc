#include "ops/elementwise/broadcast.h"

#include <string>

namespace onnxflow {

bool MiddleBroadcast(const Shape& full, const Shape& row, const Shape& output, int64_t* outer, int64_t* middle,
                     int64_t* width) {
  const int64_t rank = static_cast<int64_t>(output.size());
  if (full != output || static_cast<int64_t>(row.size()) > rank) return false;
  const int64_t pad = rank - static_cast<int64_t>(row.size());
  const auto row_dim = [&](int64_t d) { return d < pad ? int64_t{1} : row[static_cast<size_t>(d - pad)]; };
  int64_t d = rank - 1;
  *width = 1;
  for (; d >= 0 && row_dim(d) == output[d]; --d) *width *= output[d];  // i: both advance
  *middle = 1;
  for (; d >= 0 && row_dim(d) == 1; --d) *middle *= output[d];  // m: row repeats
  *outer = 1;
  for (; d >= 0; --d) {  // o: both advance again, or this is not the shape
    if (row_dim(d) != output[d]) return false;
    *outer *= output[d];
  }
  return *width > 1 && *middle > 1;
}

Result<BroadcastPlan> BroadcastPlan::Make(const std::vector<const Shape*>& inputs, const Shape& output) {
  const int k = static_cast<int>(inputs.size());
  if (k < 1 || k > kMaxBroadcastInputs) return Internal("BroadcastPlan takes 1 to 4 inputs");
  const size_t rank = output.size();
  BroadcastPlan plan;
  plan.inputs_ = k;
  ONNXFLOW_ASSIGN_OR_RETURN(plan.total_, CheckedElementCount(output));

  // Per output dim and input: does the input advance along it (true) or repeat (false)?
  std::vector<std::array<bool, kMaxBroadcastInputs>> advances;
  Shape dims;
  for (size_t d = 0; d < rank; ++d) {
    std::array<bool, kMaxBroadcastInputs> adv{};
    for (int i = 0; i < k; ++i) {
      const Shape& s = *inputs[i];
      if (s.size() > rank) {
        return InvalidArgument("shape " + ShapeToString(s) + " has more dims than the output " + ShapeToString(output));
      }
      const size_t lead = rank - s.size();
      const int64_t in_dim = d < lead ? 1 : s[d - lead];
      if (in_dim != output[d] && in_dim != 1) {
        return InvalidArgument("shape " + ShapeToString(s) + " does not broadcast to " + ShapeToString(output));
      }
      adv[i] = in_dim == output[d] && output[d] != 1;
    }
    if (output[d] == 1) continue;  // nothing moves along a dim of 1
    if (!dims.empty() && adv == advances.back()) {
      dims.back() *= output[d];  // same pattern as the dim before: merge
    } else {
      dims.push_back(output[d]);
      advances.push_back(adv);
    }
  }
  if (plan.total_ == 0) return plan;
  if (dims.empty()) {  // every input is a single element
    plan.inner_ = 1;
    for (int i = 0; i < k; ++i) plan.inner_broadcast_[i] = true;
    return plan;
  }
  plan.inner_ = dims.back();
  for (int i = 0; i < k; ++i) plan.inner_broadcast_[i] = !advances.back()[i];
  const size_t outer = dims.size() - 1;
  plan.outer_dims_.assign(dims.begin(), dims.begin() + outer);
  for (int i = 0; i < k; ++i) {
    plan.strides_[i].assign(outer, 0);
    int64_t stride = advances.back()[i] ? dims.back() : 1;
    for (size_t d = outer; d-- > 0;) {
      if (advances[d][i]) {
        plan.strides_[i][d] = stride;
        stride *= dims[d];
      }
    }
  }
  return plan;
}

Result<Tensor> LegacyBroadcastOperand(const Tensor& a, const Tensor& b, bool broadcast, bool has_axis, int64_t axis) {
  if (!broadcast) {
    if (a.shape() != b.shape()) {
      return InvalidArgument("shapes " + ShapeToString(a.shape()) + " and " + ShapeToString(b.shape()) +
                             " differ and the broadcast attribute is not set");
    }
    return b;
  }
  if (!has_axis) return b;  // suffix alignment is numpy broadcasting
  const int64_t rank = a.rank();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis + b.rank() > rank) {
    return InvalidArgument("axis " + std::to_string(axis) + " does not fit shape " + ShapeToString(b.shape()) +
                           " into " + ShapeToString(a.shape()));
  }
  Shape shape = b.shape();
  shape.resize(rank - axis, 1);
  return b.Reshaped(shape);
}

}  // namespace onnxflow
