// com.microsoft Attention (BERT/GPT-2 self-attention with the QKV projection inside),
// MultiHeadAttention (projected Q, K, V; cross attention; key-value cache) and
// GroupQueryAttention (LLaMA-style decoders: fewer KV heads, rotary embedding, a cache written at
// each batch entry's own length), all on RunAttention (attention_core.h). Inputs of float16 and
// bfloat16 compute in float.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "ops/contrib/attention_core.h"
#include "ops/contrib/self_attention.h"
#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/math/gemm.h"

namespace onnxflow {
namespace contrib {
namespace {

// A 0/1 key mask or key-range index for batch entries (ONNX Runtime's mask_index and
// key_padding_mask formats): fills the problem's key ranges or additive key / row terms.
Status ApplyMask(const Tensor& mask, int64_t batch, int64_t q_len, int64_t total, int64_t past, float mask_value,
                 const char* op, std::vector<float>* store, AttentionProblem* p) {
  if (mask.dtype() != DataType::kInt32) {
    return InvalidArgument(std::string(op) + ": the mask must be int32, got " + DataTypeName(mask.dtype()));
  }
  const int32_t* m = mask.data<int32_t>();
  const Shape& s = mask.shape();
  // Right padding: valid lengths; (3 * batch + 2) starts with them too (its other entries are
  // the query and key start offsets of packed sequences, which ONNX Runtime's CPU kernel also
  // reads no further than the lengths).
  if (s.size() == 1 && (s[0] == batch || s[0] == 3 * batch + 2)) {
    p->key_end.assign(m, m + batch);
    return Status::Ok();
  }
  if (s.size() == 1 && s[0] == 2 * batch) {  // left padding: exclusive ends, then inclusive starts
    p->key_end.assign(m, m + batch);
    p->key_begin.assign(m + batch, m + 2 * batch);
    return Status::Ok();
  }
  if (s.size() == 2 && s[0] == batch && s[1] == total) {
    store->resize(batch * total);
    for (int64_t i = 0; i < batch * total; ++i) (*store)[i] = m[i] == 0 ? mask_value : 0.0f;
    p->key_add = store->data();
    return Status::Ok();
  }
  if (s.size() == 3 && s[0] == batch && s[1] == q_len && s[2] == total) {
    store->resize(batch * q_len * total);
    for (int64_t i = 0; i < batch * q_len * total; ++i) (*store)[i] = m[i] == 0 ? mask_value : 0.0f;
    p->row_add = store->data();
    p->row_add_row = total;
    p->row_add_batch = q_len * total;
    return Status::Ok();
  }
  if (s.size() == 4 && s[0] == batch && s[1] == 1 && s[2] == s[3] && s[2] >= past + q_len && s[3] >= total) {
    // (batch, 1, max, max): row past + i, the first `total` columns.
    const int64_t max = s[2];
    store->assign(batch * q_len * total, 0.0f);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < q_len; ++i) {
        for (int64_t j = 0; j < total; ++j) {
          (*store)[(b * q_len + i) * total + j] = m[(b * max + past + i) * max + j] == 0 ? mask_value : 0.0f;
        }
      }
    }
    p->row_add = store->data();
    p->row_add_row = total;
    p->row_add_batch = q_len * total;
    return Status::Ok();
  }
  return InvalidArgument(std::string(op) + ": mask of shape " + ShapeToString(s) +
                         " fits none of (batch), (2 * batch), (3 * batch + 2), (batch, " +
                         std::to_string(total) + "), (batch, " + std::to_string(q_len) + ", " + std::to_string(total) +
                         "), (batch, 1, max, max) for batch " + std::to_string(batch));
}

// attention_bias (batch or 1, heads or 1, q_len, total), float-like.
Status ApplyBias(const Tensor& bias, int64_t batch, int64_t heads, int64_t q_len, int64_t total, const char* op,
                 std::optional<FloatIn>* store, AttentionProblem* p) {
  const Shape& s = bias.shape();
  if (!IsFloatLike(bias.dtype()) || s.size() != 4 || (s[0] != 1 && s[0] != batch) || (s[1] != 1 && s[1] != heads) ||
      s[2] != q_len || s[3] != total) {
    return InvalidArgument(std::string(op) + ": attention_bias must be (" + std::to_string(batch) + " or 1, " +
                           std::to_string(heads) + " or 1, " + std::to_string(q_len) + ", " + std::to_string(total) +
                           "), got " + DataTypeName(bias.dtype()) + " " + ShapeToString(s));
  }
  store->emplace(bias);
  p->bias = (*store)->data;
  p->bias_row = total;
  p->bias_head = s[1] == 1 ? 0 : q_len * total;
  p->bias_batch = s[0] == 1 ? 0 : s[1] * q_len * total;
  return Status::Ok();
}

// The problem Attention and MultiHeadAttention start from: `heads` query and key-value heads, `seq`
// new keys after `past` cached ones (queries `seq` long, offset by `past` for the causal mask), the
// scale 1 / sqrt(head size) unless one is given (non-zero), ONNX Runtime's additive mask value.
AttentionProblem SelfProblem(int64_t batch, int64_t heads, int64_t seq, int64_t past, int64_t hs, int64_t vhs,
                             float scale, bool causal, float mask_value) {
  AttentionProblem p;
  p.batch = batch;
  p.heads = p.kv_heads = heads;
  p.q_len = seq;
  p.kv_len = past + seq;
  p.head_size = hs;
  p.v_head_size = vhs;
  p.scale = scale != 0.0f ? scale : 1.0f / std::sqrt(static_cast<float>(hs));
  p.causal = causal;
  p.q_offset.assign(batch, past);
  p.mask_value = mask_value;
  return p;
}

// Copies `rows` rows of `width` floats (source row stride `ld`) to a dense destination.
void CopyRows(const float* src, int64_t ld, int64_t rows, int64_t width, float* dst) {
  for (int64_t r = 0; r < rows; ++r) std::copy(src + r * ld, src + r * ld + width, dst + r * width);
}

// present (batch, heads, past + new, size) = past (batch, heads, past, size) then the new rows,
// taken from a 3-D (batch, new, heads * size) projection with row stride `ld`, or with ld = 0 from
// a (batch, heads, new, size) tensor already in the cache layout.
void ConcatCache(const float* past, int64_t past_len, const float* fresh, int64_t ld, int64_t batch, int64_t heads,
                 int64_t new_len, int64_t size, float* present) {
  const int64_t total = past_len + new_len;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      float* dst = present + (b * heads + h) * total * size;
      if (past_len > 0) std::copy(past + (b * heads + h) * past_len * size, past + (b * heads + h + 1) * past_len * size, dst);
      const float* rows = ld > 0 ? fresh + b * new_len * ld + h * size : fresh + (b * heads + h) * new_len * size;
      CopyRows(rows, ld > 0 ? ld : size, new_len, size, dst + past_len * size);
    }
  }
}

}  // namespace

Result<SelfAttentionConfig> SelfAttentionConfig::Parse(const KernelInfo& info, const char* op) {
  SelfAttentionConfig c;
  c.op = op;
  ONNXFLOW_ASSIGN_OR_RETURN(c.heads, info.RequireInt("num_heads"));
  if (c.heads <= 0) return InvalidArgument(std::string(op) + ": num_heads must be positive");
  if (info.GetInt("do_rotary", 0) != 0) {
    return Unimplemented(std::string(op) + " with do_rotary=1 (ONNX Runtime's CPU provider rejects it too)");
  }
  if (info.GetInt("past_present_share_buffer", 0) != 0) {
    return Unimplemented(std::string(op) + " with past_present_share_buffer=1 (a CUDA-provider form)");
  }
  c.sizes = info.GetInts("qkv_hidden_sizes");
  if (!c.sizes.empty() && c.sizes.size() != 3) return InvalidArgument(std::string(op) + ": qkv_hidden_sizes must have 3 values");
  c.scale = info.GetFloat("scale", 0.0f);
  c.mask_filter_value = info.GetFloat("mask_filter_value", -10000.0f);
  c.unidirectional = info.GetInt("unidirectional", 0) != 0;
  return c;
}

Status SelfAttentionConfig::Split(int64_t width, int64_t* qh, int64_t* kh, int64_t* vh) const {
  *qh = width / 3;
  *kh = width / 3;
  *vh = width - 2 * (width / 3);
  if (!sizes.empty()) {
    *qh = sizes[0];
    *kh = sizes[1];
    *vh = sizes[2];
  }
  if (*qh + *kh + *vh != width || *qh != *kh || *qh % heads != 0 || *vh % heads != 0) {
    return InvalidArgument(std::string(op) + ": weights of width " + std::to_string(width) +
                           " do not split into Q, K, V widths of " + std::to_string(heads) + " heads each");
  }
  return Status::Ok();
}

Status SelfAttentionConfig::Attend(KernelContext& ctx, const Projected& in) const {
  const int64_t batch = in.batch, seq = in.seq, qh = in.qh, kh = in.kh, vh = in.vh, width = qh + kh + vh;
  const int64_t hs = qh / heads, vhs = vh / heads;
  const Tensor* past = in.past;
  int64_t past_len = 0;
  if (past != nullptr) {
    if (past->rank() != 5 || past->dim(0) != 2 || past->dim(1) != batch || past->dim(2) != heads || past->dim(4) != hs ||
        hs != vhs || past->dtype() != in.type) {
      return InvalidArgument(std::string(op) + ": past must be (2, " + std::to_string(batch) + ", " + std::to_string(heads) +
                             ", past, " + std::to_string(hs) + ") of " + DataTypeName(in.type) + ", got " +
                             ShapeToString(past->shape()));
    }
    past_len = past->dim(3);
  }
  const int64_t total = past_len + seq;
  const float* qkv = in.qkv;

  AttentionProblem p = SelfProblem(batch, heads, seq, past_len, hs, vhs, scale, unidirectional, mask_filter_value);
  p.q = {qkv, seq * width, hs, width};
  FloatScratch present_store;
  Tensor* present = nullptr;
  if (ctx.has_output(1)) {
    ONNXFLOW_ASSIGN_OR_RETURN(present, ctx.AllocateUninitialized(1, in.type, {2, batch, heads, total, hs}));
  }
  if (past != nullptr || present != nullptr) {
    float* pres = nullptr;
    if (present != nullptr && present->dtype() == DataType::kFloat) {
      pres = present->mutable_data<float>();
    } else {
      pres = present_store.Take(2 * batch * heads * total * hs, false);
    }
    std::optional<FloatIn> pi;
    if (past != nullptr) pi.emplace(*past);
    const int64_t half = batch * heads * past_len * hs, phalf = batch * heads * total * hs;
    ConcatCache(pi ? pi->data : nullptr, past_len, qkv + qh, width, batch, heads, seq, hs, pres);
    ConcatCache(pi ? pi->data + half : nullptr, past_len, qkv + qh + kh, width, batch, heads, seq, hs, pres + phalf);
    if (present != nullptr && present->dtype() != DataType::kFloat) StoreFloats(pres, present->size(), present);
    p.k = {pres, heads * total * hs, total * hs, hs};
    p.v = {pres + phalf, heads * total * hs, total * hs, hs};
  } else {
    p.k = {qkv + qh, seq * width, hs, width};
    p.v = {qkv + qh + kh, seq * width, vhs, width};
  }
  std::vector<float> mask_store;
  if (in.mask != nullptr) {
    ONNXFLOW_RETURN_IF_ERROR(ApplyMask(*in.mask, batch, seq, total, past_len, mask_filter_value, op, &mask_store, &p));
  }
  std::optional<FloatIn> bias_store;
  if (in.attention_bias != nullptr) {
    ONNXFLOW_RETURN_IF_ERROR(ApplyBias(*in.attention_bias, batch, heads, seq, total, op, &bias_store, &p));
  }
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, in.type, {batch, seq, vh}));
  FloatOut out(y);
  p.out = {out.data, seq * vh, vhs, vh};
  RunAttention(p, ctx.threads());
  out.Finish();
  return Status::Ok();
}

namespace {

// ---------------------------------------------------------------------------------------------
// Attention(input, weights, bias?, mask_index?, past?, attention_bias?, past_sequence_length?)
//   -> output, present?
class AttentionKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<AttentionKernel>(new AttentionKernel());
    ONNXFLOW_ASSIGN_OR_RETURN(k->config_, SelfAttentionConfig::Parse(info, "Attention"));
    const Tensor* w = info.constant_input(1);
    if (w != nullptr && w->dtype() == DataType::kFloat && w->rank() == 2 && w->size() > 0) {
      k->packed_w_.emplace(PackB(w->data<float>(), w->dim(1), false, w->dim(0), w->dim(1)));
      k->packed_shape_ = w->shape();
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*x, "Attention", "input"));
    if (x->rank() != 3 || w->rank() != 2 || w->dim(0) != x->dim(2) || w->dtype() != x->dtype()) {
      return InvalidArgument("Attention: input must be (batch, sequence, hidden) and weights (hidden, 3 * hidden) of its type; got " +
                             ShapeToString(x->shape()) + " and " + ShapeToString(w->shape()));
    }
    const int64_t batch = x->dim(0), seq = x->dim(1), in = x->dim(2), width = w->dim(1);
    SelfAttentionConfig::Projected proj;
    ONNXFLOW_RETURN_IF_ERROR(config_.Split(width, &proj.qh, &proj.kh, &proj.vh));
    const Tensor* bias = ctx.input_tensor(2);
    if (bias != nullptr && (bias->size() != width || bias->dtype() != x->dtype())) {
      return InvalidArgument("Attention: bias must have " + std::to_string(width) + " values of input's type");
    }

    // QKV = input x weights + bias, one GEMM over every token.
    FloatIn xi(*x);
    std::vector<float> qkv(static_cast<size_t>(batch * seq * width));
    {
      GemmEpilogue ep;
      std::optional<FloatIn> bi;
      if (bias != nullptr) {
        bi.emplace(*bias);
        ep.col_bias = bi->data;
      }
      std::optional<FloatIn> wi;
      GemmInputB wb;
      if (packed_w_.has_value() && w->dtype() == DataType::kFloat && w->shape() == packed_shape_) {
        wb.packed = &*packed_w_;
      } else {
        wi.emplace(*w);
        wb.data = wi->data;
        wb.ld = width;
      }
      Sgemm(batch * seq, width, in, GemmInputA{nullptr, xi.data, in, false, 1.0f}, wb, qkv.data(), width, ep, ctx.threads());
    }
    proj.qkv = qkv.data();
    proj.batch = batch;
    proj.seq = seq;
    proj.type = x->dtype();
    proj.past = ctx.input_tensor(4);
    proj.mask = ctx.input_tensor(3);
    proj.attention_bias = ctx.input_tensor(5);
    return config_.Attend(ctx, proj);
  }

 private:
  AttentionKernel() = default;
  SelfAttentionConfig config_;
  std::optional<PackedB> packed_w_;
  Shape packed_shape_;
};

// ---------------------------------------------------------------------------------------------
// MultiHeadAttention(query, key?, value?, bias?, key_padding_mask?, attention_bias?, past_key?,
//   past_value?) -> output, present_key?, present_value?
// query (B, S, D); key/value (B, L, D) projected, or (B, N, L, H) already in cache layout (cross
// attention's cached keys: no bias); past_key/past_value (B, N, P, H) come before either.
class MultiHeadAttentionKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<MultiHeadAttentionKernel>(new MultiHeadAttentionKernel(info));
    ONNXFLOW_ASSIGN_OR_RETURN(k->heads_, info.RequireInt("num_heads"));
    if (k->heads_ <= 0) return InvalidArgument("MultiHeadAttention: num_heads must be positive");
    if (info.has_input(8) || info.has_input(9)) {
      return Unimplemented("MultiHeadAttention with past_sequence_length or cache_indirection (beam-search decoding)");
    }
    if (info.has_output(3)) return Unimplemented("MultiHeadAttention's qk output");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "MultiHeadAttention";
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*q, op, "query"));
    const Tensor* key = ctx.input_tensor(1);
    const Tensor* value = ctx.input_tensor(2);
    if (q->rank() != 3 || key == nullptr || value == nullptr) {
      return Unimplemented("MultiHeadAttention with packed QKV or packed KV inputs (query (B, S, D) with separate key "
                           "and value are supported)");
    }
    const int64_t batch = q->dim(0), seq = q->dim(1), d = q->dim(2);
    if (d % heads_ != 0) return InvalidArgument("MultiHeadAttention: query width " + std::to_string(d) + " is not a multiple of num_heads");
    const int64_t hs = d / heads_;
    const bool bnsh = key->rank() == 4;
    int64_t kv_len = 0, vd = 0;
    if (bnsh) {
      if (key->dim(0) != batch || key->dim(1) != heads_ || key->dim(3) != hs || value->rank() != 4 ||
          value->dim(0) != batch || value->dim(1) != heads_ || value->dim(2) != key->dim(2)) {
        return InvalidArgument("MultiHeadAttention: key/value in (B, N, L, H) form must be (" + std::to_string(batch) + ", " +
                               std::to_string(heads_) + ", L, " + std::to_string(hs) + "), got " +
                               ShapeToString(key->shape()) + " and " + ShapeToString(value->shape()));
      }
      kv_len = key->dim(2);
      vd = value->dim(3) * heads_;
    } else {
      if (key->rank() != 3 || key->dim(0) != batch || key->dim(2) != d || value->rank() != 3 || value->dim(0) != batch ||
          value->dim(1) != key->dim(1) || value->dim(2) % heads_ != 0) {
        return InvalidArgument("MultiHeadAttention: key and value must be (" + std::to_string(batch) + ", L, " +
                               std::to_string(d) + ") and (" + std::to_string(batch) + ", L, Dv), got " +
                               ShapeToString(key->shape()) + " and " + ShapeToString(value->shape()));
      }
      kv_len = key->dim(1);
      vd = value->dim(2);
    }
    const int64_t vhs = vd / heads_;
    FloatIn qi(*q), ki(*key), vi(*value);
    std::vector<float> qb, kb, vb;
    const float* qd = qi.data;
    const float* kd = ki.data;
    const float* vdp = vi.data;
    if (const Tensor* bias = ctx.input_tensor(3); bias != nullptr) {
      if (bias->size() != 2 * d + vd || bias->dtype() != q->dtype()) {
        return InvalidArgument("MultiHeadAttention: bias must have " + std::to_string(2 * d + vd) + " values");
      }
      FloatIn bi(*bias);
      auto add = [](const float* src, int64_t n, const float* b, int64_t w, std::vector<float>* dst) {
        dst->resize(n);
        for (int64_t i = 0; i < n; ++i) (*dst)[i] = src[i] + b[i % w];
      };
      add(qi.data, q->size(), bi.data, d, &qb);
      qd = qb.data();
      if (!bnsh) {
        add(ki.data, key->size(), bi.data + d, d, &kb);
        add(vi.data, value->size(), bi.data + 2 * d, vd, &vb);
        kd = kb.data();
        vdp = vb.data();
      }
    }
    const Tensor* past_k = ctx.input_tensor(6);
    const Tensor* past_v = ctx.input_tensor(7);
    int64_t past_len = 0;
    if ((past_k != nullptr) != (past_v != nullptr)) return InvalidArgument("MultiHeadAttention: past_key and past_value go together");
    if (past_k != nullptr) {
      if (past_k->rank() != 4 || past_k->dim(0) != batch || past_k->dim(1) != heads_ || past_k->dim(3) != hs ||
          past_v->rank() != 4 || past_v->dim(2) != past_k->dim(2) || past_v->dim(3) != vhs) {
        return InvalidArgument("MultiHeadAttention: past_key/past_value must be (B, N, P, H), got " +
                               ShapeToString(past_k->shape()) + " and " + ShapeToString(past_v->shape()));
      }
      past_len = past_k->dim(2);
    }
    const int64_t total = past_len + kv_len;

    AttentionProblem p = SelfProblem(batch, heads_, kv_len, past_len, hs, vhs, scale_, unidirectional_, mask_filter_value_);
    p.q_len = seq;
    p.q = {qd, seq * d, hs, d};

    Tensor* pk = nullptr;
    Tensor* pv = nullptr;
    if (ctx.has_output(1)) { ONNXFLOW_ASSIGN_OR_RETURN(pk, ctx.AllocateUninitialized(1, q->dtype(), {batch, heads_, total, hs})); }
    if (ctx.has_output(2)) { ONNXFLOW_ASSIGN_OR_RETURN(pv, ctx.AllocateUninitialized(2, q->dtype(), {batch, heads_, total, vhs})); }
    FloatScratch kc, vc;
    const bool in_place = bnsh && past_k == nullptr;  // key/value are the cache as they are
    const float* kcache = kd;
    const float* vcache = vdp;
    if (in_place) {
      p.k = {kd, heads_ * kv_len * hs, kv_len * hs, hs};
      p.v = {vdp, heads_ * kv_len * vhs, kv_len * vhs, vhs};
    } else {
      // The cache layout (B, N, total, H): past rows, then the new ones, built in a float present
      // itself (no second copy of the cache into it) or in scratch.
      auto cache = [&](Tensor* t, FloatScratch& scratch, int64_t n) {
        return t != nullptr && t->dtype() == DataType::kFloat ? t->mutable_data<float>() : scratch.Take(n, false);
      };
      float* kdst = cache(pk, kc, batch * heads_ * total * hs);
      float* vdst = cache(pv, vc, batch * heads_ * total * vhs);
      std::optional<FloatIn> pki, pvi;
      if (past_k != nullptr) {
        pki.emplace(*past_k);
        pvi.emplace(*past_v);
      }
      ConcatCache(pki ? pki->data : nullptr, past_len, kd, bnsh ? 0 : d, batch, heads_, kv_len, hs, kdst);
      ConcatCache(pvi ? pvi->data : nullptr, past_len, vdp, bnsh ? 0 : vd, batch, heads_, kv_len, vhs, vdst);
      kcache = kdst;
      vcache = vdst;
      p.k = {kdst, heads_ * total * hs, total * hs, hs};
      p.v = {vdst, heads_ * total * vhs, total * vhs, vhs};
    }
    auto store = [](const float* src, Tensor* t) {
      if (t == nullptr) return;
      if (t->dtype() != DataType::kFloat) {
        StoreFloats(src, t->size(), t);
      } else if (src != t->data<float>()) {
        std::copy(src, src + t->size(), t->mutable_data<float>());
      }
    };
    store(kcache, pk);
    store(vcache, pv);

    std::vector<float> mask_store;
    if (const Tensor* mask = ctx.input_tensor(4); mask != nullptr) {
      ONNXFLOW_RETURN_IF_ERROR(ApplyMask(*mask, batch, seq, total, past_len, mask_filter_value_, op, &mask_store, &p));
    }
    std::optional<FloatIn> bias_store;
    if (const Tensor* ab = ctx.input_tensor(5); ab != nullptr) {
      ONNXFLOW_RETURN_IF_ERROR(ApplyBias(*ab, batch, heads_, seq, total, op, &bias_store, &p));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, q->dtype(), {batch, seq, vd}));
    FloatOut out(y);
    p.out = {out.data, seq * vd, vhs, vd};
    RunAttention(p, ctx.threads());
    out.Finish();
    return Status::Ok();
  }

 private:
  explicit MultiHeadAttentionKernel(const KernelInfo& info)
      : scale_(info.GetFloat("scale", 0.0f)),
        mask_filter_value_(info.GetFloat("mask_filter_value", -10000.0f)),
        unidirectional_(info.GetInt("unidirectional", 0) != 0) {}

  int64_t heads_ = 0;
  float scale_, mask_filter_value_;
  bool unidirectional_;
};

// ---------------------------------------------------------------------------------------------
// GroupQueryAttention(query, key?, value?, past_key?, past_value?, seqlens_k, total_sequence_length,
//   cos_cache?, sin_cache?, position_ids?, attention_bias?, head_sink?) -> output, present_key,
//   present_value
// Batch entry b holds seqlens_k[b] + 1 tokens after this step; its new tokens go at rows
// [past_b, past_b + S) of the cache with past_b = seqlens_k[b] + 1 - S (0 for the first prompt,
// whose padding sits on the right).
class GroupQueryAttentionKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<GroupQueryAttentionKernel>(new GroupQueryAttentionKernel(info));
    ONNXFLOW_ASSIGN_OR_RETURN(k->heads_, info.RequireInt("num_heads"));
    ONNXFLOW_ASSIGN_OR_RETURN(k->kv_heads_, info.RequireInt("kv_num_heads"));
    if (k->heads_ <= 0 || k->kv_heads_ <= 0 || k->heads_ % k->kv_heads_ != 0) {
      return InvalidArgument("GroupQueryAttention: num_heads (" + std::to_string(k->heads_) +
                             ") must be a positive multiple of kv_num_heads (" + std::to_string(k->kv_heads_) + ")");
    }
    if (info.GetInt("sliding_window_cache", 0) != 0) return Unimplemented("GroupQueryAttention with sliding_window_cache=1");
    if (info.GetString("k_quant_type", "NONE") != "NONE" || info.GetString("v_quant_type", "NONE") != "NONE") {
      return Unimplemented("GroupQueryAttention with a quantized KV cache");
    }
    if (info.has_input(14) || info.has_input(15)) return Unimplemented("GroupQueryAttention's q_norm_weight/k_norm_weight");
    if (info.has_output(3)) return Unimplemented("GroupQueryAttention's output_qk");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "GroupQueryAttention";
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*q, op, "query"));
    const Tensor* key = ctx.input_tensor(1);
    const Tensor* value = ctx.input_tensor(2);
    if (q->rank() != 3) return InvalidArgument("GroupQueryAttention: query must be (batch, sequence, width), got " + ShapeToString(q->shape()));
    const int64_t batch = q->dim(0), seq = q->dim(1);
    int64_t hs = 0;
    const bool packed = key == nullptr;
    if (packed) {
      hs = q->dim(2) / (heads_ + 2 * kv_heads_);
      if (hs * (heads_ + 2 * kv_heads_) != q->dim(2)) return InvalidArgument("GroupQueryAttention: packed QKV width does not split into heads");
    } else {
      if (value == nullptr) return InvalidArgument("GroupQueryAttention: key and value go together");
      hs = q->dim(2) / heads_;
      if (key->rank() != 3 || key->dim(0) != batch || key->dim(1) != seq || key->dim(2) != kv_heads_ * hs ||
          value->shape() != key->shape()) {
        return InvalidArgument("GroupQueryAttention: key and value must be (" + std::to_string(batch) + ", " +
                               std::to_string(seq) + ", " + std::to_string(kv_heads_ * hs) + "), got " +
                               ShapeToString(key->shape()) + " and " + ShapeToString(value->shape()));
      }
    }
    const int64_t d = heads_ * hs, kvd = kv_heads_ * hs;
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* seqlens, ctx.RequireTensor(5));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* total_t, ctx.RequireTensor(6));
    if (seqlens->dtype() != DataType::kInt32 || seqlens->size() != batch || total_t->dtype() != DataType::kInt32 ||
        total_t->size() != 1) {
      return InvalidArgument("GroupQueryAttention: seqlens_k must be int32 (batch) and total_sequence_length an int32 scalar");
    }
    const int64_t total_seq = total_t->data<int32_t>()[0];
    const Tensor* past_k = ctx.input_tensor(3);
    const Tensor* past_v = ctx.input_tensor(4);
    int64_t past_buf = 0;
    if (past_k != nullptr) {
      if (past_v == nullptr || past_k->rank() != 4 || past_k->dim(0) != batch || past_k->dim(1) != kv_heads_ ||
          past_k->dim(3) != hs || past_v->shape() != past_k->shape()) {
        return InvalidArgument("GroupQueryAttention: past_key/past_value must be (" + std::to_string(batch) + ", " +
                               std::to_string(kv_heads_) + ", P, " + std::to_string(hs) + ")");
      }
      past_buf = past_k->dim(2);
    }
    const bool first_prompt = past_buf == 0 || (seq == total_seq && seq > 1);
    const int64_t present_len = std::max(total_seq, past_buf);
    std::vector<int64_t> past_lens(batch), totals(batch);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t t = static_cast<int64_t>(seqlens->data<int32_t>()[b]) + 1;
      totals[b] = t;
      past_lens[b] = first_prompt ? 0 : t - seq;
      if (t > present_len || past_lens[b] < 0 || past_lens[b] > past_buf || past_lens[b] + seq > present_len) {
        return InvalidArgument("GroupQueryAttention: seqlens_k[" + std::to_string(b) + "] = " + std::to_string(t - 1) +
                               " does not fit " + std::to_string(seq) + " new tokens after a past of " +
                               std::to_string(past_buf) + " rows (total_sequence_length " + std::to_string(total_seq) + ")");
      }
    }

    // Q, K, V as dense float (B, S, width) copies: rotary rotates them in place.
    DenseQkv qkv = CopyQkv(*q, key, value, batch * seq, d, kvd, packed);
    std::vector<float>& qd = qkv.q;
    std::vector<float>& kd = qkv.k;
    std::vector<float>& vd = qkv.v;
    if (do_rotary_) {
      const Tensor* cos = ctx.input_tensor(7);
      const Tensor* sin = ctx.input_tensor(8);
      if (cos == nullptr || sin == nullptr || cos->rank() != 2 || sin->shape() != cos->shape() || 2 * cos->dim(1) > hs) {
        return InvalidArgument("GroupQueryAttention: do_rotary needs cos_cache and sin_cache of shape (max, rotary_dim / 2)");
      }
      FloatIn ci(*cos), si(*sin);
      const int64_t half = cos->dim(1), rows = cos->dim(0);
      const Tensor* pos_ids = ctx.input_tensor(9);
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t s = 0; s < seq; ++s) {
          int64_t pos = past_lens[b] + s;
          if (pos_ids != nullptr && pos_ids->dtype() == DataType::kInt64 && pos_ids->size() == batch * seq) {
            pos = pos_ids->data<int64_t>()[b * seq + s];
          }
          if (pos < 0 || pos >= rows) {
            return InvalidArgument("GroupQueryAttention: position " + std::to_string(pos) + " is past the cos/sin cache (" +
                                   std::to_string(rows) + " rows)");
          }
          const float* c = ci.data + pos * half;
          const float* sn = si.data + pos * half;
          for (int64_t h = 0; h < heads_; ++h) RotateHead(qd.data() + (b * seq + s) * d + h * hs, 2 * half, c, sn, interleaved_);
          for (int64_t h = 0; h < kv_heads_; ++h) RotateHead(kd.data() + (b * seq + s) * kvd + h * hs, 2 * half, c, sn, interleaved_);
        }
      }
    }

    // The cache: past rows [0, past_b), then the new ones, then zeros (a shorter batch entry's rows
    // past its total; zeroing only those, not the whole present first, saved a fifth of a step's
    // attention time at 1024 cached tokens). It is extended in its own type: a 16-bit past is
    // copied as bytes and only the new rows are narrowed, and the attention reads a widened copy
    // of the present. (Widening the past, extending it in float and narrowing the whole present
    // back cost two conversions of the cache per step where one is needed.)
    if (past_k != nullptr && (past_k->dtype() != q->dtype() || past_v->dtype() != q->dtype())) {
      return InvalidArgument(std::string("GroupQueryAttention: past_key and past_value must have the query's type, ") +
                             DataTypeName(q->dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * pk, ctx.AllocateUninitialized(1, q->dtype(), {batch, kv_heads_, present_len, hs}));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * pv, ctx.AllocateUninitialized(2, q->dtype(), {batch, kv_heads_, present_len, hs}));
    const size_t es = ElementSize(q->dtype());
    auto put_rows = [&](const float* src, char* dst) {  // seq new rows of hs values, stride kvd
      for (int64_t r = 0; r < seq; ++r) {
        if (q->dtype() == DataType::kFloat) {
          std::copy(src + r * kvd, src + r * kvd + hs, reinterpret_cast<float*>(dst) + r * hs);
        } else {
          NarrowFloats(src + r * kvd, q->dtype(), dst + r * hs * es, hs);
        }
      }
    };
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < kv_heads_; ++h) {
        const int64_t head = (b * kv_heads_ + h) * present_len * hs;
        char* kdst = static_cast<char*>(pk->mutable_raw_data()) + head * es;
        char* vdst = static_cast<char*>(pv->mutable_raw_data()) + head * es;
        if (past_k != nullptr && past_lens[b] > 0) {
          const int64_t src = (b * kv_heads_ + h) * past_buf * hs;
          std::memcpy(kdst, static_cast<const char*>(past_k->raw_data()) + src * es, past_lens[b] * hs * es);
          std::memcpy(vdst, static_cast<const char*>(past_v->raw_data()) + src * es, past_lens[b] * hs * es);
        }
        put_rows(kd.data() + b * seq * kvd + h * hs, kdst + past_lens[b] * hs * es);
        put_rows(vd.data() + b * seq * kvd + h * hs, vdst + past_lens[b] * hs * es);
        const int64_t filled = (past_lens[b] + seq) * hs * es, all = present_len * hs * es;
        std::memset(kdst + filled, 0, all - filled);
        std::memset(vdst + filled, 0, all - filled);
      }
    }
    const FloatIn ko(*pk), vo(*pv);

    AttentionProblem p;
    p.batch = batch;
    p.heads = heads_;
    p.kv_heads = kv_heads_;
    p.q_len = seq;
    p.kv_len = present_len;
    p.head_size = p.v_head_size = hs;
    p.scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(hs));
    p.softcap = softcap_;
    p.causal = causal_;
    // local_window_size W: each query sees its own key and the W - 1 before it (ONNX Runtime's
    // CPU kernel and the sliding windows of Mistral-style models); W = 0 leaves no key at all, and
    // ONNX Runtime writes zeros there.
    p.window = local_window_ > 0 ? local_window_ - 1 : -1;
    p.q_offset = past_lens;
    p.key_end = totals;
    p.mask_value = -std::numeric_limits<float>::infinity();
    p.q = {qd.data(), seq * d, hs, d};
    p.k = {ko.data, kv_heads_ * present_len * hs, present_len * hs, hs};
    p.v = {vo.data, kv_heads_ * present_len * hs, present_len * hs, hs};
    std::optional<FloatIn> bias_store, sink_store;
    if (const Tensor* ab = ctx.input_tensor(10); ab != nullptr) {
      if (ab->dim(ab->rank() - 1) != present_len) {
        return InvalidArgument("GroupQueryAttention: attention_bias's last dim must be " + std::to_string(present_len));
      }
      ONNXFLOW_RETURN_IF_ERROR(ApplyBias(*ab, batch, heads_, seq, present_len, op, &bias_store, &p));
    }
    if (const Tensor* sink = ctx.input_tensor(11); sink != nullptr) {
      if (sink->size() != heads_ || !IsFloatLike(sink->dtype())) return InvalidArgument("GroupQueryAttention: head_sink must have num_heads values");
      sink_store.emplace(*sink);
      p.sink = sink_store->data;
    }
    p.smooth = smooth_softmax_;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, q->dtype(), {batch, seq, d}));
    FloatOut out(y);
    p.out = {out.data, seq * d, hs, d};
    if (local_window_ == 0) {
      std::fill(out.data, out.data + y->size(), 0.0f);
    } else {
      RunAttention(p, ctx.threads());
    }
    out.Finish();
    return Status::Ok();
  }

 private:
  explicit GroupQueryAttentionKernel(const KernelInfo& info)
      : scale_(info.GetFloat("scale", 0.0f)),
        softcap_(info.GetFloat("softcap", 0.0f)),
        local_window_(info.GetInt("local_window_size", -1)),
        causal_(info.GetInt("causal", 1) != 0),
        do_rotary_(info.GetInt("do_rotary", 0) != 0),
        interleaved_(info.GetInt("rotary_interleaved", 0) != 0),
        // ONNX Runtime turns the smooth softmax on for 1 alone, and its optimizer writes -1 (unset)
        // into every GroupQueryAttention it saves.
        smooth_softmax_(info.GetInt("smooth_softmax", 0) == 1) {}

  int64_t heads_ = 0, kv_heads_ = 0;
  float scale_, softcap_;
  int64_t local_window_;
  bool causal_, do_rotary_, interleaved_, smooth_softmax_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterAttentionOps(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "Attention", 1, kOpenEnded, Make<AttentionKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kMsDomain, "MultiHeadAttention", 1, kOpenEnded, Make<MultiHeadAttentionKernel>()));
  return registry.Register(kMsDomain, "GroupQueryAttention", 1, kOpenEnded, Make<GroupQueryAttentionKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
