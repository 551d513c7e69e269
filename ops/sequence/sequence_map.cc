// SequenceMap: applies its body to each element of the input sequence (and the matching element
// of any additional sequence inputs; tensor inputs are passed to every call as they are).
#include <memory>

#include "ops/framework/subgraph.h"
#include "ops/sequence/sequence_util.h"

namespace onnxflow {
namespace {

class SequenceMap : public OpKernel {
 public:
  explicit SequenceMap(const KernelInfo& info) : body_(info.subgraph("body")) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.subgraph("body") == nullptr) return InvalidArgument("SequenceMap needs a graph attribute 'body'");
    return std::unique_ptr<OpKernel>(new SequenceMap(info));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Sequence* first, RequireSequence(ctx, 0));
    const size_t count = first->tensors.size();
    for (int i = 1; i < ctx.input_count(); ++i) {
      const Value* v = ctx.input(i);
      if (v != nullptr && v->is_sequence() && v->sequence().tensors.size() != count) {
        return InvalidArgument("input " + std::to_string(i) + " is a sequence of " +
                               std::to_string(v->sequence().tensors.size()) + ", the first of " + std::to_string(count));
      }
    }
    std::vector<std::shared_ptr<Sequence>> results(ctx.output_count());
    for (int k = 0; k < ctx.output_count(); ++k) {
      results[k] = std::make_shared<Sequence>();
      const auto& infos = body_->output_infos();
      if (k < static_cast<int>(infos.size())) results[k]->elem_type = infos[k].dtype;
    }
    ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> frame, body_->NewFrame(ctx));
    std::vector<Value> inputs, outputs;
    for (size_t e = 0; e < count; ++e) {
      inputs.clear();
      inputs.emplace_back(first->tensors[e]);
      for (int i = 1; i < ctx.input_count(); ++i) {
        const Value* v = ctx.input(i);
        if (v == nullptr) return InvalidArgument("input " + std::to_string(i) + " is absent");
        inputs.push_back(v->is_sequence() ? Value(v->sequence().tensors[e]) : *v);
      }
      Status s = frame->Run(inputs, &outputs);
      if (!s.ok()) return s.WithContext("element " + std::to_string(e));
      for (int k = 0; k < ctx.output_count() && k < static_cast<int>(outputs.size()); ++k) {
        if (!outputs[k].is_tensor()) return InvalidArgument("the body must return tensors");
        results[k]->elem_type = outputs[k].tensor().dtype();
        results[k]->tensors.push_back(outputs[k].tensor());
      }
    }
    for (int k = 0; k < ctx.output_count(); ++k) ctx.SetOutput(k, Value(std::shared_ptr<const Sequence>(results[k])));
    return Status::Ok();
  }

 private:
  const Subgraph* body_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSequenceMap(KernelRegistry& r) {
  return r.Register(kOnnxDomain, "SequenceMap", 17, kOpenEnded, Make<SequenceMap>());
}

}  // namespace onnxflow
