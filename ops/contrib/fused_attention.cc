// com.onnxflow FusedAttention (fused_attention.h): the plain export's attention subgraph as one
// kernel on RunAttention. Q, K and V are read in place in the (B, S, N, D) layout the projections
// were reshaped into, so the three Transposes into heads, the score tensor and its Div/Add/Softmax
// passes, and the Transpose back are all gone.
#include "ops/contrib/fused_attention.h"

#include <algorithm>
#include <optional>

#include "ops/contrib/attention_core.h"
#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace contrib {
namespace {

// Broadcasts `dim` into `*target` (numpy: 1 stretches); false when they differ otherwise.
bool Join(int64_t dim, int64_t* target) {
  if (dim == *target || dim == 1) return true;
  if (*target == 1) {
    *target = dim;
    return true;
  }
  return false;
}

class FusedAttentionKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(FusedAttentionSpec spec, FusedAttentionSpec::Parse(info));
    return std::unique_ptr<OpKernel>(new FusedAttentionKernel(spec));
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "FusedAttention";
    Operands o;
    ONNXFLOW_RETURN_IF_ERROR(spec_.packed_heads > 0 ? Unpack(ctx, &o) : Separate(ctx, &o));
    const Tensor* q = o.q;
    const Shape &qd = o.qd, &kd = o.kd, &vd = o.vd;
    const Tensor* mask = ctx.input_tensor(3);
    if (mask != nullptr && mask->dtype() != q->dtype()) {
      return InvalidArgument(std::string(op) + ": q is " + DataTypeName(q->dtype()) + " but the mask is " +
                             DataTypeName(mask->dtype()));
    }
    const int q_seq = spec_.q_bnsd ? 2 : 1, q_head = spec_.q_bnsd ? 1 : 2;
    const int kv_seq = spec_.kv_bnsd ? 2 : 1, kv_head = spec_.kv_bnsd ? 1 : 2;
    const int64_t sq = qd[q_seq], sk = kd[kv_seq], d = qd[3], dv = vd[3];
    int64_t batch = qd[0], heads = qd[q_head];
    // Each head of k and v serves kv_repeat query heads (one head serves them all).
    auto kv_heads = [&](const Shape& t) { return t[kv_head] == 1 ? 1 : t[kv_head] * spec_.kv_repeat; };
    bool fits = Join(kd[0], &batch) && Join(vd[0], &batch) && Join(kv_heads(kd), &heads) && Join(kv_heads(vd), &heads);
    // The mask, right-aligned to (B, N, Sq, Sk). It may broadcast B and N like the operands; a mask
    // that would stretch the rows or keys of the scores makes them larger than attention's.
    Shape m4;
    if (mask != nullptr) {
      if (mask->rank() > 4) fits = false;
      m4.assign(4 - std::min<int64_t>(mask->rank(), 4), 1);
      for (int64_t i = 0; i < std::min<int64_t>(mask->rank(), 4); ++i) m4.push_back(mask->dim(i));
      fits = fits && Join(m4[0], &batch) && Join(m4[1], &heads) && (m4[2] == 1 || m4[2] == sq) &&
             (m4[3] == 1 || m4[3] == sk);
    }
    if (!fits) {
      return InvalidArgument(std::string(op) + ": q " + ShapeToString(qd) + ", k " + ShapeToString(kd) + ", v " +
                             ShapeToString(vd) +
                             (mask != nullptr ? ", mask " + ShapeToString(mask->shape()) : std::string()) +
                             " do not broadcast to (batch, heads, queries, keys) scores");
    }
    const Shape out_shape = spec_.output_bsnd ? Shape{batch, sq, heads, dv} : Shape{batch, heads, sq, dv};
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, q->dtype(), out_shape));
    if (y->size() == 0) return Status::Ok();

    // Widened once (float16, bfloat16); a packed input is one tensor.
    FloatIn qi(*q);
    std::optional<FloatIn> ki, vi;
    if (o.k != q) ki.emplace(*o.k);
    if (o.v != q) vi.emplace(*o.v);
    AttentionProblem p;
    p.batch = batch;
    p.heads = heads;  // a broadcast K or V has head stride 0
    p.q_len = sq;
    p.kv_len = sk;
    p.head_size = d;
    p.v_head_size = dv;
    p.scale = spec_.scale;
    // (B, S, N, D) read as (B, N, S, D): row stride N * D (a packed input's whole row), head stride
    // D; (B, N, S, D) as it is: row stride D, head stride S * D; 0 where broadcast.
    auto view = [&](const float* data, const Shape& t, bool bnsd) {
      if (bnsd) return HeadView{data, t[0] == 1 ? 0 : t[1] * t[2] * t[3], t[1] == 1 ? 0 : t[2] * t[3], t[3]};
      const int64_t row = o.row > 0 ? o.row : t[2] * t[3];
      return HeadView{data, t[0] == 1 ? 0 : t[1] * row, t[2] == 1 ? 0 : t[3], row};
    };
    p.kv_heads = heads % spec_.kv_repeat == 0 ? heads / spec_.kv_repeat : heads;
    p.q = view(qi.data, qd, spec_.q_bnsd);
    p.k = view((ki ? ki->data : qi.data) + o.k_offset, kd, spec_.kv_bnsd);
    p.v = view((vi ? vi->data : qi.data) + o.v_offset, vd, spec_.kv_bnsd);

    std::optional<FloatIn> mi;
    std::vector<float> widened;
    if (mask != nullptr) {
      mi.emplace(*mask);
      const float* m = mi->data;
      if (m4[3] == 1 && sk != 1) {  // one value for every key: spelled out per key
        const int64_t rows = m4[0] * m4[1] * m4[2];
        widened.resize(static_cast<size_t>(rows * sk));
        for (int64_t r = 0; r < rows; ++r) std::fill(widened.begin() + r * sk, widened.begin() + (r + 1) * sk, m[r]);
        m = widened.data();
      }
      p.bias = m;
      p.bias_row = m4[2] == 1 ? 0 : sk;
      p.bias_head = m4[1] == 1 ? 0 : m4[2] * sk;
      p.bias_batch = m4[0] == 1 ? 0 : m4[1] * m4[2] * sk;
    }
    FloatOut out(y);
    if (spec_.output_bsnd) {
      p.out = {out.data, sq * heads * dv, dv, heads * dv};
    } else {
      p.out = {out.data, heads * sq * dv, sq * dv, dv};
    }
    RunAttention(p, ctx.threads());
    out.Finish();
    return Status::Ok();
  }

 private:
  // q, k and v as the computation reads them: their tensors (one, when packed), their 4-D shapes,
  // and, when packed, the row stride and where k and v begin in a row.
  struct Operands {
    const Tensor *q = nullptr, *k = nullptr, *v = nullptr;
    Shape qd, kd, vd;
    int64_t row = 0, k_offset = 0, v_offset = 0;
  };

  Status Separate(KernelContext& ctx, Operands* o) const {
    const char* op = "FusedAttention";
    ONNXFLOW_ASSIGN_OR_RETURN(o->q, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(o->k, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(o->v, ctx.RequireTensor(2));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*o->q, op, "q"));
    for (const Tensor* t : {o->k, o->v}) {
      if (t->dtype() != o->q->dtype()) {
        return InvalidArgument(std::string(op) + ": q is " + DataTypeName(o->q->dtype()) + " but k or v is " +
                               DataTypeName(t->dtype()));
      }
    }
    // The sequence and head axes of q, k and v: (B, S, N, D), or (B, N, S, D) for a cache (and a
    // q in heads, broadcast over missing leading dimensions).
    o->qd = o->q->shape();
    if (spec_.q_bnsd && o->qd.size() < 4) o->qd.insert(o->qd.begin(), 4 - o->qd.size(), 1);
    o->kd = o->k->shape();
    o->vd = o->v->shape();
    const int kv_seq = spec_.kv_bnsd ? 2 : 1;
    if (o->qd.size() != 4 || o->kd.size() != 4 || o->vd.size() != 4 || o->kd[3] != o->qd[3] ||
        o->vd[kv_seq] != o->kd[kv_seq]) {
      const char* qs = spec_.q_bnsd ? "(B, N, Sq, D)" : "(B, Sq, N, D)";
      const char* kv = spec_.kv_bnsd ? "(B, N, Sk, D), (B, N, Sk, Dv)" : "(B, Sk, N, D), (B, Sk, N, Dv)";
      return InvalidArgument(std::string(op) + ": q, k, v must be " + qs + ", " + kv + "; got " +
                             ShapeToString(o->q->shape()) + ", " + ShapeToString(o->kd) + ", " + ShapeToString(o->vd));
    }
    return Status::Ok();
  }

  // A packed input of rows of N * (2 D + Dv), as (B, S) rows by the spec's Reshape entries: three
  // views of one tensor.
  Status Unpack(KernelContext& ctx, Operands* o) const {
    const char* op = "FusedAttention";
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* qkv, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*qkv, op, "qkv"));
    const int64_t n = spec_.packed_heads, d = spec_.packed_head_size, dv = spec_.packed_v_head_size;
    const int64_t width = n * (2 * d + dv);
    const int64_t rank = qkv->rank();
    const int64_t rows = rank >= 1 && qkv->dim(rank - 1) == width ? qkv->size() / width : -1;
    // Reshape's entries: 0 copies the input's dimension (not its last), -1 takes what is left.
    auto entry = [&](int64_t e, int64_t axis) { return e != 0 ? e : axis < rank - 1 ? qkv->dim(axis) : -2; };
    int64_t batch = entry(spec_.packed_batch, 0), seq = entry(spec_.packed_seq, 1);
    if (batch == -1 && seq > 0 && rows >= 0 && rows % seq == 0) batch = rows / seq;
    if (seq == -1 && batch > 0 && rows >= 0 && rows % batch == 0) seq = rows / batch;
    // batch * seq == rows, without multiplying numbers a model may make as large as it likes.
    const bool fits = rows >= 0 && batch >= 0 && seq >= 0 &&
                      (batch == 0 ? rows == 0 : rows % batch == 0 && rows / batch == seq);
    if (!fits) {
      return InvalidArgument(std::string(op) + ": the packed q, k, v " + ShapeToString(qkv->shape()) +
                             " is not (B, S) rows of " + std::to_string(width) + " for " + std::to_string(n) +
                             " heads of " + std::to_string(d) + " and " + std::to_string(dv) +
                             " with B, S as Reshape entries " + std::to_string(spec_.packed_batch) + ", " +
                             std::to_string(spec_.packed_seq));
    }
    o->q = o->k = o->v = qkv;
    o->qd = o->kd = {batch, seq, n, d};
    o->vd = {batch, seq, n, dv};
    o->row = width;
    o->k_offset = n * d;
    o->v_offset = 2 * n * d;
    return Status::Ok();
  }

  explicit FusedAttentionKernel(FusedAttentionSpec spec) : spec_(spec) {}
  FusedAttentionSpec spec_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterFusedAttention(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kFusedAttention, internal_ops::kVersion, kOpenEnded,
                           Make<FusedAttentionKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
