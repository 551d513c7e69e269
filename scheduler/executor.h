// Runs a Plan over a value table: either as a TBB flow graph (a continue_node per task, fired
// when its predecessors finish) or in topological order on the calling thread. In dataflow mode
// with more than one thread, ModeChoice (mode_choice.h) may run a graph of tiny nodes in order.
//
// Flow graphs are built once per plan and reused: a run takes one from a lock-free pool (or builds
// one the first time that many runs are in flight), binds its value table, fires the roots and
// waits. Must be called inside the session's task_arena.
#pragma once

#include <memory>
#include <vector>

#include <oneapi/tbb/concurrent_queue.h>

#include "include/onnxflow/session.h"
#include "ops/framework/run_state.h"
#include "scheduler/mode_choice.h"
#include "scheduler/plan.h"

namespace onnxflow {

class FlowFrame;

class Executor {
 public:
  Executor(const Plan& plan, ExecutionMode mode);
  ~Executor();

  // `values` has plan.slot_count() entries with inputs, constants and outer values set.
  // `skip`, when given, has one entry per plan node: nodes marked non-zero do not run (their
  // outputs stay empty), for runs that asked for some of the outputs only.
  Status Run(std::vector<Value>& values, RunState& run, const std::vector<char>* skip = nullptr) const;

  ExecutionMode mode() const { return mode_; }

 private:
  Status RunSequential(std::vector<Value>& values, RunState& run, const std::vector<char>* skip) const;
  Status RunDataflow(std::vector<Value>& values, RunState& run, const std::vector<char>* skip) const;

  const Plan& plan_;
  ExecutionMode mode_;
  mutable ModeChoice choice_;  // dataflow mode: flow graph or in order, by the runs' times
  mutable tbb::concurrent_queue<FlowFrame*> idle_frames_;
  mutable tbb::concurrent_queue<std::unique_ptr<FlowFrame>> all_frames_;  // owns every frame
};

// Runs one node's kernel; the Status names the node on failure. Exceptions from a kernel (only
// std::bad_alloc is expected) become a Status here and go no further.
Status RunNode(const PlanNode& node, std::vector<Value>& values, RunState& run);

}  // namespace onnxflow
