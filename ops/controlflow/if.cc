// If: runs only the taken branch, as a nested run of its prepared subgraph. Outer-scope values
// reach the branch through the node's implicit inputs, without copies.
#include "ops/controlflow/kernels.h"

namespace onnxflow {
namespace {

class If : public OpKernel {
 public:
  explicit If(const KernelInfo& info)
      : then_branch_(info.subgraph("then_branch")), else_branch_(info.subgraph("else_branch")) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.subgraph("then_branch") == nullptr || info.subgraph("else_branch") == nullptr) {
      return InvalidArgument("If needs graph attributes then_branch and else_branch");
    }
    return std::unique_ptr<OpKernel>(new If(info));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* cond, ctx.RequireTensor(0));
    if (cond->dtype() != DataType::kBool || cond->size() != 1) {
      return InvalidArgument("the condition must be a single bool, got " + std::string(DataTypeName(cond->dtype())) +
                             " " + ShapeToString(cond->shape()));
    }
    const Subgraph* branch = cond->data<bool>()[0] ? then_branch_ : else_branch_;
    ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> frame, branch->NewFrame(ctx));
    std::vector<Value> inputs, outputs;
    ONNXFLOW_RETURN_IF_ERROR(frame->Run(inputs, &outputs));
    if (static_cast<int>(outputs.size()) < ctx.output_count()) {
      return InvalidArgument("the taken branch has " + std::to_string(outputs.size()) + " outputs, the node " +
                             std::to_string(ctx.output_count()));
    }
    for (int i = 0; i < ctx.output_count(); ++i) ctx.SetOutput(i, std::move(outputs[i]));
    return Status::Ok();
  }

 private:
  const Subgraph* then_branch_;
  const Subgraph* else_branch_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterIf(KernelRegistry& registry) { return registry.Register(kOnnxDomain, "If", 1, kOpenEnded, Make<If>()); }

}  // namespace onnxflow
