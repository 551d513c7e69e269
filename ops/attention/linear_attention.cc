// LinearAttention (opset 27): a recurrent state S (d_k x d_v) per (batch, kv head), updated token by
// token and read by every query head of the kv head's group:
//
//   linear:      S = S + k v^T
//   gated:       S = exp(g) S + k v^T
//   delta:       S = S + beta k (v - S^T k)^T
//   gated_delta: S = exp(g) S + beta k (v - (exp(g) S)^T k)^T
//   o = scale * q^T S
//
// q/k/v/decay/beta are packed (B, T, heads * dim); past_state/present_state are (B, H_kv, d_k, d_v).
// The state is kept in float32 whatever the activation type, as the spec's reference does.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ops/attention/common.h"
#include "ops/attention/register.h"
#include "ops/vec/vec_ops.h"
#include "ops/framework/parallel.h"

namespace onnxflow {
namespace attention {
namespace {

enum Input { kQuery = 0, kKey, kValue, kPastState, kDecay, kBeta };

class LinearAttentionKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<LinearAttentionKernel>();
    ONNXFLOW_ASSIGN_OR_RETURN(k->q_heads_, info.RequireInt("q_num_heads"));
    ONNXFLOW_ASSIGN_OR_RETURN(k->kv_heads_, info.RequireInt("kv_num_heads"));
    if (k->q_heads_ <= 0 || k->kv_heads_ <= 0 || k->q_heads_ % k->kv_heads_ != 0) {
      return InvalidArgument("q_num_heads (" + std::to_string(k->q_heads_) + ") must be a positive multiple of kv_num_heads (" +
                             std::to_string(k->kv_heads_) + ")");
    }
    k->scale_ = info.GetFloat("scale", 0.0f);
    // S's types only (float, float16, bfloat16); anything else is left to T.
    const DataType declared = info.output_type(1);
    if (declared == DataType::kFloat || declared == DataType::kFloat16 || declared == DataType::kBFloat16) {
      k->declared_state_ = declared;
    }
    const std::string rule = info.GetString("update_rule", "gated_delta");
    if (rule == "linear") {
    } else if (rule == "gated") {
      k->gated_ = true;
    } else if (rule == "delta") {
      k->delta_ = true;
    } else if (rule == "gated_delta") {
      k->gated_ = k->delta_ = true;
    } else {
      return InvalidArgument("update_rule must be linear, gated, delta or gated_delta, got '" + rule + "'");
    }
    if (k->gated_ != info.has_input(kDecay)) {
      return InvalidArgument("update_rule '" + rule + (k->gated_ ? "' needs" : "' forbids") + " the decay input");
    }
    if (k->delta_ != info.has_input(kBeta)) {
      return InvalidArgument("update_rule '" + rule + (k->delta_ ? "' needs" : "' forbids") + " the beta input");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override;

 private:
  int64_t q_heads_ = 0, kv_heads_ = 0;
  DataType declared_state_ = DataType::kUndefined;
  float scale_ = 0.0f;
  bool gated_ = false, delta_ = false;
};

Status LinearAttentionKernel::Compute(KernelContext& ctx) const {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* query, ctx.RequireTensor(kQuery));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* key, ctx.RequireTensor(kKey));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* value, ctx.RequireTensor(kValue));
  const Tensor* past = ctx.input_tensor(kPastState);
  const Tensor* decay = ctx.input_tensor(kDecay);
  const Tensor* beta = ctx.input_tensor(kBeta);
  if (gated_ && decay == nullptr) return InvalidArgument("the gated update rules need the decay input");
  if (delta_ && beta == nullptr) return InvalidArgument("the delta update rules need the beta input");

  for (const Tensor* t : {query, key, value}) {
    if (t->rank() != 3) return InvalidArgument("query, key and value must be 3D (B, T, H*D), got " + ShapeToString(t->shape()));
  }
  const int64_t batch = query->dim(0), steps = query->dim(1);
  if (key->dim(0) != batch || value->dim(0) != batch || key->dim(1) != steps || value->dim(1) != steps) {
    return InvalidArgument("query " + ShapeToString(query->shape()) + ", key " + ShapeToString(key->shape()) +
                           " and value " + ShapeToString(value->shape()) + " must agree on batch and sequence length");
  }
  if (query->dim(2) % q_heads_ != 0) {
    return InvalidArgument("query's last dim " + std::to_string(query->dim(2)) + " is not a multiple of q_num_heads");
  }
  const int64_t dk = query->dim(2) / q_heads_;
  if (key->dim(2) != kv_heads_ * dk) {
    return InvalidArgument("key's last dim " + std::to_string(key->dim(2)) + " must be kv_num_heads * d_k = " +
                           std::to_string(kv_heads_ * dk));
  }
  if (value->dim(2) % kv_heads_ != 0) {
    return InvalidArgument("value's last dim " + std::to_string(value->dim(2)) + " is not a multiple of kv_num_heads");
  }
  const int64_t dv = value->dim(2) / kv_heads_;
  const Shape state_shape = {batch, kv_heads_, dk, dv};
  if (past != nullptr && past->shape() != state_shape) {
    return InvalidArgument("past_state shape " + ShapeToString(past->shape()) + " must be " + ShapeToString(state_shape));
  }
  int64_t decay_width = 0;  // 1: one decay per head; dk: one per key dim
  if (decay != nullptr) {
    if (decay->rank() != 3 || decay->dim(0) != batch || decay->dim(1) != steps ||
        (decay->dim(2) != kv_heads_ && decay->dim(2) != kv_heads_ * dk)) {
      return InvalidArgument("decay must be (B, T, kv_num_heads) or (B, T, kv_num_heads * d_k), got " +
                             ShapeToString(decay->shape()));
    }
    decay_width = decay->dim(2) == kv_heads_ * dk ? dk : 1;
  }
  int64_t beta_heads = 0;  // kv_heads or 1 (shared)
  if (beta != nullptr) {
    if (beta->rank() != 3 || beta->dim(0) != batch || beta->dim(1) != steps ||
        (beta->dim(2) != kv_heads_ && beta->dim(2) != 1)) {
      return InvalidArgument("beta must be (B, T, kv_num_heads) or (B, T, 1), got " + ShapeToString(beta->shape()));
    }
    beta_heads = beta->dim(2);
  }

  ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch(state_shape, sizeof(float), "the recurrent state"));
  ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({batch, steps, q_heads_, dv}, sizeof(float), "the output"));
  std::vector<float> q_store, k_store, v_store, s_store, g_store, b_store;
  ONNXFLOW_ASSIGN_OR_RETURN(const float* q, ReadFloatTensor<float>(*query, q_store, "query"));
  ONNXFLOW_ASSIGN_OR_RETURN(const float* k, ReadFloatTensor<float>(*key, k_store, "key"));
  ONNXFLOW_ASSIGN_OR_RETURN(const float* v, ReadFloatTensor<float>(*value, v_store, "value"));
  const float* past_data = nullptr;
  const float* g = nullptr;
  const float* bt = nullptr;
  if (past != nullptr) {
    ONNXFLOW_ASSIGN_OR_RETURN(past_data, ReadFloatTensor<float>(*past, s_store, "past_state"));
  }
  if (decay != nullptr) {
    ONNXFLOW_ASSIGN_OR_RETURN(g, ReadFloatTensor<float>(*decay, g_store, "decay"));
  }
  if (beta != nullptr) {
    ONNXFLOW_ASSIGN_OR_RETURN(bt, ReadFloatTensor<float>(*beta, b_store, "beta"));
  }

  const float scale = scale_ == 0.0f ? 1.0f / std::sqrt(static_cast<float>(dk)) : scale_;
  const int64_t group = q_heads_ / kv_heads_;
  std::vector<float> out(static_cast<size_t>(batch * steps * q_heads_ * dv));
  std::vector<float> state(static_cast<size_t>(batch * kv_heads_ * dk * dv));
  if (past_data != nullptr) std::copy(past_data, past_data + state.size(), state.begin());

  const int64_t kv_heads = kv_heads_;
  const int64_t q_heads = q_heads_;
  const bool gated = gated_, delta = delta_;
  ParallelFor(ctx, batch * kv_heads, steps * dk * dv * (3 + group), [&](int64_t begin, int64_t end) {
    std::vector<float> fresh(static_cast<size_t>(dv)), retrieved(static_cast<size_t>(dv));
    std::vector<float> factor(static_cast<size_t>(dk));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / kv_heads, h = item % kv_heads;
      float* s = state.data() + item * dk * dv;
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t token = b * steps + t;
        const float* kt = k + token * kv_heads * dk + h * dk;
        const float* vt = v + token * kv_heads * dv + h * dv;
        if (gated) {
          const float* gt = g + token * kv_heads * decay_width + h * decay_width;
          for (int64_t d = 0; d < dk; ++d) factor[d] = std::exp(gt[decay_width == 1 ? 0 : d]);
          for (int64_t d = 0; d < dk; ++d) {
            float* row = s + d * dv;
            for (int64_t m = 0; m < dv; ++m) row[m] *= factor[d];
          }
        }
        if (delta) {
          // fresh = beta * (v - S^T k)
          std::fill(retrieved.begin(), retrieved.end(), 0.0f);
          vec::AccumulateRowsScalar(kt, s, dv, dk, dv, retrieved.data());
          const float bv = bt[token * beta_heads + (beta_heads == 1 ? 0 : h)];
          for (int64_t m = 0; m < dv; ++m) fresh[m] = bv * (vt[m] - retrieved[m]);
        } else {
          std::copy(vt, vt + dv, fresh.begin());
        }
        // S += k fresh^T
        for (int64_t d = 0; d < dk; ++d) {
          float* row = s + d * dv;
          const float kd = kt[d];
          for (int64_t m = 0; m < dv; ++m) row[m] += kd * fresh[m];
        }
        // o = scale * q^T S for each query head reading this kv head.
        for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
          const float* qt = q + token * q_heads * dk + qh * dk;
          float* o = out.data() + token * q_heads * dv + qh * dv;
          vec::AccumulateRows(qt, s, dv, dk, dv, o);
          for (int64_t m = 0; m < dv; ++m) o[m] *= scale;
        }
      }
    }
  });

  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * output, ctx.Allocate(0, query->dtype(), {batch, steps, q_heads_ * dv}));
  ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor<float>(out.data(), output->size(), output));
  if (ctx.has_output(1)) {
    // S: past_state's type, else the type the model gives present_state, else T's.
    const DataType state_type = past != nullptr                               ? past->dtype()
                                : declared_state_ != DataType::kUndefined ? declared_state_
                                                                          : query->dtype();
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * present, ctx.Allocate(1, state_type, state_shape));
    ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor<float>(state.data(), present->size(), present));
  }
  return Status::Ok();
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterLinearAttention(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "LinearAttention", 27, kOpenEnded, Make<LinearAttentionKernel>());
}

}  // namespace attention
}  // namespace onnxflow
