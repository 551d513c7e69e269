// The protocol-neutral core both front ends (http_frontend, grpc_frontend) call: readiness,
// metadata, and inference through the repository's sessions (Session::RunAsync, so a request
// waiting for admission holds no thread), with metrics, deadlines and graceful draining.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "include/onnxflow/session.h"
#include "server/api_status.h"
#include "server/metrics.h"
#include "server/model_repository.h"

namespace onnxflow::server {

inline constexpr const char* kServerName = "onnxflow";
inline constexpr const char* kServerVersion = "0.1.0";
inline constexpr const char* kPlatform = "onnxflow_onnx";

struct ServerOptions {
  int64_t max_request_bytes = int64_t{64} << 20;  // one request's body (HTTP) or message (gRPC)
};

struct TensorMetadata {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;  // -1 for a dynamic dimension
};

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions;
  std::string platform;
  std::vector<TensorMetadata> inputs;
  std::vector<TensorMetadata> outputs;
};

struct RequestedOutput {
  std::string name;
  bool binary = false;  // HTTP binary data extension; gRPC always answers in raw contents
};

struct InferRequest {
  std::string model_name;
  std::string model_version;  // "": the newest
  std::string id;
  std::vector<NamedValue> inputs;
  std::vector<RequestedOutput> outputs;  // empty: every output, in the model's order
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct InferResponse {
  std::string model_name;
  std::string model_version;
  std::string id;
  std::vector<NamedValue> outputs;  // as requested (or all)
};

using InferCallback = std::function<void(ApiStatus, InferResponse)>;

class InferenceServer {
 public:
  InferenceServer(std::string repository_root, ServerOptions options);

  ModelRepository& repository() { return repository_; }
  Metrics& metrics() { return metrics_; }
  const ServerOptions& options() const { return options_; }

  // Ready once the repository's first load is done, until draining begins.
  bool ready() const { return ready_.load() && !draining_.load(); }
  void set_ready(bool ready) { ready_ = ready; }
  static std::vector<std::string> Extensions();

  ApiStatus GetModelMetadata(const std::string& name, const std::string& version, ModelMetadata* out) const;
  // Whether that model version is loaded (unknown -> false, with kNotFound in `error` when asked).
  bool ModelReady(const std::string& name, const std::string& version) const;

  // Answers exactly once: now (on this thread) for a request refused before running, else from
  // the thread that finished its run.
  void Infer(InferRequest request, Protocol protocol, InferCallback done);

  // Graceful shutdown: new inference is refused as unavailable; WaitIdle returns once every
  // accepted request has been answered (or `until` passes: false).
  void BeginDrain() { draining_ = true; }
  bool WaitIdle(std::chrono::steady_clock::time_point until);
  int64_t in_flight() const { return in_flight_.load(); }

 private:
  ApiStatus Validate(const LoadedModel& model, const InferRequest& request) const;
  void Finished();

  const ServerOptions options_;
  Metrics metrics_;
  ModelRepository repository_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> in_flight_{0};
  std::mutex idle_mutex_;
  std::condition_variable idle_;
};

}  // namespace onnxflow::server
