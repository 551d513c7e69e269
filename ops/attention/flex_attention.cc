// ai.onnx.preview FlexAttention (version 1): attention over 4D (B, H, S, D) inputs whose scores
// and probabilities pass through optional user subgraphs:
//
//   scores = (Q . K^T) * scale;  scores = score_mod(scores);
//   probs = softmax(scores);     probs = prob_mod(probs);     Y = probs . V
//
// The subgraphs see the whole (B, Hq, L, S) tensor in the softmax precision (float32 for 16-bit
// and float inputs, double for double, unless softmax_precision says otherwise). Query head h
// reads kv head h / (Hq / Hkv).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ops/attention/common.h"
#include "ops/attention/register.h"
#include "ops/vec/vec_ops.h"
#include "ops/framework/parallel.h"
#include "ops/framework/subgraph.h"

namespace onnxflow {
namespace attention {
namespace {

inline const char kPreviewDomain[] = "ai.onnx.preview";

class FlexAttentionKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<FlexAttentionKernel>();
    k->has_scale_ = info.has_attribute("scale");
    k->scale_ = info.GetFloat("scale", 0.0f);
    if (info.has_attribute("softmax_precision")) {
      const int64_t p = info.GetInt("softmax_precision", 1);
      if (p != 1 && p != 10 && p != 11 && p != 16) {
        return InvalidArgument("softmax_precision must be 1, 10, 11 or 16, got " + std::to_string(p));
      }
      k->softmax_precision_ = static_cast<DataType>(p);
    }
    for (const char* name : {"score_mod", "prob_mod"}) {
      if (!info.has_attribute(name)) continue;
      const Subgraph* g = info.subgraph(name);
      if (g == nullptr) {
        return Unimplemented(std::string("FlexAttention's ") + name + " graph was not prepared by the runtime");
      }
      if (g->input_names().size() != 1 || g->output_names().size() != 1) {
        return InvalidArgument(std::string("FlexAttention's ") + name + " graph must have exactly 1 input and 1 output");
      }
      (std::string(name) == "score_mod" ? k->score_mod_ : k->prob_mod_) = g;
    }
    for (int i = 0; i < 3; ++i) {
      const DataType t = info.input_type(i);
      if (t != DataType::kUndefined && !IsAttentionFloat(t)) {
        return Unimplemented(std::string("FlexAttention does not support input type ") + DataTypeName(t));
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequireTensor(0));
    const DataType sm = SoftmaxType(q->dtype());
    return sm == DataType::kDouble ? ComputeIn<double>(ctx, sm) : ComputeIn<float>(ctx, sm);
  }

 private:
  DataType SoftmaxType(DataType input) const {
    if (softmax_precision_ != DataType::kUndefined) return softmax_precision_;
    return input == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
  }

  template <typename C>
  Status ComputeIn(KernelContext& ctx, DataType sm_type) const;

  // Runs a modifier graph on `values` (shape `shape`, carried as `dtype`) in place.
  template <typename C>
  Status RunModifier(KernelContext& ctx, const Subgraph& graph, const char* name, const Shape& shape, DataType dtype,
                     std::vector<C>& values) const;

  bool has_scale_ = false;
  float scale_ = 0.0f;
  DataType softmax_precision_ = DataType::kUndefined;
  const Subgraph* score_mod_ = nullptr;
  const Subgraph* prob_mod_ = nullptr;
};

template <typename C>
Status FlexAttentionKernel::RunModifier(KernelContext& ctx, const Subgraph& graph, const char* name, const Shape& shape,
                                        DataType dtype, std::vector<C>& values) const {
  Tensor in(dtype, shape);
  ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor<C>(values.data(), in.size(), &in));
  ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> frame, graph.NewFrame(ctx));
  std::vector<Value> inputs = {Value(std::move(in))};
  std::vector<Value> outputs;
  ONNXFLOW_RETURN_IF_ERROR(frame->Run(inputs, &outputs));
  if (outputs.size() != 1 || !outputs[0].is_tensor()) {
    return InvalidArgument(std::string(name) + " must produce exactly one tensor");
  }
  const Tensor& out = outputs[0].tensor();
  if (out.shape() != shape) {
    return InvalidArgument(std::string(name) + " changed the shape " + ShapeToString(shape) + " to " +
                           ShapeToString(out.shape()));
  }
  std::vector<C> storage;
  ONNXFLOW_ASSIGN_OR_RETURN(const C* data, ReadFloatTensor<C>(out, storage, name));
  std::copy(data, data + out.size(), values.begin());
  return Status::Ok();
}

template <typename C>
Status FlexAttentionKernel::ComputeIn(KernelContext& ctx, DataType sm_type) const {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequireTensor(0));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* k, ctx.RequireTensor(1));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* v, ctx.RequireTensor(2));
  if (q->rank() != 4 || k->rank() != 4 || v->rank() != 4) {
    return InvalidArgument("FlexAttention needs 4D Q, K and V, got " + ShapeToString(q->shape()) + ", " +
                           ShapeToString(k->shape()) + ", " + ShapeToString(v->shape()));
  }
  const int64_t batch = q->dim(0), q_heads = q->dim(1), q_seq = q->dim(2), head_size = q->dim(3);
  const int64_t kv_heads = k->dim(1), kv_seq = k->dim(2), v_head_size = v->dim(3);
  if (k->dim(0) != batch || v->dim(0) != batch || v->dim(1) != kv_heads || v->dim(2) != kv_seq ||
      k->dim(3) != head_size) {
    return InvalidArgument("FlexAttention shapes do not fit: Q " + ShapeToString(q->shape()) + ", K " +
                           ShapeToString(k->shape()) + ", V " + ShapeToString(v->shape()));
  }
  if (kv_heads <= 0 || q_heads % kv_heads != 0) {
    return InvalidArgument("q heads " + std::to_string(q_heads) + " must be a multiple of kv heads " +
                           std::to_string(kv_heads));
  }
  if (k->dtype() != q->dtype() || v->dtype() != q->dtype()) {
    return InvalidArgument("Q, K and V must have the same type");
  }

  std::vector<C> q_store, k_store, v_store;
  ONNXFLOW_ASSIGN_OR_RETURN(const C* qd, ReadFloatTensor<C>(*q, q_store, "Q"));
  ONNXFLOW_ASSIGN_OR_RETURN(const C* kd, ReadFloatTensor<C>(*k, k_store, "K"));
  ONNXFLOW_ASSIGN_OR_RETURN(const C* vd, ReadFloatTensor<C>(*v, v_store, "V"));

  const C scale = has_scale_ ? static_cast<C>(scale_) : C(1) / std::sqrt(static_cast<C>(head_size));
  const int64_t group = q_heads / kv_heads;
  const Shape score_shape = {batch, q_heads, q_seq, kv_seq};
  ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch(score_shape, sizeof(C), "the score tensor"));
  std::vector<C> scores(static_cast<size_t>(batch * q_heads * q_seq * kv_seq));
  const DataType in_type = q->dtype();
  const bool round_in = NeedsRounding<C>(in_type);
  const bool round_sm = NeedsRounding<C>(sm_type);

  // Scores, rounded as the input type would hold them, then as the softmax type.
  ParallelFor(ctx, batch * q_heads, q_seq * kv_seq * head_size, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / q_heads, h = item % q_heads;
      const C* k_head = kd + (b * kv_heads + h / group) * kv_seq * head_size;
      for (int64_t i = 0; i < q_seq; ++i) {
        C* row = scores.data() + (item * q_seq + i) * kv_seq;
        vec::DotRows(qd + (item * q_seq + i) * head_size, k_head, head_size, kv_seq, head_size, row);
        for (int64_t j = 0; j < kv_seq; ++j) {
          row[j] *= scale;
          if (round_in) row[j] = RoundTo(in_type, row[j]);
          if (round_sm) row[j] = RoundTo(sm_type, row[j]);
        }
      }
    }
  });
  if (score_mod_ != nullptr) {
    ONNXFLOW_RETURN_IF_ERROR(RunModifier<C>(ctx, *score_mod_, "score_mod", score_shape, sm_type, scores));
  }
  const int64_t rows = batch * q_heads * q_seq;
  ParallelFor(ctx, rows, kv_seq * 8, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      C* row = scores.data() + r * kv_seq;
      SoftmaxRow(row, kv_seq);
      if (round_sm) {
        for (int64_t j = 0; j < kv_seq; ++j) row[j] = RoundTo(sm_type, row[j]);
      }
    }
  });
  if (prob_mod_ != nullptr) {
    ONNXFLOW_RETURN_IF_ERROR(RunModifier<C>(ctx, *prob_mod_, "prob_mod", score_shape, sm_type, scores));
  }

  std::vector<C> y_buf(static_cast<size_t>(rows * v_head_size));
  ParallelFor(ctx, batch * q_heads, q_seq * kv_seq * v_head_size, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / q_heads, h = item % q_heads;
      const C* v_head = vd + (b * kv_heads + h / group) * kv_seq * v_head_size;
      for (int64_t i = 0; i < q_seq; ++i) {
        const int64_t r = item * q_seq + i;
        vec::AccumulateRows(scores.data() + r * kv_seq, v_head, v_head_size, kv_seq, v_head_size,
                       y_buf.data() + r * v_head_size);
      }
    }
  });
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, v->dtype(), {batch, q_heads, q_seq, v_head_size}));
  return WriteFloatTensor<C>(y_buf.data(), y->size(), y);
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterFlexAttention(KernelRegistry& registry) {
  return registry.Register(kPreviewDomain, "FlexAttention", 1, kOpenEnded, Make<FlexAttentionKernel>());
}

}  // namespace attention
}  // namespace onnxflow
