// The whole public API a host service needs: load a model once, run it from any number of threads.
//
//   auto session = onnxflow::Session::Load("model.onnx");
//   if (!session.ok()) return Fail(session.status());
//   auto outputs = session->Run({{"x", onnxflow::Tensor::FromVector<float>({1, 4}, {1, 2, 3, 4})}});
//   if (outputs.ok()) Use((*outputs)[0].value.tensor());
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

enum class ExecutionMode {
  kDataflow,    // a TBB flow graph fires each node when its inputs are ready
  kSequential,  // the same plan in topological order on the calling thread (for comparison)
};

// Guards for models the host did not write. Exceeding one ends that run (or load) with a
// ResourceExhausted Status naming the limit and the node.
struct SessionLimits {
  int64_t max_tensor_bytes = int64_t{4} << 30;        // one tensor
  int64_t max_run_bytes = int64_t{16} << 30;          // everything one run allocates at once
  int max_subgraph_depth = 64;                        // If/Loop/Scan nesting
  // One Loop node, one run. An endless Loop of a trivial body reaches it in well under 10 s
  // (about 1 s on one core); a model that truly needs more iterations raises it.
  int64_t max_loop_iterations = int64_t{1} << 20;
};

struct SessionOptions {
  int threads = 0;  // cores the session may use; 0 = all
  ExecutionMode mode = ExecutionMode::kDataflow;
  bool optimize = true;  // constant folding, fusions, dead-node removal
  SessionLimits limits;
};

// One node's execution, for profiling and traces.
struct NodeTiming {
  std::string node;      // the node's name (or its op type when unnamed)
  std::string op_type;
  int thread = 0;        // a small number per OS thread (stable within the process)
  int64_t start_ns = 0;  // steady_clock time
  int64_t end_ns = 0;
  std::vector<int64_t> output_shape;  // the first output's dimensions (empty when not a tensor)
};

// Filled during a run when RunOptions::profile points at it (nodes of subgraphs included).
struct RunProfile {
  std::vector<NodeTiming> nodes;
};

struct RunOptions {
  // The run ends with DeadlineExceeded when this passes (checked between nodes and iterations).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // The run ends with Cancelled soon after this becomes true. The host owns the flag.
  const std::atomic<bool>* cancel = nullptr;
  // When set, every node's timing is appended here (costs a clock read and a lock per node).
  RunProfile* profile = nullptr;
};

struct NamedValue {
  std::string name;
  Value value;
};

// What the model declares for one graph input or output.
struct ValueInfo {
  std::string name;
  Value::Kind kind = Value::Kind::kTensor;
  DataType dtype = DataType::kUndefined;   // element type (of the tensor, or the sequence's)
  std::vector<int64_t> shape;              // -1 for a dynamic dimension
  std::vector<std::string> dim_names;      // the symbolic name of each dynamic dimension, or ""
  bool has_shape = false;                  // false when the model gives no rank
  bool optional = false;                   // declared as an optional type
};

class SessionImpl;

class Session {
 public:
  static Result<Session> Load(const std::string& path, const SessionOptions& options = {});
  // `directory` resolves external data; "" refuses models that need it.
  static Result<Session> LoadFromBytes(const std::string& bytes, const SessionOptions& options = {},
                                       const std::string& directory = "");

  // Const and thread-safe: any number of threads may run one session at once.
  // Inputs are matched by name; the outputs come in the graph's output order.
  Result<std::vector<NamedValue>> Run(const std::vector<NamedValue>& inputs,
                                      const RunOptions& options = {}) const;

  // Starts a run in the session's thread pool and returns at once; `done` is called on a pool
  // thread with the result. The run keeps the loaded model alive until it is done.
  using RunCallback = std::function<void(Result<std::vector<NamedValue>>)>;
  void RunAsync(std::vector<NamedValue> inputs, RunOptions options, RunCallback done) const;

  // Graph inputs the caller must (or, with an initializer, may) supply, and the outputs.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

 private:
  explicit Session(std::shared_ptr<const SessionImpl> impl);
  std::shared_ptr<const SessionImpl> impl_;
};

}  // namespace onnxflow
