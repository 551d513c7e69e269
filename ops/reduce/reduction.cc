#include "ops/reduce/reduction.h"

#include <string>

#include "ops/framework/shape.h"

namespace onnxflow {

std::vector<int64_t> AllAxes(int64_t rank) {
  std::vector<int64_t> axes(rank);
  for (int64_t i = 0; i < rank; ++i) axes[i] = i;
  return axes;
}

Result<ReductionPlan> PlanReduction(const Shape& input, const std::vector<int64_t>& axes, bool keepdims) {
  const int64_t rank = static_cast<int64_t>(input.size());
  ONNXFLOW_ASSIGN_OR_RETURN(int64_t total, CheckedElementCount(input));
  (void)total;
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, rank));
    if (reduced[axis]) return InvalidArgument("axis " + std::to_string(a) + " appears twice in axes");
    reduced[axis] = true;
  }

  ReductionPlan plan;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      plan.output_shape.push_back(input[d]);
    } else {
      plan.reduced_count *= input[d];
      if (keepdims) plan.output_shape.push_back(1);
    }
  }
  plan.output_count = ElementCount(plan.output_shape);

  // Merge runs of dims with the same role; size-1 dims take no part.
  struct Run { int64_t size; bool reduced; };
  std::vector<Run> runs;
  for (int64_t d = 0; d < rank; ++d) {
    if (input[d] == 1) continue;
    if (!runs.empty() && runs.back().reduced == reduced[d]) {
      runs.back().size *= input[d];
    } else {
      runs.push_back({input[d], reduced[d]});
    }
  }
  int reduced_runs = 0;
  for (const Run& r : runs) reduced_runs += r.reduced ? 1 : 0;
  if (reduced_runs <= 1) {
    plan.contiguous_block = true;
    bool seen_reduced = false;
    for (const Run& r : runs) {
      if (r.reduced) {
        seen_reduced = true;
      } else if (seen_reduced) {
        plan.inner *= r.size;
      } else {
        plan.outer *= r.size;
      }
    }
    return plan;
  }

  // General case: tables of offsets (an empty input leaves them empty; nothing is read then).
  plan.contiguous_block = false;
  if (plan.output_count == 0) return plan;
  const std::vector<int64_t> strides = Strides(input);
  plan.kept_offsets.assign(1, 0);
  plan.reduced_offsets.assign(1, 0);
  for (int64_t d = 0; d < rank; ++d) {
    std::vector<int64_t>& table = reduced[d] ? plan.reduced_offsets : plan.kept_offsets;
    std::vector<int64_t> next;
    next.reserve(table.size() * input[d]);
    for (int64_t base : table) {
      for (int64_t i = 0; i < input[d]; ++i) next.push_back(base + i * strides[d]);
    }
    table = std::move(next);
  }
  return plan;
}

}  // namespace onnxflow
