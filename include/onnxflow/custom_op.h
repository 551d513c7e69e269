// Custom operators: kernels a host writes for ops of its own domains, registered on a session's
// options. The contract is the built-in kernels' own: a kernel is built once per node at load
// (attributes parsed, weights prepared), is immutable afterwards, and computes with a const
// `Compute` that any number of runs may call at once.
//
//   class MyScale : public onnxflow::CustomKernel {
//    public:
//     explicit MyScale(const onnxflow::CustomKernelInfo& info) : factor_(info.GetFloat("factor", 1.0f)) {}
//     onnxflow::Status Compute(onnxflow::CustomKernelContext& ctx) const override {
//       ONNXFLOW_ASSIGN_OR_RETURN(const onnxflow::Tensor* x, ctx.RequireTensor(0));
//       ONNXFLOW_ASSIGN_OR_RETURN(onnxflow::Tensor* y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
//       for (int64_t i = 0; i < x->size(); ++i) y->mutable_data<float>()[i] = x->data<float>()[i] * factor_;
//       return onnxflow::Status::Ok();
//     }
//    private:
//     const float factor_;
//   };
//
//   auto ops = std::make_shared<onnxflow::CustomOpSet>();
//   ops->Add<MyScale>("com.example", "Scale", 1, onnxflow::CustomOpSet::kOpenEnded);
//   onnxflow::SessionOptions options;
//   options.custom_ops = ops;   // one set may serve many sessions
//   auto session = onnxflow::Session::Load("model.onnx", options);
//
// The model imports the domain ("com.example", version v); a node is served by the kernel whose
// range [since, until] holds v. Nodes inside If/Loop/Scan bodies find custom kernels too. A
// custom kernel may not cover an op and version a built-in kernel already serves: Load refuses
// the set, naming both. Nothing is registered by static initializers.
//
// This header needs only the other public headers: a kernel written against it links with the
// shared library (libonnxflow.so, pkg-config onnxflow) as well as statically. The runtime reaches
// the kernel, and the kernel the runtime, only through the virtual functions below, so no
// internal symbol crosses the library's boundary. An exception thrown by a factory or by Compute
// becomes an Internal status naming the node; none crosses back into the runtime.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "include/onnxflow/session.h"
#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

// What a factory sees of its node at load.
class CustomKernelInfo {
 public:
  virtual const std::string& name() const = 0;  // the node's name (may be empty)
  virtual const std::string& op_type() const = 0;
  // The model's opset version for the node's domain: kernels that span versions switch on it.
  virtual int opset() const = 0;

  virtual int input_count() const = 0;
  virtual bool has_input(int i) const = 0;  // false for an absent optional input
  virtual int output_count() const = 0;
  virtual bool has_output(int i) const = 0;
  // kUndefined when not known at load.
  virtual DataType input_type(int i) const = 0;
  // The value of input i when it is an initializer or a folded constant, else nullptr; valid
  // during the factory call only (copy or pack what the kernel keeps).
  virtual const Tensor* constant_input(int i) const = 0;

  virtual bool has_attribute(const std::string& name) const = 0;
  // An attribute of another type than the getter reads is refused at load with a message naming
  // it (the default is not silently used).
  virtual int64_t GetInt(const std::string& name, int64_t default_value) const = 0;
  virtual float GetFloat(const std::string& name, float default_value) const = 0;
  virtual std::string GetString(const std::string& name, const std::string& default_value) const = 0;
  virtual std::vector<int64_t> GetInts(const std::string& name, std::vector<int64_t> default_value) const = 0;
  virtual std::vector<float> GetFloats(const std::string& name, std::vector<float> default_value) const = 0;
  virtual std::vector<std::string> GetStrings(const std::string& name,
                                              std::vector<std::string> default_value) const = 0;
  // A TENSOR attribute, or an error naming it when it is missing.
  virtual Result<Tensor> GetTensor(const std::string& name) const = 0;

 protected:
  ~CustomKernelInfo() = default;  // the runtime owns it
};

// What Compute sees of one run of its node.
class CustomKernelContext {
 public:
  virtual int input_count() const = 0;
  // nullptr when input i is absent.
  virtual const Value* input(int i) const = 0;
  // nullptr when absent or not a tensor.
  virtual const Tensor* input_tensor(int i) const = 0;
  // The tensor input i, or an error naming it when it is missing or not a tensor.
  virtual Result<const Tensor*> RequireTensor(int i) const = 0;

  virtual int output_count() const = 0;
  // False when the model does not use output i.
  virtual bool has_output(int i) const = 0;
  // Fresh zero-filled storage for output i, checked against the run's limits.
  virtual Result<Tensor*> Allocate(int i, DataType dtype, const Shape& shape) = 0;
  // The same without the zero fill, for kernels that write every element.
  virtual Result<Tensor*> AllocateUninitialized(int i, DataType dtype, const Shape& shape) = 0;
  // Sets output i to an existing value (a view of an input, a sequence).
  virtual void SetOutput(int i, Value value) = 0;

  virtual const std::string& node_name() const = 0;
  // The cores this run may use (a kernel may split its work that many ways).
  virtual int threads() const = 0;

 protected:
  ~CustomKernelContext() = default;  // the runtime owns it
};

// A host's kernel: built once per node, immutable afterwards, Compute const and reentrant.
class CustomKernel {
 public:
  virtual ~CustomKernel() = default;
  virtual Status Compute(CustomKernelContext& ctx) const = 0;
};

// Builds one kernel per node; may refuse the node with a Status (say, an attribute it does not support).
using CustomKernelFactory = std::function<Result<std::unique_ptr<CustomKernel>>(const CustomKernelInfo&)>;

// A factory for kernels whose constructor takes the CustomKernelInfo, then `args` (the same for every node).
template <typename K, typename... Args>
CustomKernelFactory MakeCustomKernel(Args... args) {
  return [args...](const CustomKernelInfo& info) -> Result<std::unique_ptr<CustomKernel>> {
    return std::unique_ptr<CustomKernel>(new K(info, args...));
  };
}

class CustomOpSet {
 public:
  // The last version of a range that stays open ("this version and every later one").
  static constexpr int kOpenEnded = INT_MAX;

  CustomOpSet();
  ~CustomOpSet();
  CustomOpSet(const CustomOpSet&) = delete;
  CustomOpSet& operator=(const CustomOpSet&) = delete;

  // Serves `op_type` of `domain` for the model's opset versions since..until (kOpenEnded for
  // "and every later one"). Refused once a session has used the set.
  Status Add(const std::string& domain, const std::string& op_type, int since_version, int until_version,
             CustomKernelFactory factory);
  // For kernels constructed from the CustomKernelInfo alone.
  template <typename K>
  Status Add(const std::string& domain, const std::string& op_type, int since_version, int until_version) {
    return Add(domain, op_type, since_version, until_version, MakeCustomKernel<K>());
  }

 private:
  friend class CustomOpSetAccess;  // the runtime's view (scheduler/custom_op.h)
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace onnxflow
