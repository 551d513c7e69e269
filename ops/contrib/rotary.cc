// com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache): the contrib form of
// RoPE (the ONNX opset-23 op takes its inputs in another order and its position_ids may be
// absent). input is (B, S, hidden) or (B, N, S, H); position_ids is (B, S), or (1) holding the
// position of the first token (the rest follow it).
#include "ops/contrib/attention_core.h"
#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace contrib {
namespace {

class RotaryEmbeddingKernel : public OpKernel {
 public:
  explicit RotaryEmbeddingKernel(const KernelInfo& info)
      : interleaved_(info.GetInt("interleaved", 0) != 0),
        heads_(info.GetInt("num_heads", 0)),
        rotary_dim_(info.GetInt("rotary_embedding_dim", 0)),
        packed_batching_(info.GetInt("is_packed_batching", 0) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    const char* op = "RotaryEmbedding";
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* pos, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* cos, ctx.RequireTensor(2));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* sin, ctx.RequireTensor(3));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*x, op, "input"));
    if (packed_batching_) return Unimplemented("RotaryEmbedding with is_packed_batching=1");
    if (cos->rank() != 2 || sin->shape() != cos->shape() || cos->dtype() != x->dtype() || sin->dtype() != x->dtype()) {
      return InvalidArgument("RotaryEmbedding: cos_cache and sin_cache must be (max_sequence_length, rotary_dim / 2) of input's type");
    }
    if (x->rank() != 3 && x->rank() != 4) return InvalidArgument("RotaryEmbedding: input must be 3-D or 4-D, got " + ShapeToString(x->shape()));
    const int64_t batch = x->dim(0);
    const int64_t half = cos->dim(1), rows = cos->dim(0);
    const int64_t rot = rotary_dim_ > 0 ? rotary_dim_ : 2 * half;
    int64_t heads, seq, hs;
    if (x->rank() == 4) {
      heads = x->dim(1);
      seq = x->dim(2);
      hs = x->dim(3);
    } else {
      seq = x->dim(1);
      hs = heads_ > 0 ? x->dim(2) / heads_ : rot;
      heads = hs > 0 ? x->dim(2) / hs : 0;
      if (hs <= 0 || heads * hs != x->dim(2)) {
        return InvalidArgument("RotaryEmbedding: hidden size " + std::to_string(x->dim(2)) + " does not split into heads of " +
                               std::to_string(hs));
      }
    }
    if (rot != 2 * half || rot > hs) {
      return InvalidArgument("RotaryEmbedding: the caches hold " + std::to_string(half) + " angles for a rotary dim of " +
                             std::to_string(rot) + " in heads of " + std::to_string(hs));
    }
    if (pos->dtype() != DataType::kInt64 || (pos->size() != 1 && pos->size() != batch * seq)) {
      return InvalidArgument(std::string("RotaryEmbedding: position_ids must be int64 (1) or (batch, sequence), got ") +
                             DataTypeName(pos->dtype()) + " " + ShapeToString(pos->shape()));
    }
    const int64_t* pd = pos->data<int64_t>();
    for (int64_t i = 0; i < batch * seq; ++i) {
      const int64_t p = pos->size() == 1 ? pd[0] + i % seq : pd[i];
      if (p < 0 || p >= rows) {
        return InvalidArgument("RotaryEmbedding: position " + std::to_string(p) + " is past the cos/sin cache (" +
                               std::to_string(rows) + " rows)");
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    if (y->size() == 0) return Status::Ok();
    FloatIn xi(*x), ci(*cos), si(*sin);
    FloatOut out(y);
    std::copy(xi.data, xi.data + x->size(), out.data);
    // One task per (batch, token): every head of the token rotates by the same angles.
    ParallelFor(ctx, batch * seq, heads * hs, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t b = t / seq, s = t % seq;
        const int64_t p = pos->size() == 1 ? pd[0] + s : pd[t];
        for (int64_t h = 0; h < heads; ++h) {
          float* v = x->rank() == 4 ? out.data + ((b * heads + h) * seq + s) * hs : out.data + (t * heads + h) * hs;
          RotateHead(v, rot, ci.data + p * half, si.data + p * half, interleaved_);
        }
      }
    });
    out.Finish();
    return Status::Ok();
  }

 private:
  bool interleaved_;
  int64_t heads_, rotary_dim_;
  bool packed_batching_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterRotaryEmbedding(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "RotaryEmbedding", 1, kOpenEnded, Make<RotaryEmbeddingKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
