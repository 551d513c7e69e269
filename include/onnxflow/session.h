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
#include <utility>
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

class CustomOpSet;  // include/onnxflow/custom_op.h

struct SessionOptions {
  int threads = 0;  // cores the session may use; 0 = all
  ExecutionMode mode = ExecutionMode::kDataflow;
  bool optimize = true;  // constant folding, fusions, dead-node removal
  SessionLimits limits;
  // Kernels the host implements for ops of its own domains (or to replace built-in ones): looked
  // up before the built-in registry, for nodes of the main graph and of every subgraph.
  std::shared_ptr<const CustomOpSet> custom_ops;
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

// The value named `name` in `values` (a Run's outputs, say), or nullptr when none is.
const Value* FindValue(const std::vector<NamedValue>& values, const std::string& name);

// What the model file says about itself (ModelProto fields), for hosts that log or check them.
struct ModelMetadata {
  std::string producer_name;     // "pytorch", "tf2onnx", ...
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  int64_t ir_version = 0;
  std::string doc_string;        // the model's
  std::string graph_name;
  std::string graph_doc_string;
  std::vector<std::pair<std::string, std::string>> metadata_props;  // in file order
  std::vector<std::pair<std::string, int64_t>> opset_imports;       // (domain, version); "" = ai.onnx
};

// What the model declares for one graph input or output.
struct ValueInfo {
  std::string name;
  Value::Kind kind = Value::Kind::kTensor;
  DataType dtype = DataType::kUndefined;   // element type (of the tensor, or the sequence's; a map's values)
  DataType map_key = DataType::kUndefined; // a map's key type (kind kMap, or a sequence of maps)
  std::vector<int64_t> shape;              // -1 for a dynamic dimension
  std::vector<std::string> dim_names;      // the symbolic name of each dynamic dimension, or ""
  bool has_shape = false;                  // false when the model gives no rank
  bool optional = false;                   // declared as an optional type
  bool unread = false;                     // read by no node (ONNX Runtime saves models with such inputs): a
                                           // run need not give it
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
  // Computes only `output_names` (graph outputs, any subset, in this order): nodes that feed none
  // of them do not run. An unknown name is InvalidArgument.
  Result<std::vector<NamedValue>> Run(const std::vector<NamedValue>& inputs,
                                      const std::vector<std::string>& output_names,
                                      const RunOptions& options = {}) const;

  // Caller-provided output buffers (ONNX Runtime's IO binding). `outputs` names the outputs to
  // compute (as Run with names does) and, for each, may hold a tensor of the output's type and
  // shape: the result is written into its bytes (owned or Borrow-ed memory the caller keeps), so
  // a host can reuse one buffer across runs. An entry without a value gets the result as Run
  // would return it. A buffer whose type or shape does not fit the result is InvalidArgument
  // naming the output and both shapes, and nothing is written into it.
  Status RunInto(const std::vector<NamedValue>& inputs, std::vector<NamedValue>& outputs,
                 const RunOptions& options = {}) const;

  // Starts a run in the session's thread pool and returns at once; `done` is called on a pool
  // thread with the result. The run keeps the loaded model alive until it is done.
  using RunCallback = std::function<void(Result<std::vector<NamedValue>>)>;
  void RunAsync(std::vector<NamedValue> inputs, RunOptions options, RunCallback done) const;

  // Graph inputs the caller must (or, with an initializer, may) supply, and the outputs.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const ModelMetadata& metadata() const;

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

 private:
  explicit Session(std::shared_ptr<const SessionImpl> impl);
  std::shared_ptr<const SessionImpl> impl_;
};

}  // namespace onnxflow
