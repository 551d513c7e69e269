// ONNX Runtime's normalizations for transformers:
//   SkipLayerNormalization(input, skip, gamma, beta?, bias?) -> output, mean?, inv_std_var?,
//       input_skip_bias_sum?: LayerNorm over the last dim of s = input + skip (+ bias)
//   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): the same with RMS normalization
//   SimplifiedLayerNormalization(X, scale) -> Y, inv_std_var?: RMS normalization over dims axis..
//   LayerNormalization below opset 17 (ONNX Runtime's own, as ONNX later specified it)
//   EmbedLayerNormalization: word + position (+ segment) embeddings, then LayerNorm; mask_index
// Rows go to cores; each row is summed and normalized by the vectorized row kernels of ops/nn.
#include <cmath>
#include <optional>

#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/elementwise/broadcast.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/row_kernels.h"

namespace onnxflow {
namespace contrib {
namespace {

// Normalizes one row of n floats from `src` into `dst`; returns (mean, inv_std).
inline std::pair<float, float> NormalizeOne(const float* src, int64_t n, bool rms, float epsilon, const float* gamma,
                                            const float* beta, float* dst) {
  float mean = 0.0f;
  if (!rms) mean = static_cast<float>(RowSum(src, n) / static_cast<double>(n));
  const double var = RowSumSquaredDiff(src, mean, n) / static_cast<double>(n);
  const float inv = static_cast<float>(1.0 / std::sqrt(var + epsilon));
  NormalizeRow(src, mean, inv, gamma, beta, dst, n);
  return {mean, inv};
}

Result<const Tensor*> RequireVector(const KernelContext& ctx, int i, int64_t n, DataType t, const char* op,
                                    const char* name, bool optional) {
  const Tensor* v = ctx.input_tensor(i);
  if (v == nullptr) {
    if (optional) return v;
    return InvalidArgument(std::string(op) + ": input '" + name + "' is required");
  }
  if (v->size() != n || v->dtype() != t) {
    return InvalidArgument(std::string(op) + ": input '" + name + "' must be " + std::to_string(n) + " values of " +
                           DataTypeName(t) + ", got " + DataTypeName(v->dtype()) + " " + ShapeToString(v->shape()));
  }
  return v;
}

class SkipNormKernel : public OpKernel {
 public:
  // `any_broadcast`: the internal AddLayerNormalization (graph/norm_fusion.cc), whose operands are
  // those of an Add and may broadcast in any way Add allows; the common case, equal shapes, runs
  // as SkipLayerNormalization does.
  SkipNormKernel(const KernelInfo& info, bool rms, bool any_broadcast = false)
      : rms_(any_broadcast ? info.GetInt("rms", 0) != 0 : rms), any_broadcast_(any_broadcast),
        op_(any_broadcast ? "AddLayerNormalization" : rms ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization"),
        epsilon_(info.GetFloat("epsilon", 1e-12f)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* skip, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*x, op_, "input"));
    if (any_broadcast_ && (x->shape() != skip->shape() || x->rank() < 2)) return BroadcastSum(ctx, *x, *skip);
    if (x->rank() < 2) return InvalidArgument(std::string(op_) + ": input must have rank 2 or 3, got " + ShapeToString(x->shape()));
    const int64_t n = x->dim(x->rank() - 1), rows = x->size() / std::max<int64_t>(n, 1);
    // skip: the shape of input, or (1, S, H) / (S, H) repeated over the batch.
    if (skip->dtype() != x->dtype() || skip->dim(skip->rank() - 1) != n || x->size() % std::max<int64_t>(skip->size(), 1) != 0 ||
        (skip->size() != x->size() && skip->size() != SizeFromDim(x->shape(), x->rank() - 2))) {
      return InvalidArgument(std::string(op_) + ": skip " + ShapeToString(skip->shape()) + " does not fit input " +
                             ShapeToString(x->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* gamma, RequireVector(ctx, 2, n, x->dtype(), op_, "gamma", false));
    const Tensor* beta = nullptr;
    if (!rms_) { ONNXFLOW_ASSIGN_OR_RETURN(beta, RequireVector(ctx, 3, n, x->dtype(), op_, "beta", true)); }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* bias, RequireVector(ctx, rms_ ? 3 : 4, n, x->dtype(), op_, "bias", true));

    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    Shape stat_shape = x->shape();
    stat_shape.back() = 1;
    Tensor* mean_t = nullptr;
    Tensor* inv_t = nullptr;
    Tensor* sum_t = nullptr;
    if (!rms_ && ctx.has_output(1)) { ONNXFLOW_ASSIGN_OR_RETURN(mean_t, ctx.Allocate(1, DataType::kFloat, stat_shape)); }
    if (ctx.has_output(2)) { ONNXFLOW_ASSIGN_OR_RETURN(inv_t, ctx.Allocate(2, DataType::kFloat, stat_shape)); }
    if (ctx.has_output(3)) { ONNXFLOW_ASSIGN_OR_RETURN(sum_t, ctx.AllocateUninitialized(3, x->dtype(), x->shape())); }
    if (y->size() == 0) return Status::Ok();

    FloatIn xi(*x), si(*skip), gi(*gamma);
    std::optional<FloatIn> be, bi;
    if (beta != nullptr) be.emplace(*beta);
    if (bias != nullptr) bi.emplace(*bias);
    FloatOut out(y);
    std::optional<FloatOut> sum;
    if (sum_t != nullptr) sum.emplace(sum_t);
    const int64_t skip_rows = skip->size() / n;
    ParallelFor(ctx, rows, n * 6, [&](int64_t r0, int64_t r1) {
      std::vector<float> row(sum ? 0 : n);
      for (int64_t r = r0; r < r1; ++r) {
        const float* a = xi.data + r * n;
        const float* b = si.data + (r % skip_rows) * n;
        float* s = sum ? sum->data + r * n : row.data();
        // s = a + b (+ bias), vectorized (NormalizeRow with mean 0, scale 1 is x + bias): the
        // scalar loops took half of BERT's SkipLayerNormalization time.
        NormalizeRow(a, 0.0f, 1.0f, nullptr, b, s, n);
        if (bi) NormalizeRow(s, 0.0f, 1.0f, nullptr, bi->data, s, n);
        auto [mean, inv] = NormalizeOne(s, n, rms_, epsilon_, gi.data, be ? be->data : nullptr, out.data + r * n);
        if (mean_t != nullptr) mean_t->mutable_data<float>()[r] = mean;
        if (inv_t != nullptr) inv_t->mutable_data<float>()[r] = inv;
      }
    });
    out.Finish();
    if (sum) sum->Finish();
    return Status::Ok();
  }

 private:
  // a + b broadcast as Add does (into output 3 when it is read, else a scratch tensor), then each
  // last-axis row normalized. float only: the fusion makes this op for float values alone.
  Status BroadcastSum(KernelContext& ctx, const Tensor& a, const Tensor& b) const {
    if (a.dtype() != DataType::kFloat || b.dtype() != DataType::kFloat) {
      return InvalidArgument(std::string(op_) + ": operands must be float, got " + DataTypeName(a.dtype()) + " and " +
                             DataTypeName(b.dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a.shape(), b.shape()));
    if (shape.empty()) return InvalidArgument(std::string(op_) + ": the sum must have rank 1 or more");
    const int64_t n = shape.back(), rows = ElementCount(shape) / std::max<int64_t>(n, 1);
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* gamma, RequireVector(ctx, 2, n, DataType::kFloat, op_, "gamma", false));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* beta, RequireVector(ctx, 3, n, DataType::kFloat, op_, "beta", true));
    Tensor scratch;
    Tensor* sum = nullptr;
    if (ctx.has_output(3)) {
      ONNXFLOW_ASSIGN_OR_RETURN(sum, ctx.AllocateUninitialized(3, DataType::kFloat, shape));
    } else {
      scratch = Tensor::Uninitialized(DataType::kFloat, shape);
      sum = &scratch;
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, shape));
    if (y->size() == 0) return Status::Ok();
    ONNXFLOW_RETURN_IF_ERROR((RunBinary<float, float, float>(
        ctx, a, b, sum, 1, [](const float* p, bool p_one, const float* q, bool q_one, float* o, int64_t m) {
          for (int64_t i = 0; i < m; ++i) o[i] = p[p_one ? 0 : i] + q[q_one ? 0 : i];
        })));
    const float* s = sum->data<float>();
    const float* g = gamma->data<float>();
    const float* be = beta != nullptr ? beta->data<float>() : nullptr;
    float* out = y->mutable_data<float>();
    ParallelFor(ctx, rows, n * 6, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) NormalizeOne(s + r * n, n, rms_, epsilon_, g, be, out + r * n);
    });
    return Status::Ok();
  }

  bool rms_;
  bool any_broadcast_;
  const char* op_;
  float epsilon_;
};

// SimplifiedLayerNormalization: Y = X / sqrt(mean(X^2) + epsilon) * scale over dims axis..;
// inv_std_var (output 1) in float.
class SimplifiedNormKernel : public OpKernel {
 public:
  explicit SimplifiedNormKernel(const KernelInfo& info)
      : axis_(info.GetInt("axis", -1)), epsilon_(info.GetFloat("epsilon", 1e-5f)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*x, "SimplifiedLayerNormalization", "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, x->rank()));
    const int64_t n = SizeFromDim(x->shape(), axis), rows = SizeToDim(x->shape(), axis);
    if (scale->size() != n || !IsFloatLike(scale->dtype())) {
      return InvalidArgument("SimplifiedLayerNormalization: scale must be " + std::to_string(n) +
                             " float values (the normalized dims of X " + ShapeToString(x->shape()) + "), got " +
                             DataTypeName(scale->dtype()) + " " + ShapeToString(scale->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    Tensor* inv_t = nullptr;
    if (ctx.has_output(1)) {
      Shape stat(x->shape().begin(), x->shape().begin() + axis);
      stat.resize(x->rank(), 1);
      ONNXFLOW_ASSIGN_OR_RETURN(inv_t, ctx.Allocate(1, DataType::kFloat, stat));
    }
    if (y->size() == 0) return Status::Ok();
    FloatIn xi(*x), si(*scale);
    FloatOut out(y);
    ParallelFor(ctx, rows, n * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float inv = NormalizeOne(xi.data + r * n, n, true, epsilon_, si.data, nullptr, out.data + r * n).second;
        if (inv_t != nullptr) inv_t->mutable_data<float>()[r] = inv;
      }
    });
    out.Finish();
    return Status::Ok();
  }

 private:
  int64_t axis_;
  float epsilon_;
};

// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
// segment_embedding?, gamma, beta, mask?, position_ids?) -> output, mask_index, embedding_sum?
class EmbedLayerNormKernel : public OpKernel {
 public:
  explicit EmbedLayerNormKernel(const KernelInfo& info)
      : epsilon_(info.GetFloat("epsilon", 1e-12f)), mask_index_type_(info.GetInt("mask_index_type", 1)) {}

  Status Compute(KernelContext& ctx) const override {
    const char* op = "EmbedLayerNormalization";
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* ids, ctx.RequireTensor(0));
    const Tensor* seg = ctx.input_tensor(1);
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* word, ctx.RequireTensor(2));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* pos, ctx.RequireTensor(3));
    const Tensor* seg_emb = ctx.input_tensor(4);
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*word, op, "word_embedding"));
    if (ids->rank() != 2 || ids->dtype() != DataType::kInt32) {
      return InvalidArgument(std::string(op) + ": input_ids must be int32 (batch, sequence), got " +
                             DataTypeName(ids->dtype()) + " " + ShapeToString(ids->shape()));
    }
    if (word->rank() != 2 || pos->rank() != 2 || pos->dim(1) != word->dim(1) || pos->dtype() != word->dtype()) {
      return InvalidArgument(std::string(op) + ": word_embedding and position_embedding must be (rows, hidden) of one type");
    }
    const int64_t batch = ids->dim(0), seq = ids->dim(1), hidden = word->dim(1);
    if (seg != nullptr && (seg->shape() != ids->shape() || seg->dtype() != DataType::kInt32 || seg_emb == nullptr ||
                           seg_emb->rank() != 2 || seg_emb->dim(1) != hidden)) {
      return InvalidArgument(std::string(op) + ": segment_ids must be int32 like input_ids, with a (rows, " +
                             std::to_string(hidden) + ") segment_embedding");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* gamma, RequireVector(ctx, 5, hidden, word->dtype(), op, "gamma", false));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* beta, RequireVector(ctx, 6, hidden, word->dtype(), op, "beta", false));
    const Tensor* mask = ctx.input_tensor(7);
    if (mask != nullptr && (mask->shape() != ids->shape() || mask->dtype() != DataType::kInt32)) {
      return InvalidArgument(std::string(op) + ": mask must be int32 like input_ids");
    }
    const Tensor* pos_ids = ctx.input_tensor(8);
    if (pos_ids != nullptr && (pos_ids->dtype() != DataType::kInt32 || pos_ids->rank() != 2 || pos_ids->dim(1) != seq ||
                               (pos_ids->dim(0) != 1 && pos_ids->dim(0) != batch))) {
      return InvalidArgument(std::string(op) + ": position_ids must be int32 (1 or batch, sequence)");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, word->dtype(), {batch, seq, hidden}));
    Tensor* sum_t = nullptr;
    if (ctx.has_output(2)) { ONNXFLOW_ASSIGN_OR_RETURN(sum_t, ctx.AllocateUninitialized(2, word->dtype(), {batch, seq, hidden})); }
    if (ctx.has_output(1)) {
      // mask_index: the number of ones in each row of the mask (all tokens without one).
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * mi, ctx.Allocate(1, DataType::kInt32, {batch}));
      for (int64_t b = 0; b < batch; ++b) {
        int32_t count = 0;
        if (mask != nullptr) {
          for (int64_t s = 0; s < seq; ++s) count += mask->data<int32_t>()[b * seq + s] != 0;
        } else {
          count = static_cast<int32_t>(seq);
        }
        mi->mutable_data<int32_t>()[b] = mask_index_type_ == 0 ? 0 : count;
      }
    }
    FloatIn wi(*word), pi(*pos), gi(*gamma), bi(*beta);
    std::optional<FloatIn> si;
    if (seg_emb != nullptr && seg != nullptr) si.emplace(*seg_emb);
    FloatOut out(y);
    std::optional<FloatOut> sum;
    if (sum_t != nullptr) sum.emplace(sum_t);
    const int32_t* idp = ids->data<int32_t>();
    // Indices are checked before any row is written: an out-of-range id is the caller's error.
    for (int64_t t = 0; t < batch * seq; ++t) {
      const int64_t p = pos_ids != nullptr ? pos_ids->data<int32_t>()[(pos_ids->dim(0) == 1 ? 0 : t / seq) * seq + t % seq]
                                           : t % seq;
      if (idp[t] < 0 || idp[t] >= word->dim(0) || p < 0 || p >= pos->dim(0) ||
          (si && (seg->data<int32_t>()[t] < 0 || seg->data<int32_t>()[t] >= seg_emb->dim(0)))) {
        return InvalidArgument(std::string(op) + ": token " + std::to_string(t) + " indexes past an embedding table (id " +
                               std::to_string(idp[t]) + ", position " + std::to_string(p) + ")");
      }
    }
    ParallelFor(ctx, batch * seq, hidden * 6, [&](int64_t t0, int64_t t1) {
      std::vector<float> row(hidden);
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t p =
            pos_ids != nullptr ? pos_ids->data<int32_t>()[(pos_ids->dim(0) == 1 ? 0 : t / seq) * seq + t % seq] : t % seq;
        const float* w = wi.data + idp[t] * hidden;
        const float* pe = pi.data + p * hidden;
        float* s = sum ? sum->data + t * hidden : row.data();
        for (int64_t j = 0; j < hidden; ++j) s[j] = w[j] + pe[j];
        if (si) {
          const float* se = si->data + seg->data<int32_t>()[t] * hidden;
          for (int64_t j = 0; j < hidden; ++j) s[j] += se[j];
        }
        NormalizeOne(s, hidden, false, epsilon_, gi.data, bi.data, out.data + t * hidden);
      }
    });
    out.Finish();
    if (sum) sum->Finish();
    return Status::Ok();
  }

 private:
  float epsilon_;
  int64_t mask_index_type_;
};

}  // namespace

Status RegisterNormOps(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "SkipLayerNormalization", 1, kOpenEnded,
                                             Make<SkipNormKernel>(/*rms=*/false)));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "SkipSimplifiedLayerNormalization", 1, kOpenEnded,
                                             Make<SkipNormKernel>(/*rms=*/true)));
  // ONNX Runtime registers SimplifiedLayerNormalization (and LayerNormalization before ONNX defined
  // it in opset 17) in the default domain; exporters also write it under com.microsoft.
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "SimplifiedLayerNormalization", 1, kOpenEnded, Make<SimplifiedNormKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kMsDomain, "SimplifiedLayerNormalization", 1, kOpenEnded, Make<SimplifiedNormKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxflowDomain, internal_ops::kAddLayerNormalization,
                                             internal_ops::kVersion, kOpenEnded,
                                             Make<SkipNormKernel>(/*rms=*/false, /*any_broadcast=*/true)));
  ONNXFLOW_ASSIGN_OR_RETURN(KernelFactory ln, Adapt(registry, kOnnxDomain, "LayerNormalization", 17, nullptr));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "LayerNormalization", 1, 16, ln));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "LayerNormalization", 1, kOpenEnded, ln));
  return registry.Register(kMsDomain, "EmbedLayerNormalization", 1, kOpenEnded, Make<EmbedLayerNormKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
