// Loop: runs its body while the trip count and condition allow. One subgraph frame serves every
// iteration; loop-carried values move from one iteration's outputs to the next one's inputs
// (tensor handles, no data copies); scan outputs are collected and stacked once at the end.
#include "ops/controlflow/kernels.h"

namespace onnxflow {
namespace {

Result<bool> ReadCondition(const Value& v, const char* what) {
  if (!v.is_tensor() || v.tensor().dtype() != DataType::kBool || v.tensor().size() != 1) {
    return InvalidArgument(std::string(what) + " must be a single bool");
  }
  return v.tensor().data<bool>()[0];
}

class Loop : public OpKernel {
 public:
  explicit Loop(const KernelInfo& info) : body_(info.subgraph("body")) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const Subgraph* body = info.subgraph("body");
    if (body == nullptr) return InvalidArgument("Loop needs a graph attribute 'body'");
    const int carried = info.input_count() - 2;
    if (carried < 0) return InvalidArgument("Loop takes at least two inputs (M, cond)");
    if (static_cast<int>(body->input_names().size()) != carried + 2) {
      return InvalidArgument("the body takes " + std::to_string(body->input_names().size()) + " inputs; with " +
                             std::to_string(carried) + " loop-carried values it must take " + std::to_string(carried + 2));
    }
    if (static_cast<int>(body->output_names().size()) < carried + 1) {
      return InvalidArgument("the body must return the condition and " + std::to_string(carried) + " loop-carried values");
    }
    return std::unique_ptr<OpKernel>(new Loop(info));
  }

  Status Compute(KernelContext& ctx) const override {
    const int carried_count = ctx.input_count() - 2;
    const int scan_count = static_cast<int>(body_->output_names().size()) - 1 - carried_count;

    int64_t trip_limit = -1;  // none
    if (const Tensor* m = ctx.input_tensor(0)) {
      if (m->dtype() != DataType::kInt64 || m->size() != 1) return InvalidArgument("M must be a single int64");
      trip_limit = m->data<int64_t>()[0];
    }
    const bool has_cond = ctx.has_input(1);
    bool cond = true;
    if (has_cond) {
      ONNXFLOW_ASSIGN_OR_RETURN(cond, ReadCondition(*ctx.input(1), "cond"));
    }

    std::vector<Value> carried(carried_count);
    for (int j = 0; j < carried_count; ++j) {
      if (ctx.input(2 + j) != nullptr) carried[j] = *ctx.input(2 + j);
    }
    std::vector<std::vector<Tensor>> scans(scan_count);
    ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> frame, body_->NewFrame(ctx));
    const int64_t max_iterations = ctx.run().limits().max_loop_iterations;

    // A trip count past the limit would fail at the limit anyway, after all the work before it:
    // refuse it before the first iteration.
    if (cond && trip_limit > max_iterations) {
      return ResourceExhausted("the trip count M = " + std::to_string(trip_limit) + " exceeds the limit of " +
                               std::to_string(max_iterations) +
                               " iterations (SessionLimits::max_loop_iterations, run_model --max-loop-iterations)");
    }

    std::vector<Value> inputs, outputs;
    for (int64_t i = 0; (trip_limit < 0 || i < trip_limit) && cond; ++i) {
      if (i >= max_iterations) {
        return ResourceExhausted("the loop passed the limit of " + std::to_string(max_iterations) +
                                 " iterations (SessionLimits::max_loop_iterations, run_model --max-loop-iterations)");
      }
      ONNXFLOW_RETURN_IF_ERROR(ctx.run().CheckInterrupt());
      inputs.clear();
      inputs.reserve(2 + carried_count);
      inputs.emplace_back(Tensor::Scalar<int64_t>(i));
      inputs.emplace_back(Tensor::Scalar<bool>(cond));
      for (Value& v : carried) inputs.push_back(std::move(v));
      Status s = frame->Run(inputs, &outputs);
      if (!s.ok()) return s.WithContext("iteration " + std::to_string(i));
      if (has_cond) {
        ONNXFLOW_ASSIGN_OR_RETURN(cond, ReadCondition(outputs[0], "the body's condition output"));
      }
      for (int j = 0; j < carried_count; ++j) carried[j] = std::move(outputs[1 + j]);
      for (int k = 0; k < scan_count; ++k) {
        const Value& v = outputs[1 + carried_count + k];
        if (!v.is_tensor()) return InvalidArgument("scan output " + std::to_string(k) + " must be a tensor");
        scans[k].push_back(v.tensor());
      }
    }

    for (int j = 0; j < carried_count; ++j) ctx.SetOutput(j, std::move(carried[j]));
    for (int k = 0; k < scan_count; ++k) {
      const int out = carried_count + k;
      if (!scans[k].empty()) {
        ONNXFLOW_RETURN_IF_ERROR(StackIterations(scans[k], 0, false, ctx, out).status());
        continue;
      }
      // No iterations: an empty stack, shaped as far as the body declares its output.
      const ValueInfo& info = body_->output_infos()[1 + carried_count + k];
      Shape shape{0};
      bool fixed = info.has_shape;
      for (int64_t d : info.shape) fixed &= d >= 0;
      if (fixed) shape.insert(shape.end(), info.shape.begin(), info.shape.end());
      const DataType dtype = info.dtype == DataType::kUndefined ? DataType::kFloat : info.dtype;
      ONNXFLOW_RETURN_IF_ERROR(ctx.Allocate(out, dtype, shape).status());
    }
    return Status::Ok();
  }

 private:
  const Subgraph* body_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterLoop(KernelRegistry& registry) { return registry.Register(kOnnxDomain, "Loop", 1, kOpenEnded, Make<Loop>()); }

}  // namespace onnxflow
