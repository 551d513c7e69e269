#include "scheduler/subgraph.h"

#include <algorithm>

namespace onnxflow {
namespace {

class Frame : public SubgraphFrame {
 public:
  Frame(const PlannedSubgraph& sub, KernelContext& ctx) : sub_(sub), run_(ctx.run()) {
    const Plan& plan = sub.plan();
    values_.resize(plan.slot_count());
    for (const auto& [slot, value] : plan.constants()) values_[slot] = value;
    for (const auto& [slot, j] : plan.outer_slots()) values_[slot] = ctx.implicit_input(sub.carried()[j]);
    persistent_.assign(plan.slot_count(), false);
    for (const auto& [slot, value] : plan.constants()) persistent_[slot] = true;
    for (const auto& [slot, j] : plan.outer_slots()) persistent_[slot] = true;
  }

  Status Run(std::vector<Value>& inputs, std::vector<Value>* outputs) override {
    const Plan& plan = sub_.plan();
    if (inputs.size() > plan.input_slots().size()) {
      return InvalidArgument("the subgraph takes " + std::to_string(plan.input_slots().size()) + " inputs, got " +
                             std::to_string(inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) values_[plan.input_slots()[i]] = std::move(inputs[i]);
    ONNXFLOW_RETURN_IF_ERROR(sub_.executor().Run(values_, run_));
    outputs->resize(plan.output_slots().size());
    // Outputs move out (the next iteration rebinds everything it needs); values that outlive one
    // iteration (constants, outer values), and a value the body returns twice, are shared instead.
    const auto& slots = plan.output_slots();
    for (size_t i = 0; i < slots.size(); ++i) {
      const bool returned_again = std::find(slots.begin() + i + 1, slots.end(), slots[i]) != slots.end();
      (*outputs)[i] = persistent_[slots[i]] || returned_again ? values_[slots[i]] : std::move(values_[slots[i]]);
    }
    for (size_t i = 0; i < plan.output_slots().size(); ++i) {
      const int slot = plan.output_slots()[i];
      if (!persistent_[slot]) values_[slot].Reset();
    }
    for (int slot : plan.input_slots()) {
      if (!persistent_[slot]) values_[slot].Reset();
    }
    return Status::Ok();
  }

 private:
  const PlannedSubgraph& sub_;
  RunState& run_;
  std::vector<Value> values_;
  std::vector<bool> persistent_;
};

}  // namespace

Result<std::unique_ptr<PlannedSubgraph>> PlannedSubgraph::Build(graph::Graph& graph,
                                                                const std::vector<std::string>& outer_scope,
                                                                const std::vector<int>& carried,
                                                                const KernelRegistry& registry,
                                                                const SessionOptions& options, int depth) {
  auto sub = std::unique_ptr<PlannedSubgraph>(new PlannedSubgraph());
  ONNXFLOW_ASSIGN_OR_RETURN(sub->plan_, Plan::Build(graph, outer_scope, registry, options, depth));
  const Plan& plan = *sub->plan_;
  const bool chain = plan.width() <= 1 || static_cast<int>(plan.nodes().size()) <= kInlineNodes;
  const ExecutionMode mode =
      options.mode == ExecutionMode::kSequential || chain ? ExecutionMode::kSequential : ExecutionMode::kDataflow;
  sub->executor_ = std::make_unique<Executor>(plan, mode);
  sub->carried_ = carried;
  for (const auto& in : graph.inputs) sub->input_names_.push_back(in.name);
  for (const auto& out : graph.outputs) sub->output_names_.push_back(out.name);
  return sub;
}

Result<std::unique_ptr<SubgraphFrame>> PlannedSubgraph::NewFrame(KernelContext& ctx) const {
  for (int j : carried_) {
    if (j < 0 || j >= ctx.implicit_input_count()) return Internal("a subgraph's outer-scope value is not wired");
  }
  return std::unique_ptr<SubgraphFrame>(new Frame(*this, ctx));
}

}  // namespace onnxflow
