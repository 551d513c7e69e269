// Pieces the contrib kernels share (with ops/math/float_view.h's float views of 16-bit tensors):
// type checks whose messages name the op and the input, and the adapter that lets a com.microsoft op run on a
// kernel another family registered under other attribute names.
#pragma once

#include <algorithm>
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

// Q, K and V of `rows` tokens as dense float copies (rows x d, rows x kvd, rows x kvd) that rotary
// may rotate in place: split from a packed query (rows of d + 2 kvd, GroupQueryAttention's and
// SparseAttention's packed QKV) or copied from three inputs.
struct DenseQkv {
  std::vector<float> q, k, v;
};
inline DenseQkv CopyQkv(const Tensor& query, const Tensor* key, const Tensor* value, int64_t rows, int64_t d,
                        int64_t kvd, bool packed) {
  DenseQkv out{std::vector<float>(rows * d), std::vector<float>(rows * kvd), std::vector<float>(rows * kvd)};
  const FloatIn qi(query);
  if (packed) {
    const int64_t w = d + 2 * kvd;
    for (int64_t t = 0; t < rows; ++t) {
      std::copy(qi.data + t * w, qi.data + t * w + d, out.q.data() + t * d);
      std::copy(qi.data + t * w + d, qi.data + t * w + d + kvd, out.k.data() + t * kvd);
      std::copy(qi.data + t * w + d + kvd, qi.data + (t + 1) * w, out.v.data() + t * kvd);
    }
    return out;
  }
  const FloatIn ki(*key), vi(*value);
  std::copy(qi.data, qi.data + out.q.size(), out.q.begin());
  std::copy(ki.data, ki.data + out.k.size(), out.k.begin());
  std::copy(vi.data, vi.data + out.v.size(), out.v.begin());
  return out;
}

// Runs `kernel` on `inputs` (a none Value is an absent input) in place of the node's own and hands
// its outputs on as the node's: for a com.microsoft op whose inputs differ only in shape or place
// from what the kernel it runs on takes (Pad-1 on Pad-11, ConvTransposeWithDynamicPads on
// ConvTranspose). The run's state (limits, byte budget, threads) and the node's name stay the
// node's, so the inner kernel's allocations count against the same limits and its errors name it.
inline Status ComputeOn(const OpKernel& kernel, KernelContext& ctx, std::vector<Value> inputs) {
  const int in_count = static_cast<int>(inputs.size()), out_count = ctx.output_count();
  NodeSlots slots;
  for (int i = 0; i < in_count; ++i) slots.inputs.push_back(inputs[i].is_none() ? -1 : i);
  for (int o = 0; o < out_count; ++o) slots.outputs.push_back(ctx.has_output(o) ? in_count + o : -1);
  std::vector<Value> values = std::move(inputs);
  values.resize(static_cast<size_t>(in_count + out_count));
  KernelContext inner(slots, values.data(), &ctx.run(), ctx.node_name());
  ONNXFLOW_RETURN_IF_ERROR(kernel.Compute(inner));
  for (int o = 0; o < out_count; ++o) {
    if (ctx.has_output(o)) ctx.SetOutput(o, std::move(values[in_count + o]));
  }
  return Status::Ok();
}

// A NodeProto rewritten for another kernel: what the kernel factory of one family needs to build
// from a com.microsoft node whose attributes carry the same meaning under other names.
using NodeRewrite = std::function<Status(const onnx::NodeProto& from, onnx::NodeProto* to)>;

// A factory that rewrites the node, then builds the kernel `target` registered (the rewritten
// proto lives only while the kernel is built: kernels parse their attributes at construction).
ONNXFLOW_REGISTRAR inline Result<KernelFactory> Adapt(const KernelRegistry& registry, std::string_view domain,
                                                      std::string_view op_view, int version, NodeRewrite rewrite) {
  const std::string op(op_view);
  const KernelDef* def = registry.Find(std::string(domain), op, version);
  if (def == nullptr) {
    return Internal("contrib kernels register after the families they wrap; " + op + "-" +
                    std::to_string(version) + " of domain '" + std::string(domain) + "' is not registered yet");
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
