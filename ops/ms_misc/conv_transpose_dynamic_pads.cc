// com.microsoft ConvTransposeWithDynamicPads (version 1): ConvTranspose whose pads come as input 2
// (int64, [2 * spatial rank]: begins, then ends) instead of an attribute; B moves to input 3. As
// ONNX Runtime 1.30 runs it: float only, no 'pads' or 'output_shape' attribute (its schema has
// neither), negative pads refused, auto_pad SAME_* / VALID overriding the input's pads as they
// override ConvTranspose's attribute. An absent Pads input (ONNX Runtime aborts on it) means zeros.
//
// The convolution itself is onnxflow's ConvTranspose kernel (ops/math/conv_transpose.cc), built
// with the pads as its attribute: once at load when Pads is a constant (W packed once, as for
// ConvTranspose), else per run from the values (no constant W then, so nothing is packed per run).
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/math/register.h"
#include "ops/contrib/common.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

// The opset the inner ConvTranspose is built at: 11 is the version whose attributes (output_padding,
// auto_pad, dilations, group, kernel_shape, strides, pads) this op shares.
constexpr int kConvTransposeVersion = 11;

class ConvTransposeDynamicPadsKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, const KernelFactory& conv_transpose) {
    for (const char* attr : {"pads", "output_shape"}) {
      if (info.has_attribute(attr)) {
        return InvalidArgument(std::string("ConvTransposeWithDynamicPads: attribute '") + attr +
                               "' is not part of the op (pads come as input 'Pads'; ONNX Runtime refuses it too)");
      }
    }
    if (info.input_count() < 2 || info.input_count() > 4) {
      return InvalidArgument("ConvTransposeWithDynamicPads: takes 2 to 4 inputs (X, W, Pads, B), got " +
                             std::to_string(info.input_count()));
    }
    for (int i : {0, 1, 3}) {
      const DataType t = info.input_type(i);
      if (t != DataType::kUndefined && t != DataType::kFloat) {
        return InvalidArgument(std::string("ConvTransposeWithDynamicPads: input '") + kInputNames[i] +
                               "' must be float (the one type ONNX Runtime registers), got " + DataTypeName(t));
      }
    }
    auto k = std::unique_ptr<ConvTransposeDynamicPadsKernel>(new ConvTransposeDynamicPadsKernel(info, conv_transpose));
    // Constant pads: the whole ConvTranspose is known at load.
    if (const Tensor* pads = info.constant_input(2); pads != nullptr || !info.has_input(2)) {
      std::vector<int64_t> values;
      if (pads != nullptr) {
        ONNXFLOW_ASSIGN_OR_RETURN(values, PadValues(*pads));
      }
      ONNXFLOW_ASSIGN_OR_RETURN(k->fixed_, k->Build(values, &info));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
    const Tensor* b = ctx.input_tensor(3);
    for (const auto& [t, i] : {std::pair<const Tensor*, int>{x, 0}, {w, 1}, {b, 3}}) {
      if (t != nullptr && t->dtype() != DataType::kFloat) {
        return InvalidArgument(std::string("ConvTransposeWithDynamicPads: input '") + kInputNames[i] +
                               "' must be float, got " + DataTypeName(t->dtype()));
      }
    }
    const size_t spatial = x->rank() >= 3 ? static_cast<size_t>(x->rank() - 2) : 0;
    std::unique_ptr<OpKernel> per_run;
    const OpKernel* conv = fixed_.get();
    std::vector<int64_t> pads;
    if (const Tensor* p = ctx.input_tensor(2); p != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(pads, PadValues(*p));
      if (!pads.empty() && pads.size() != 2 * spatial) {
        return InvalidArgument("ConvTransposeWithDynamicPads: input 'Pads' holds " + std::to_string(pads.size()) +
                               " values; X " + ShapeToString(x->shape()) + " needs " + std::to_string(2 * spatial) +
                               " (a begin and an end per spatial axis)");
      }
      if (fixed_ == nullptr) {
        ONNXFLOW_ASSIGN_OR_RETURN(per_run, Build(pads, nullptr));
        conv = per_run.get();
      }
    }
    if (conv == nullptr) return Internal("ConvTransposeWithDynamicPads: no ConvTranspose kernel was built");
    // The inner kernel's messages speak of ConvTranspose and its attribute 'pads': say where they came from.
    return contrib::ComputeOn(*conv, ctx, {Value(*x), Value(*w), b != nullptr ? Value(*b) : Value()})
        .WithContext("ConvTransposeWithDynamicPads (input 'Pads' as ConvTranspose's 'pads')");
  }

 private:
  static constexpr const char* kInputNames[] = {"X", "W", "Pads", "B"};

  ConvTransposeDynamicPadsKernel(const KernelInfo& info, KernelFactory conv_transpose)
      : node_(info.node()), conv_transpose_(std::move(conv_transpose)) {
    // The inner node: this one's attributes, its inputs X, W, B.
    node_.clear_input();
    node_.add_input(info.has_input(0) ? info.node().input(0) : "");
    node_.add_input(info.has_input(1) ? info.node().input(1) : "");
    node_.add_input(info.has_input(3) ? info.node().input(3) : "");
  }

  static Result<std::vector<int64_t>> PadValues(const Tensor& pads) {
    if (pads.dtype() != DataType::kInt64 || pads.rank() != 1) {
      return InvalidArgument("ConvTransposeWithDynamicPads: input 'Pads' must be a 1-D int64 tensor, got " +
                             std::string(DataTypeName(pads.dtype())) + " " + ShapeToString(pads.shape()));
    }
    std::vector<int64_t> values(pads.data<int64_t>(), pads.data<int64_t>() + pads.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] < 0) {
        return InvalidArgument("ConvTransposeWithDynamicPads: input 'Pads' must be non-negative, got pads[" +
                               std::to_string(i) + "] = " + std::to_string(values[i]));
      }
    }
    return values;
  }

  // The ConvTranspose kernel for these pads. `load` is the node's KernelInfo when building at load
  // (input types and a constant W to pack); per run, nothing is constant.
  Result<std::unique_ptr<OpKernel>> Build(const std::vector<int64_t>& pads, const KernelInfo* load) const {
    onnx::NodeProto node = node_;
    if (!pads.empty()) {
      auto* a = node.add_attribute();
      a->set_name("pads");
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : pads) a->add_ints(v);
    }
    std::vector<DataType> types(3, DataType::kUndefined);
    std::vector<const Tensor*> constants(3, nullptr);
    if (load != nullptr) {
      types = {load->input_type(0), load->input_type(1), load->input_type(3)};
      constants = {load->constant_input(0), load->constant_input(1), load->constant_input(3)};
    }
    KernelInfo inner(node, kConvTransposeVersion, std::move(types), std::move(constants), {});
    auto kernel = conv_transpose_(inner);
    if (!kernel.ok()) return kernel.status().WithContext("ConvTransposeWithDynamicPads");
    ONNXFLOW_RETURN_IF_ERROR(inner.attribute_status());
    return kernel;
  }

  onnx::NodeProto node_;
  KernelFactory conv_transpose_;
  std::unique_ptr<OpKernel> fixed_;  // built at load when Pads is constant or absent
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterConvTransposeWithDynamicPads(KernelRegistry& registry) {
  // The ConvTranspose kernel from a registry of its own: this family does not depend on the order
  // in which the families register.
  KernelRegistry math;
  ONNXFLOW_RETURN_IF_ERROR(RegisterConvTransposeKernels(math));
  const KernelDef* def = math.Find(kOnnxDomain, "ConvTranspose", kConvTransposeVersion);
  if (def == nullptr) return Internal("ConvTranspose-11 is not registered by ops/math");
  return registry.Register(kMsDomain, "ConvTransposeWithDynamicPads", 1, kOpenEnded,
                           Make<ConvTransposeDynamicPadsKernel>(def->factory));
}

}  // namespace onnxflow
