#include "scheduler/executor.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <new>

#include <oneapi/tbb/flow_graph.h>

#include "ops/framework/tsan_annotations.h"

namespace onnxflow {

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A small, stable number per OS thread for traces.
int ThreadNumber() {
  static std::atomic<int> next{0};
  thread_local const int number = next++;
  return number;
}

}  // namespace

Status RunNode(const PlanNode& node, std::vector<Value>& values, RunState& run) {
  KernelContext ctx(node.slots, values.data(), &run, node.description);
  const int64_t start = run.profiling() ? NowNs() : 0;
  Status s;
  try {
    s = node.kernel->Compute(ctx);
  } catch (const std::bad_alloc&) {
    s = ResourceExhausted("out of memory");
  } catch (const std::exception& e) {
    s = Internal(std::string("unexpected exception: ") + e.what());
  }
  if (run.profiling()) {
    NodeTiming timing{node.name, node.op_type, ThreadNumber(), start, NowNs(), {}};
    if (!node.slots.outputs.empty() && node.slots.outputs[0] >= 0 && values[node.slots.outputs[0]].is_tensor()) {
      timing.output_shape = values[node.slots.outputs[0]].tensor().shape();
    }
    run.Record(std::move(timing));
  }
  return s.ok() ? s : s.WithContext(node.description);
}

// One reusable flow graph for a plan, bound to one run's value table at a time.
class FlowFrame {
 public:
  explicit FlowFrame(const Plan& plan)
      : plan_(plan),
        remaining_(new std::atomic<int>[plan.slot_count()]),
        task_ready_(new char[plan.tasks().size()]) {
    using tbb::flow::continue_msg;
    tasks_.reserve(plan.tasks().size());
    for (size_t t = 0; t < plan.tasks().size(); ++t) {
      tasks_.push_back(std::make_unique<tbb::flow::continue_node<continue_msg>>(
          graph_, MakeTsanVisible([this, t](const continue_msg&) { RunTask(static_cast<int>(t)); })));
    }
    for (size_t t = 0; t < plan.tasks().size(); ++t) {
      for (int s : plan.tasks()[t].successors) tbb::flow::make_edge(*tasks_[t], *tasks_[s]);
    }
  }

  Status Run(std::vector<Value>& values, RunState& run, const std::vector<char>* skip) {
    values_ = &values;
    run_ = &run;
    skip_ = skip;
    failed_.store(false, std::memory_order_relaxed);
    error_ = Status::Ok();
    const auto& readers = plan_.reader_counts();
    for (int s = 0; s < plan_.slot_count(); ++s) remaining_[s].store(readers[s], std::memory_order_relaxed);
    for (int t : plan_.root_tasks()) HappensBefore(&task_ready_[t]);
    for (int t : plan_.root_tasks()) tasks_[t]->try_put(tbb::flow::continue_msg());
    graph_.wait_for_all();
    HappensAfter(&all_done_);
    values_ = nullptr;
    return error_;
  }

 private:
  void RunTask(int t) {
    HappensAfter(&task_ready_[t]);  // this run's setup, or the predecessors' outputs
    for (int i : plan_.tasks()[t].nodes) {
      const PlanNode& node = plan_.nodes()[i];
      if (!failed_.load(std::memory_order_relaxed) && (skip_ == nullptr || !(*skip_)[i])) {
        Status s = run_->CheckInterrupt();
        if (s.ok()) s = RunNode(node, *values_, *run_);
        if (!s.ok()) Fail(std::move(s));
      }
      // Successors still fire after a failure (they skip their kernels), so values are always
      // released and the graph always drains.
      for (int s : node.reads) {
        if (remaining_[s].fetch_sub(1, std::memory_order_acq_rel) == 1) (*values_)[s].Reset();
      }
      for (int s : node.slots.outputs) {
        if (s >= 0 && plan_.reader_counts()[s] == 0) (*values_)[s].Reset();
      }
    }
    for (int s : plan_.tasks()[t].successors) HappensBefore(&task_ready_[s]);
    HappensBefore(&all_done_);
  }

  void Fail(Status s) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!failed_.exchange(true)) error_ = std::move(s);
  }

  const Plan& plan_;
  tbb::flow::graph graph_;
  std::vector<std::unique_ptr<tbb::flow::continue_node<tbb::flow::continue_msg>>> tasks_;
  std::unique_ptr<std::atomic<int>[]> remaining_;
  // Happens-before edges that TBB makes but TSan cannot see (tsan_annotations.h): into each task
  // from Run's setup or from its predecessors, and from every task back to Run after
  // wait_for_all. Only their addresses are used.
  std::unique_ptr<char[]> task_ready_;
  char all_done_ = 0;
  std::vector<Value>* values_ = nullptr;
  RunState* run_ = nullptr;
  const std::vector<char>* skip_ = nullptr;
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;  // taken only on failure
  Status error_;
};

Executor::Executor(const Plan& plan, ExecutionMode mode)
    : plan_(plan), mode_(mode), choice_(static_cast<int64_t>(plan.nodes().size())) {}

Executor::~Executor() = default;

Status Executor::Run(std::vector<Value>& values, RunState& run, const std::vector<char>* skip) const {
  if (mode_ == ExecutionMode::kSequential || run.threads() <= 1) return RunSequential(values, run, skip);
  const bool sequential = choice_.Sequential();
  const int64_t start = NowNs();
  Status s = sequential ? RunSequential(values, run, skip) : RunDataflow(values, run, skip);
  if (s.ok()) choice_.Record(sequential, NowNs() - start);
  return s;
}

Status Executor::RunSequential(std::vector<Value>& values, RunState& run, const std::vector<char>* skip) const {
  const auto& nodes = plan_.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    ONNXFLOW_RETURN_IF_ERROR(run.CheckInterrupt());
    if (skip == nullptr || !(*skip)[i]) ONNXFLOW_RETURN_IF_ERROR(RunNode(nodes[i], values, run));
    for (int s : plan_.free_after()[i]) values[s].Reset();
  }
  return Status::Ok();
}

Status Executor::RunDataflow(std::vector<Value>& values, RunState& run, const std::vector<char>* skip) const {
  FlowFrame* frame = nullptr;
  if (!idle_frames_.try_pop(frame)) {
    auto fresh = std::make_unique<FlowFrame>(plan_);
    frame = fresh.get();
    all_frames_.push(std::move(fresh));
  }
  Status s = frame->Run(values, run, skip);
  idle_frames_.push(frame);
  return s;
}

}  // namespace onnxflow
