// A subgraph (If branch, Loop or Scan body) prepared as its own Plan at load.
//
// Cost rule for how a body runs: a flow graph pays a few microseconds to fire; it only helps when
// the body has independent branches to run at once. So a body whose DAG is a chain (width 1) or
// has at most kInlineNodes nodes runs inline in topological order on the calling thread; wider
// bodies run as a nested flow graph in the same arena (the calling task waits inside the arena,
// so its thread keeps executing work). Loops reuse one frame across iterations.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/framework/subgraph.h"
#include "scheduler/executor.h"
#include "scheduler/plan.h"

namespace onnxflow {

class PlannedSubgraph : public Subgraph {
 public:
  static constexpr int kInlineNodes = 4;

  // `outer_scope[j]` is read from the calling node's implicit input `carried[j]`.
  static Result<std::unique_ptr<PlannedSubgraph>> Build(graph::Graph& graph,
                                                        const std::vector<std::string>& outer_scope,
                                                        const std::vector<int>& carried,
                                                        const KernelRegistry& registry,
                                                        const SessionOptions& options, int depth);

  const std::vector<std::string>& input_names() const override { return input_names_; }
  const std::vector<std::string>& output_names() const override { return output_names_; }
  const std::vector<ValueInfo>& output_infos() const override { return plan_->outputs(); }
  Result<std::unique_ptr<SubgraphFrame>> NewFrame(KernelContext& ctx) const override;

  const Plan& plan() const { return *plan_; }
  const Executor& executor() const { return *executor_; }
  const std::vector<int>& carried() const { return carried_; }

 private:
  std::unique_ptr<Plan> plan_;
  std::unique_ptr<Executor> executor_;
  std::vector<int> carried_;
  std::vector<std::string> input_names_, output_names_;
};

}  // namespace onnxflow
