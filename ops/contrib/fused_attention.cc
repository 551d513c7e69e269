// com.onnxflow FusedAttention (fused_attention.h): the plain export's attention subgraph as one
// kernel on RunAttention. Q, K and V are read in place in the (B, S, N, D) layout the projections
// were reshaped into, so the three Transposes into heads, the score tensor and its Div/Add/Softmax
// passes, and the Transpose back are all gone.
#include "ops/contrib/fused_attention.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "ops/contrib/attention_core.h"
#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/math/gemm_scratch.h"

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
    if (mask != nullptr && !IsFloatLike(mask->dtype())) {
      return InvalidArgument(std::string(op) + ": the mask must be float, float16 or bfloat16, got " +
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
    const DataType y_type = spec_.output_type != 0 ? static_cast<DataType>(spec_.output_type) : q->dtype();
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, y_type, out_shape));
    if (y->size() == 0) return Status::Ok();

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
    // Element strides: the data pointers are set where the operands' types are known (Run).
    p.q = view(nullptr, qd, spec_.q_bnsd);
    p.k = view(nullptr, kd, spec_.kv_bnsd);
    p.v = view(nullptr, vd, spec_.kv_bnsd);

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
    if (spec_.output_bsnd) {
      p.out = {nullptr, sq * heads * dv, dv, heads * dv};
    } else {
      p.out = {nullptr, heads * sq * dv, sq * dv, dv};
    }
    Run(o, *y, p, ctx.threads());
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
      if (!IsFloatLike(t->dtype())) {
        return InvalidArgument(std::string(op) + ": k and v must be float, float16 or bfloat16, got " +
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

  // Runs `p` (strides set, data pointers not) on o's tensors into y. Float operands and output are
  // read and written in place. With any of 16 bits (a float16 model's stored activations), one
  // head at a time: its 16-bit q, k or v rows widened into float scratch, its 16-bit output rows
  // rounded from it, and the float ones still in place (a decoder's float cache is not copied);
  // no float copy of a whole 16-bit operand exists.
  static void Run(const Operands& o, Tensor& y, AttentionProblem p, int threads) {
    const auto floats = [](const Tensor& t) { return t.dtype() == DataType::kFloat ? t.data<float>() : nullptr; };
    const float* const qf = floats(*o.q);
    const float* const kf = floats(*o.k) != nullptr ? floats(*o.k) + o.k_offset : nullptr;
    const float* const vf = floats(*o.v) != nullptr ? floats(*o.v) + o.v_offset : nullptr;
    float* const yf = y.dtype() == DataType::kFloat ? y.mutable_data<float>() : nullptr;
    if (qf != nullptr && kf != nullptr && vf != nullptr && yf != nullptr) {
      p.q.data = qf;
      p.k.data = kf;
      p.v.data = vf;
      p.out.data = yf;
      RunAttention(p, threads);
      return;
    }
    const int64_t sq = p.q_len, sk = p.kv_len, d = p.head_size, dv = p.v_head_size;
    const int64_t group = p.heads / std::max<int64_t>(p.kv_heads, 1);
    // `rows` rows of `cols` 16-bit values of t from element `first`, `stride` apart, into dst.
    const auto widen = [](const Tensor& t, int64_t first, int64_t stride, int64_t rows, int64_t cols, float* dst) {
      for (int64_t r = 0; r < rows; ++r) {
        WidenHalves(t.dtype(), static_cast<const uint16_t*>(t.raw_data()) + first + r * stride, dst + r * cols, cols);
      }
    };
    // Heads split over the cores, each task with scratch for one head's 16-bit operands.
    const int64_t scratch = (qf ? 0 : sq * d) + (kf ? 0 : sk * d) + (vf ? 0 : sk * dv) + (yf ? 0 : sq * dv);
    ParallelFor(threads, p.batch * p.heads, MacCost(sq * sk * (d + dv)), [&](int64_t t0, int64_t t1) {
      // From the GEMM's scratch free list: a fresh vector of ViT-S's 200 KB came from a new
      // mapping each call, its page faults 11% of the attention's time.
      const AlignedFloats buf = AlignedFloats::Make(std::max<int64_t>(scratch, 1), /*zero=*/false);
      float* free = buf.get();
      const auto take = [&free](int64_t n) { return std::exchange(free, free + n); };
      float* const qb = qf ? nullptr : take(sq * d);
      float* const kb = kf ? nullptr : take(sk * d);
      float* const vb = vf ? nullptr : take(sk * dv);
      float* const ob = yf ? nullptr : take(sq * dv);
      AttentionProblem one = p;
      one.batch = one.heads = one.kv_heads = 1;
      one.bias_batch = one.bias_head = 0;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t b = t / p.heads, h = t % p.heads, kvh = h / group;
        const int64_t q0 = b * p.q.batch + h * p.q.head, k0 = b * p.k.batch + kvh * p.k.head;
        const int64_t v0 = b * p.v.batch + kvh * p.v.head, y0 = b * p.out.batch + h * p.out.head;
        if (qf) {
          one.q = {qf + q0, 0, 0, p.q.row};
        } else {
          widen(*o.q, q0, p.q.row, sq, d, qb);
          one.q = {qb, 0, 0, d};
        }
        if (kf) {
          one.k = {kf + k0, 0, 0, p.k.row};
        } else {
          widen(*o.k, o.k_offset + k0, p.k.row, sk, d, kb);
          one.k = {kb, 0, 0, d};
        }
        if (vf) {
          one.v = {vf + v0, 0, 0, p.v.row};
        } else {
          widen(*o.v, o.v_offset + v0, p.v.row, sk, dv, vb);
          one.v = {vb, 0, 0, dv};
        }
        one.out = yf ? HeadOut{yf + y0, 0, 0, p.out.row} : HeadOut{ob, 0, 0, dv};
        if (p.bias != nullptr) one.bias = p.bias + b * p.bias_batch + h * p.bias_head;
        RunAttention(one, 1);
        if (yf) continue;
        for (int64_t r = 0; r < sq; ++r) {
          NarrowFloats(ob + r * dv, y.dtype(), static_cast<uint16_t*>(y.mutable_raw_data()) + y0 + r * p.out.row, dv);
        }
      }
    });
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
