// Scan: runs its body once per position along the scan axis of the scan inputs, threading state
// values through. Opset 8 has a leading batch axis and optional sequence_lens; opset 9 and later
// have neither, and take per-input/per-output axes and directions.
#include <algorithm>

#include "ops/controlflow/kernels.h"
#include "ops/framework/concat.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

// Position `t` of `input` along `axis`, with that axis removed. Axis 0 is a view; others copy.
Tensor TakeAlong(const Tensor& input, int64_t axis, int64_t t) {
  if (axis == 0) return input.SliceAxis0(t, t + 1, /*keep_axis=*/false);
  Shape shape = input.shape();
  const int64_t len = shape[axis];
  shape.erase(shape.begin() + axis);
  Tensor out(input.dtype(), shape);
  const int64_t outer = SizeToDim(input.shape(), axis);
  const int64_t inner = SizeFromDim(input.shape(), axis + 1);
  for (int64_t o = 0; o < outer; ++o) CopyElements(input, (o * len + t) * inner, &out, o * inner, inner);
  return out;
}

class Scan : public OpKernel {
 public:
  Scan(const KernelInfo& info, int64_t num_scan_inputs)
      : body_(info.subgraph("body")), num_scan_inputs_(num_scan_inputs), batched_(info.opset() < 9),
        input_directions_(info.GetInts(info.opset() < 9 ? "directions" : "scan_input_directions")),
        output_directions_(info.GetInts("scan_output_directions")),
        input_axes_(info.GetInts("scan_input_axes")), output_axes_(info.GetInts("scan_output_axes")) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.subgraph("body") == nullptr) return InvalidArgument("Scan needs a graph attribute 'body'");
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t n, info.RequireInt("num_scan_inputs"));
    const int first = info.opset() < 9 ? 1 : 0;
    if (n < 1 || n > info.input_count() - first) return InvalidArgument("num_scan_inputs " + std::to_string(n) + " does not fit the inputs");
    return std::unique_ptr<OpKernel>(new Scan(info, n));
  }

  Status Compute(KernelContext& ctx) const override {
    const int first = batched_ ? 1 : 0;
    const int state_count = ctx.input_count() - first - static_cast<int>(num_scan_inputs_);
    std::vector<Value> states(state_count);
    std::vector<Tensor> scan_inputs(num_scan_inputs_);
    for (int j = 0; j < state_count; ++j) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(first + j));
      states[j] = *t;
    }
    for (int k = 0; k < num_scan_inputs_; ++k) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(first + state_count + k));
      scan_inputs[k] = *t;
    }
    if (!batched_) {
      std::vector<Value> final_states;
      std::vector<std::vector<Tensor>> scans;
      ONNXFLOW_RETURN_IF_ERROR(RunSequence(ctx, states, scan_inputs, input_axes_, -1, &final_states, &scans));
      for (int j = 0; j < state_count; ++j) ctx.SetOutput(j, std::move(final_states[j]));
      for (size_t k = 0; k < scans.size(); ++k) {
        const int64_t rank = scans[k].empty() ? 1 : scans[k][0].rank() + 1;
        int64_t axis = k < output_axes_.size() ? output_axes_[k] : 0;
        ONNXFLOW_ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, rank));
        const bool reverse = k < output_directions_.size() && output_directions_[k] == 1;
        ONNXFLOW_RETURN_IF_ERROR(Stack(scans[k], axis, reverse, ctx, state_count + static_cast<int>(k)));
      }
      return Status::Ok();
    }
    return ComputeBatched(ctx, states, scan_inputs);
  }

 private:
  // Opset 8: axis 0 of every state and scan input is the batch; the scan axis is 1.
  Status ComputeBatched(KernelContext& ctx, const std::vector<Value>& states, const std::vector<Tensor>& scan_inputs) const {
    const int state_count = static_cast<int>(states.size());
    const int64_t batch = scan_inputs[0].rank() > 0 ? scan_inputs[0].dim(0) : 0;
    const Tensor* lens = ctx.input_tensor(0);
    if (lens != nullptr && (lens->dtype() != DataType::kInt64 || lens->size() != batch)) {
      return InvalidArgument("sequence_lens must hold one int64 per batch entry");
    }
    for (const Tensor& t : scan_inputs) {
      if (t.rank() < 2 || t.dim(0) != batch) return InvalidArgument("scan inputs must be [batch, sequence, ...]");
    }
    for (int j = 0; j < state_count; ++j) {
      if (!states[j].is_tensor() || states[j].tensor().rank() < 1 || states[j].tensor().dim(0) != batch) {
        return InvalidArgument("state " + std::to_string(j) + " must be a tensor [batch, ...] with batch " +
                               std::to_string(batch));
      }
    }
    std::vector<std::vector<Tensor>> batch_states(state_count), batch_scans;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> s(state_count);
      for (int j = 0; j < state_count; ++j) s[j] = states[j].tensor().SliceAxis0(b, b + 1, false);
      std::vector<Tensor> xs;
      for (const Tensor& t : scan_inputs) xs.push_back(t.SliceAxis0(b, b + 1, false));
      const int64_t len = lens != nullptr ? lens->data<int64_t>()[b] : -1;
      std::vector<Value> final_states;
      std::vector<std::vector<Tensor>> scans;
      ONNXFLOW_RETURN_IF_ERROR(RunSequence(ctx, s, xs, {}, len, &final_states, &scans));
      for (int j = 0; j < state_count; ++j) batch_states[j].push_back(final_states[j].tensor());
      batch_scans.resize(scans.size());
      for (size_t k = 0; k < scans.size(); ++k) {
        std::vector<const Tensor*> parts;
        for (const Tensor& t : scans[k]) parts.push_back(&t);
        ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, ConcatOutputShape(parts, 0, true));
        Tensor stacked(parts[0]->dtype(), shape);
        ConcatInto(parts, 0, true, &stacked);
        batch_scans[k].push_back(std::move(stacked));
      }
    }
    for (int j = 0; j < state_count; ++j) ONNXFLOW_RETURN_IF_ERROR(Stack(batch_states[j], 0, false, ctx, j));
    for (size_t k = 0; k < batch_scans.size(); ++k) {
      ONNXFLOW_RETURN_IF_ERROR(Stack(batch_scans[k], 0, false, ctx, state_count + static_cast<int>(k)));
    }
    return Status::Ok();
  }

  static Status Stack(const std::vector<Tensor>& parts, int64_t axis, bool reverse, KernelContext& ctx, int out) {
    if (parts.empty()) return ctx.Allocate(out, DataType::kFloat, {0}).status();
    return StackIterations(parts, axis, reverse, ctx, out).status();
  }

  // One scan over `scan_inputs` (no batch axis). `length` < 0: the full sequence.
  Status RunSequence(KernelContext& ctx, std::vector<Value> states, const std::vector<Tensor>& scan_inputs,
                     const std::vector<int64_t>& axes_attr, int64_t length, std::vector<Value>* final_states,
                     std::vector<std::vector<Tensor>>* scans) const {
    const int state_count = static_cast<int>(states.size());
    std::vector<int64_t> axes(scan_inputs.size(), 0);
    int64_t seq = -1;
    for (size_t k = 0; k < scan_inputs.size(); ++k) {
      if (k < axes_attr.size()) {
        ONNXFLOW_ASSIGN_OR_RETURN(axes[k], NormalizeAxis(axes_attr[k], scan_inputs[k].rank()));
      }
      if (scan_inputs[k].rank() == 0) return InvalidArgument("scan input " + std::to_string(k) + " is a scalar");
      const int64_t len = scan_inputs[k].dim(axes[k]);
      if (seq >= 0 && len != seq) return InvalidArgument("scan inputs have different sequence lengths");
      seq = len;
    }
    if (length >= 0) seq = std::min(seq, length);
    const int scan_out_count = static_cast<int>(body_->output_names().size()) - state_count;
    if (scan_out_count < 0) return InvalidArgument("the body returns fewer values than there are states");
    scans->assign(scan_out_count, {});
    ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> frame, body_->NewFrame(ctx));
    std::vector<Value> inputs, outputs;
    for (int64_t t = 0; t < seq; ++t) {
      ONNXFLOW_RETURN_IF_ERROR(ctx.run().CheckInterrupt());
      inputs.clear();
      for (Value& s : states) inputs.push_back(std::move(s));
      for (size_t k = 0; k < scan_inputs.size(); ++k) {
        const bool reverse = k < input_directions_.size() && input_directions_[k] == 1;
        inputs.emplace_back(TakeAlong(scan_inputs[k], axes[k], reverse ? seq - 1 - t : t));
      }
      Status s = frame->Run(inputs, &outputs);
      if (!s.ok()) return s.WithContext("step " + std::to_string(t));
      for (int j = 0; j < state_count; ++j) states[j] = std::move(outputs[j]);
      for (int k = 0; k < scan_out_count; ++k) {
        if (!outputs[state_count + k].is_tensor()) return InvalidArgument("scan outputs must be tensors");
        (*scans)[k].push_back(outputs[state_count + k].tensor());
      }
    }
    *final_states = std::move(states);
    return Status::Ok();
  }

  const Subgraph* body_;
  int64_t num_scan_inputs_;
  bool batched_;
  std::vector<int64_t> input_directions_, output_directions_, input_axes_, output_axes_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterScan(KernelRegistry& registry) { return registry.Register(kOnnxDomain, "Scan", 8, kOpenEnded, Make<Scan>()); }

}  // namespace onnxflow
