// Prometheus text metrics: per model, requests and failures by protocol, request latency and
// batch size histograms, and the queue depth (requests accepted and not yet answered).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace onnxflow::server {

enum class Protocol { kHttp = 0, kGrpc = 1 };
constexpr int kProtocols = 2;
const char* ProtocolName(Protocol p);

// Cumulative buckets, lock-free to observe (one atomic add per bucket hit and one for the sum).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Lines "NAME_bucket{LABELS,le=...} N", "NAME_sum", "NAME_count".
  void Render(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // one per bound, then +Inf
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_micros_{0};  // sum in millionths, so it can be an integer atomic
};

struct ModelMetrics {
  ModelMetrics();
  std::atomic<uint64_t> requests[kProtocols] = {};
  std::atomic<uint64_t> failures[kProtocols] = {};
  std::atomic<int64_t> queue_depth{0};  // accepted, not yet answered (waiting or running)
  Histogram latency;                    // seconds, accepted to answered
  Histogram batch_size;                 // requests merged per run (1 without dynamic batching)
};

class Metrics {
 public:
  // Lives as long as the Metrics (a model's figures survive its unload and reload).
  ModelMetrics& ForModel(const std::string& name);
  // `ready` gives each known model's readiness for the onnxflow_model_ready gauge.
  std::string Render(const std::map<std::string, bool>& ready) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<ModelMetrics>> models_;
};

}  // namespace onnxflow::server
