// Whether a dataflow plan's next run goes through the flow graph or runs its nodes in order on
// the calling thread (each node still split over the cores inside its kernel).
//
// A flow graph pays to hand nodes between threads; it gains only where independent branches each
// hold enough work. On a graph of many tiny nodes the payment is the run: Silero VAD (about 100
// nodes of 1-5 us) took 0.166 ms a run at 2 threads through the flow graph and 0.121 in order, as
// at 1 thread. The plan cannot tell which graph is which (the costs are in the kernels and the
// shapes), so the runs decide: a run shorter than kSmallRunNs, or than kTinyNodeNs per node,
// starts a trial of kTrialRuns runs each way, alternated, and the faster mode's fastest run wins;
// a run past kLargeRunNs and four times the winner's (the shapes grew) sends an in-order plan back
// to the flow graph, to be tried again.
//
// The per-node bound catches long graphs of tiny nodes: an exporter's dynamic-shape plumbing (900
// Shape, Gather, Unsqueeze, Concat and Reshape nodes) took 1.69 ms a run through the flow graph at
// 2 threads, never under kSmallRunNs, and 0.73 ms in order.
#pragma once

#include <cstdint>
#include <mutex>

namespace onnxflow {

class ModeChoice {
 public:
  static constexpr int64_t kSmallRunNs = 1'000'000;
  static constexpr int64_t kTinyNodeNs = 10'000;
  static constexpr int64_t kLargeRunNs = 4 * kSmallRunNs;
  static constexpr int kTrialRuns = 8;

  // `nodes`: the plan's node count.
  explicit ModeChoice(int64_t nodes = 0) : nodes_(nodes) {}

  // True when the next run should run in order.
  bool Sequential() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (phase_ == Phase::kTrial) return trial_runs_ % 2 == 0;
    return phase_ == Phase::kSequential;
  }

  // A run of that mode took `ns`.
  void Record(bool sequential, int64_t ns) {
    std::lock_guard<std::mutex> lock(mutex_);
    switch (phase_) {
      case Phase::kDataflow:
        if (!sequential && (ns < kSmallRunNs || ns < nodes_ * kTinyNodeNs)) Start(Phase::kTrial);
        break;
      case Phase::kTrial: {
        int64_t& best = sequential ? best_sequential_ : best_dataflow_;
        if (best < 0 || ns < best) best = ns;
        if (++trial_runs_ == 2 * kTrialRuns) {
          const bool in_order = best_sequential_ >= 0 && best_sequential_ <= best_dataflow_;
          const int64_t winner = in_order ? best_sequential_ : best_dataflow_;
          Start(in_order ? Phase::kSequential : Phase::kSettled);
          winner_ns_ = winner;
        }
        break;
      }
      case Phase::kSequential:
        if (ns > kLargeRunNs && ns > 4 * winner_ns_) Start(Phase::kDataflow);
        break;
      case Phase::kSettled:
        break;
    }
  }

 private:
  enum class Phase { kDataflow, kTrial, kSequential, kSettled };

  void Start(Phase phase) {
    phase_ = phase;
    trial_runs_ = 0;
    best_sequential_ = best_dataflow_ = -1;
  }

  const int64_t nodes_;
  std::mutex mutex_;
  Phase phase_ = Phase::kDataflow;
  int64_t winner_ns_ = 0;  // the trial's fastest run
  int trial_runs_ = 0;
  int64_t best_sequential_ = -1, best_dataflow_ = -1;
};

}  // namespace onnxflow
