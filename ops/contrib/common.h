// Pieces the contrib kernels share (with ops/math/float_view.h's float views of 16-bit tensors):
// type checks whose messages name the op and the input, and the adapter that lets a com.microsoft op run on a
// kernel another family registered under other attribute names.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"
#include "ops/math/float_view.h"

namespace onnxflow {
namespace contrib {

// The types ONNX Runtime's CPU provider registers for these ops that onnxflow computes through
// float: float, and float16/bfloat16 widened on the way in and narrowed on the way out.
inline Status RequireFloatLike(const Tensor& t, const char* op, const char* input) {
  if (IsFloatLike(t.dtype())) return Status::Ok();
  return InvalidArgument(std::string(op) + ": input '" + input + "' must be float, float16 or bfloat16, got " +
                         DataTypeName(t.dtype()));
}

// A NodeProto rewritten for another kernel: what the kernel factory of one family needs to build
// from a com.microsoft node whose attributes carry the same meaning under other names.
using NodeRewrite = std::function<Status(const onnx::NodeProto& from, onnx::NodeProto* to)>;

// A factory that rewrites the node, then builds the kernel `target` registered (the rewritten
// proto lives only while the kernel is built: kernels parse their attributes at construction).
inline Result<KernelFactory> Adapt(const KernelRegistry& registry, const std::string& domain, const std::string& op,
                                   int version, NodeRewrite rewrite) {
  const KernelDef* def = registry.Find(domain, op, version);
  if (def == nullptr) {
    return Internal("contrib kernels register after the families they wrap; " + op + "-" +
                    std::to_string(version) + " of domain '" + domain + "' is not registered yet");
  }
  KernelFactory inner = def->factory;
  const int inner_version = version;
  return KernelFactory([inner, inner_version, rewrite](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    onnx::NodeProto node = info.node();
    if (rewrite) ONNXFLOW_RETURN_IF_ERROR(rewrite(info.node(), &node));
    std::vector<DataType> types;
    std::vector<const Tensor*> constants;
    for (int i = 0; i < info.input_count(); ++i) {
      types.push_back(info.input_type(i));
      constants.push_back(info.constant_input(i));
    }
    KernelInfo adapted(node, inner_version, std::move(types), std::move(constants), {});
    return inner(adapted);
  });
}

inline void SetAttr(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}
inline void SetAttr(onnx::NodeProto* node, const std::string& name, float value) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}
inline void RemoveAttr(onnx::NodeProto* node, const std::string& name) {
  auto* attrs = node->mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i) {
    if (attrs->Get(i).name() == name) attrs->DeleteSubrange(i, 1);
  }
}

}  // namespace contrib
}  // namespace onnxflow
