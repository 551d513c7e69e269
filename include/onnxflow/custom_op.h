// Custom operators: kernels a host writes for ops of its own domains, registered on a session's
// options. The contract is the built-in kernels' own: a kernel is built once per node at load
// (attributes parsed, weights prepared), is immutable afterwards, and computes with a const
// `Compute` that any number of runs may call at once.
//
//   class MyScale : public onnxflow::OpKernel {
//    public:
//     explicit MyScale(const onnxflow::KernelInfo& info) : factor_(info.GetFloat("factor", 1.0f)) {}
//     onnxflow::Status Compute(onnxflow::KernelContext& ctx) const override {
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
//   ops->Add<MyScale>("com.example", "Scale", 1, onnxflow::kOpenEnded);
//   onnxflow::SessionOptions options;
//   options.custom_ops = ops;   // one set may serve many sessions
//   auto session = onnxflow::Session::Load("model.onnx", options);
//
// The model imports the domain ("com.example", version v); a node is served by the kernel whose
// range [since, until] holds v. Nodes inside If/Loop/Scan bodies find custom kernels too. A
// custom kernel may not cover an op and version a built-in kernel already serves: Load refuses
// the set, naming both. Everything here is linked statically with //include/onnxflow; nothing
// is registered by static initializers.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "include/onnxflow/session.h"
#include "ops/framework/kernel.h"       // OpKernel, KernelContext
#include "ops/framework/kernel_info.h"  // KernelInfo: attributes, input types, constant inputs
#include "ops/framework/registry.h"     // KernelFactory, Make<K>(), Create<K>(), kOpenEnded

namespace onnxflow {

class CustomOpSet {
 public:
  // Serves `op_type` of `domain` for the model's opset versions since..until (kOpenEnded for
  // "and every later one"). `factory` builds one kernel per node and may refuse the node with a
  // Status (say, an attribute it does not support).
  Status Add(const std::string& domain, const std::string& op_type, int since_version, int until_version,
             KernelFactory factory);
  // For kernels constructed from the KernelInfo alone.
  template <typename K>
  Status Add(const std::string& domain, const std::string& op_type, int since_version, int until_version) {
    return Add(domain, op_type, since_version, until_version, Make<K>());
  }

  // The built-in kernels and these, built on first use and shared by every session of the set.
  // Add after that point is refused.
  Result<const KernelRegistry*> Registry() const;

 private:
  mutable std::mutex mutex_;
  std::vector<KernelDef> defs_;
  mutable std::shared_ptr<const KernelRegistry> merged_;
};

}  // namespace onnxflow
