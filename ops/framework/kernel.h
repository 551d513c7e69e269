// The contract between the runtime and a kernel.
//
// A kernel object is built once at load from a KernelInfo (attributes parsed, weights pre-packed)
// and is immutable afterwards: Compute is const and runs concurrently for many runs. Everything a
// single run needs is in the KernelContext.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/run_state.h"

namespace onnxflow {

class Subgraph;

// Where one node's values live in a run's value table; -1 marks an absent (optional) value.
struct NodeSlots {
  std::vector<int> inputs;
  std::vector<int> implicit_inputs;  // outer-scope values the node's subgraphs read
  std::vector<int> outputs;
  // Per input: the plan found this node the value's last reader, after all its other readers,
  // so the node may take the storage over (KernelContext::ReusableInput). Empty: none.
  std::vector<char> reusable;
};

class KernelContext {
 public:
  KernelContext(const NodeSlots& slots, Value* values, RunState* run, const std::string& node_name)
      : slots_(slots), values_(values), run_(run), node_name_(node_name) {}

  int input_count() const { return static_cast<int>(slots_.inputs.size()); }
  // nullptr when the input is absent (not given, or given as an empty name).
  const Value* input(int i) const {
    if (i < 0 || i >= input_count() || slots_.inputs[i] < 0) return nullptr;
    return &values_[slots_.inputs[i]];
  }
  bool has_input(int i) const { return input(i) != nullptr; }
  // nullptr when absent or not a tensor.
  const Tensor* input_tensor(int i) const {
    const Value* v = input(i);
    return v != nullptr && v->is_tensor() ? &v->tensor() : nullptr;
  }
  // The tensor input i, or an error naming it when it is missing or not a tensor.
  Result<const Tensor*> RequireTensor(int i) const;

  int implicit_input_count() const { return static_cast<int>(slots_.implicit_inputs.size()); }
  const Value& implicit_input(int i) const { return values_[slots_.implicit_inputs[i]]; }

  int output_count() const { return static_cast<int>(slots_.outputs.size()); }
  // False when the model does not use output i (absent or empty name).
  bool has_output(int i) const { return i < output_count() && slots_.outputs[i] >= 0; }

  // Fresh, zero-filled storage for output i, checked against the run's limits. For an output the
  // model does not use, returns a scratch tensor that is dropped.
  Result<Tensor*> Allocate(int i, DataType dtype, const Shape& shape);
  // The same without the zero fill, for kernels that write every element (saves a pass over
  // memory on the hot path). Strings are still default-constructed.
  Result<Tensor*> AllocateUninitialized(int i, DataType dtype, const Shape& shape);
  // Sets output i to an existing value (Identity, Reshape and sequence ops share storage).
  void SetOutput(int i, Value value);
  // Input i's tensor when this node may write into it: no other node reads the value after or
  // alongside this one (NodeSlots::reusable) and nothing outside the run's table holds its
  // storage (a caller's tensor, a constant, another view). Null otherwise.
  Tensor* ReusableInput(int i);

  // ResourceExhausted, naming `what`, when a buffer of `shape` and `element_size`-byte elements that
  // the kernel sizes from input dims or attributes would pass the run's one-tensor limit
  // (max_tensor_bytes): an empty input, or pads and strides, can carry dims that no memory holds.
  Status CheckScratch(const Shape& shape, size_t element_size, const std::string& what) const;

  RunState& run() const { return *run_; }
  int threads() const { return run_->threads(); }
  const std::string& node_name() const { return node_name_; }

 private:
  Result<Tensor*> AllocateOutput(int i, DataType dtype, const Shape& shape, bool zero);

  const NodeSlots& slots_;
  Value* values_;
  RunState* run_;
  const std::string& node_name_;
  Tensor scratch_;  // output storage for outputs nobody reads
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual Status Compute(KernelContext& ctx) const = 0;
  // False for a constant input the kernel copied at load (packed weights) and never reads in
  // Compute: when no reader needs it at run time, the session lets the tensor go.
  virtual bool ReadsAtRun(int /*input*/) const { return true; }
};

}  // namespace onnxflow
