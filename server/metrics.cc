#include "server/metrics.h"

#include <cmath>
#include <cstdio>

namespace onnxflow::server {

const char* ProtocolName(Protocol p) { return p == Protocol::kHttp ? "http" : "grpc"; }

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i] = 0;
}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<uint64_t>(std::llround(std::max(0.0, value) * 1e6)), std::memory_order_relaxed);
}

namespace {
std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
}  // namespace

void Histogram::Render(const std::string& name, const std::string& labels, std::string* out) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    const std::string le = i < bounds_.size() ? Number(bounds_[i]) : "+Inf";
    *out += name + "_bucket{" + labels + ",le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  *out += name + "_sum{" + labels + "} " + Number(sum_micros_.load(std::memory_order_relaxed) * 1e-6) + "\n";
  *out += name + "_count{" + labels + "} " + std::to_string(count_.load(std::memory_order_relaxed)) + "\n";
}

ModelMetrics::ModelMetrics()
    : latency({0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10}),
      batch_size({1, 2, 4, 8, 16, 32, 64}) {}

ModelMetrics& Metrics::ForModel(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = models_[name];
  if (!slot) slot = std::make_unique<ModelMetrics>();
  return *slot;
}

std::string Metrics::Render(const std::map<std::string, bool>& ready) const {
  std::string out;
  std::lock_guard<std::mutex> lock(mutex_);
  auto label = [](const std::string& model) {
    std::string escaped;
    for (char c : model) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c == '\n' ? 'n' : c;
    }
    return "model=\"" + escaped + "\"";
  };
  out += "# HELP onnxflow_model_ready 1 when the model is loaded and serving.\n# TYPE onnxflow_model_ready gauge\n";
  for (const auto& [name, r] : ready) out += "onnxflow_model_ready{" + label(name) + "} " + (r ? "1" : "0") + "\n";
  out += "# HELP onnxflow_requests_total Inference requests received.\n# TYPE onnxflow_requests_total counter\n";
  for (const auto& [name, m] : models_) {
    for (int p = 0; p < kProtocols; ++p) {
      out += "onnxflow_requests_total{" + label(name) + ",protocol=\"" + ProtocolName(static_cast<Protocol>(p)) +
             "\"} " + std::to_string(m->requests[p].load()) + "\n";
    }
  }
  out += "# HELP onnxflow_request_failures_total Inference requests answered with an error.\n"
         "# TYPE onnxflow_request_failures_total counter\n";
  for (const auto& [name, m] : models_) {
    for (int p = 0; p < kProtocols; ++p) {
      out += "onnxflow_request_failures_total{" + label(name) + ",protocol=\"" +
             ProtocolName(static_cast<Protocol>(p)) + "\"} " + std::to_string(m->failures[p].load()) + "\n";
    }
  }
  out += "# HELP onnxflow_queue_depth Requests accepted and not yet answered (waiting or running).\n"
         "# TYPE onnxflow_queue_depth gauge\n";
  for (const auto& [name, m] : models_) out += "onnxflow_queue_depth{" + label(name) + "} " + std::to_string(m->queue_depth.load()) + "\n";
  out += "# HELP onnxflow_request_duration_seconds Time from accepting a request to answering it.\n"
         "# TYPE onnxflow_request_duration_seconds histogram\n";
  for (const auto& [name, m] : models_) m->latency.Render("onnxflow_request_duration_seconds", label(name), &out);
  out += "# HELP onnxflow_batch_size Requests merged into one run (dynamic batching; 1 otherwise).\n"
         "# TYPE onnxflow_batch_size histogram\n";
  for (const auto& [name, m] : models_) m->batch_size.Render("onnxflow_batch_size", label(name), &out);
  return out;
}

}  // namespace onnxflow::server
