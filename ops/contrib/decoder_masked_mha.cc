// com.microsoft DecoderMaskedMultiHeadAttention: one decoding step of multi-head attention, as ONNX
// Runtime's generation tools write decoders. Self-attention over a key-value cache whose past and
// present are one buffer of the maximum length (past_present_share_buffer: the new key and value go
// to row past_sequence_length, and the step reads the cache where it lies), optionally through
// beam search's cache indirection; or cross-attention over (B, N, L, H) keys and values. It runs
// on RunAttention (attention_core.h): a one-row step reads the cache in place as dot products.
//
// DecoderMaskedMultiHeadAttention(query, key?, value?, mask_index?, attention_bias?, past_key?,
//   past_value?, past_sequence_length?, beam_width?, cache_indirection?, bias?)
//   -> output, present_key?, present_value?, qk?
// As ONNX Runtime's CPU kernel (contrib_ops/cpu/bert/decoder_masked_multihead_attention.cc, float
// only):
//  - query (B, 1, D), key/value (B, 1, D), or query packed (B, 1, 3D); bias (3D) added to each.
//  - mask_index (B, P + 1) int32: a 0 adds mask_filter_value to that key's score.
//  - attention_bias (B or 1, N or 1, 1, P + 1).
//  - scores = scale * q.k + attention_bias + mask. With cache_indirection (beam search; beam_width
//    defaults to 1), past key and value j of entry b are those of entry
//    (b / beam_width) * beam_width + cache_indirection[b, j]; the new one is b's own.
//  - past_sequence_length 0 (a first step over an empty cache) reads the one new key. (ONNX
//    Runtime 1.30's CPU kernel takes a 0 for "no past length given" and reads past_key's whole
//    length, writing the new row past the head's buffer; its outputs there are not a reference.)
//  - qk (output_qk = 1): those scores before the softmax, (B, N, 1, P + 1).
//  - cross-attention: no past_key and no present outputs; key/value (B, N, L, H), the bias added
//    to the query alone, no attention_bias.
//  - packed QKV: ONNX Runtime 1.30's CPU kernel fails on it (a reshape of the packed query); here
//    it is the unpacked computation of the same values.
//  - Refused: on the beam path, an attention_bias with a batch dimension (ONNX Runtime 1.30 reads
//    it at row (b / beam_width) * num_heads, past its end for some shapes);
//    past_present_share_buffer = 0 with a cache (it requires the shared
//    buffer); float16 (it registers float only). do_rotary, which ONNX Runtime 1.30's schema
//    refuses as an unknown attribute, is refused when set.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ops/contrib/attention_core.h"
#include "ops/contrib/common.h"
#include "ops/contrib/kv_cache.h"
#include "ops/contrib/register.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/vec/vec_ops.h"

namespace onnxflow {
namespace contrib {
namespace {

constexpr char kOp[] = "DecoderMaskedMultiHeadAttention";

Status Bad(const std::string& what) { return InvalidArgument(std::string(kOp) + ": " + what); }

class DecoderMaskedMhaKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<DecoderMaskedMhaKernel>(new DecoderMaskedMhaKernel(info));
    ONNXFLOW_ASSIGN_OR_RETURN(k->heads_, info.RequireInt("num_heads"));
    if (k->heads_ <= 0) return Bad("num_heads must be positive, got " + std::to_string(k->heads_));
    if (info.GetInt("do_rotary", 0) != 0) {
      return Unimplemented(std::string(kOp) + " with do_rotary=1 (ONNX Runtime 1.30's schema has no such attribute)");
    }
    k->self_ = info.has_input(5) || info.has_input(6) || info.has_output(1) || info.has_output(2);
    if (k->self_) {
      if (!info.has_input(5) || !info.has_input(6) || !info.has_output(1) || !info.has_output(2)) {
        return Bad("past_key, past_value, present_key and present_value go together (self-attention over the cache)");
      }
      if (info.GetInt("past_present_share_buffer", 0) == 0) {
        return Unimplemented(std::string(kOp) +
                             " with past_present_share_buffer=0 (ONNX Runtime's CPU kernel requires the shared buffer)");
      }
      if (!info.has_input(7)) return Bad("past_sequence_length is required with past_present_share_buffer");
    } else if (info.has_input(9)) {
      return Bad("cache_indirection needs past_key and past_value (self-attention)");
    }
    if (k->output_qk_ && !info.has_output(3)) return Bad("output_qk=1 needs the 'qk' output");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequireTensor(0));
    if (q->dtype() != DataType::kFloat) {
      return Bad(std::string("query must be float (ONNX Runtime's CPU kernel registers float only), got ") + DataTypeName(q->dtype()));
    }
    if (q->rank() != 3 || q->dim(1) != 1) {
      return Bad("query must be (batch, 1, width): one decoding step, got " + ShapeToString(q->shape()));
    }
    const Tensor* key = ctx.input_tensor(1);
    const Tensor* value = ctx.input_tensor(2);
    const int64_t batch = q->dim(0);
    if ((key == nullptr) != (value == nullptr)) return Bad("key and value must be both given or both absent (packed QKV)");
    const bool packed = key == nullptr;
    if (packed && !self_) return Bad("cross-attention needs key and value");
    const int64_t d = packed ? q->dim(2) / 3 : q->dim(2), hs = d / heads_;
    if (hs <= 0 || hs * heads_ != d || (packed && 3 * d != q->dim(2))) {
      return Bad("query width " + std::to_string(q->dim(2)) + " does not split into " + std::to_string(heads_) +
                 " heads" + (packed ? " of packed Q, K and V" : ""));
    }
    const Tensor* bias = ctx.input_tensor(10);
    if (bias != nullptr && (bias->dtype() != DataType::kFloat || bias->rank() != 1 || bias->dim(0) != 3 * d)) {
      return Bad("bias must be float (" + std::to_string(3 * d) + "), got " + ShapeToString(bias->shape()));
    }
    const float* bq = bias != nullptr ? bias->data<float>() : nullptr;

    // The query (with its bias) as (B, D).
    std::vector<float> qd(batch * d);
    const int64_t qw = q->dim(2);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < d; ++i) qd[b * d + i] = q->data<float>()[b * qw + i] + (bq ? bq[i] : 0.0f);
    }

    AttentionProblem p;
    p.batch = batch;
    p.heads = p.kv_heads = heads_;
    p.q_len = 1;
    p.head_size = p.v_head_size = hs;
    p.scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(hs));
    p.mask_value = mask_filter_value_;
    p.q = {qd.data(), d, hs, d};

    std::vector<int32_t> sources;  // beam indirection: the entry each key is read from
    int64_t total = 0;
    bool beams = false;
    if (self_) {
      ONNXFLOW_ASSIGN_OR_RETURN(total, SelfCache(ctx, *q, key, value, bq, batch, d, hs, &p, &sources, &beams));
    } else {
      if (key->rank() != 4 || key->dim(0) != batch || key->dim(1) != heads_ || key->dim(3) != hs ||
          value->shape() != key->shape() || key->dtype() != DataType::kFloat || value->dtype() != DataType::kFloat) {
        return Bad("cross-attention key and value must be float (" + std::to_string(batch) + ", " +
                   std::to_string(heads_) + ", L, " + std::to_string(hs) + "), got " + ShapeToString(key->shape()) +
                   " and " + ShapeToString(value->shape()));
      }
      if (ctx.has_input(4)) return Bad("attention_bias is not supported in cross-attention (as ONNX Runtime)");
      total = key->dim(2);
      p.k = {key->data<float>(), heads_ * total * hs, total * hs, hs};
      p.v = {value->data<float>(), heads_ * total * hs, total * hs, hs};
    }
    p.kv_len = total;

    // Additive terms: mask_filter_value where the mask is 0, and attention_bias.
    std::vector<float> mask_add;
    if (const Tensor* mask = ctx.input_tensor(3); mask != nullptr) {
      if (mask->dtype() != DataType::kInt32 || mask->rank() != 2 || mask->dim(0) != batch || mask->dim(1) != total) {
        return Bad("mask_index must be int32 (" + std::to_string(batch) + ", " + std::to_string(total) +
                   "), the one mask ONNX Runtime's CPU kernel reads, got " + DataTypeName(mask->dtype()) + " " +
                   ShapeToString(mask->shape()));
      }
      mask_add.resize(batch * total);
      for (int64_t i = 0; i < batch * total; ++i) {
        mask_add[i] = mask->data<int32_t>()[i] == 0 ? mask_filter_value_ : 0.0f;
      }
      p.key_add = mask_add.data();
    }
    if (const Tensor* ab = ctx.input_tensor(4); ab != nullptr) {
      const Shape& s = ab->shape();
      if (ab->dtype() != DataType::kFloat || s.size() != 4 || (s[0] != 1 && s[0] != batch) ||
          (s[1] != 1 && s[1] != heads_) || s[2] != 1 || s[3] != total) {
        return Bad("attention_bias must be float (" + std::to_string(batch) + " or 1, " + std::to_string(heads_) +
                   " or 1, 1, " + std::to_string(total) + "), got " + ShapeToString(s));
      }
      if (beams && s[0] != 1) {
        return Unimplemented(std::string(kOp) + " with cache_indirection and an attention_bias of batch " +
                             std::to_string(s[0]) + " (ONNX Runtime 1.30 reads row (b / beam_width) * num_heads of "
                             "it); one broadcast over the batch is supported");
      }
      p.bias = ab->data<float>();
      p.bias_batch = s[0] == 1 ? 0 : s[1] * total;
      p.bias_head = s[1] == 1 ? 0 : total;
      p.bias_row = 0;
    }
    if (!sources.empty()) {
      p.key_batch = sources.data();
      p.key_batch_stride = total;
    }

    if (output_qk_) ONNXFLOW_RETURN_IF_ERROR(Scores(ctx, p));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, {batch, 1, d}));
    p.out = {y->mutable_data<float>(), d, hs, d};
    RunAttention(p, ctx.threads());
    return Status::Ok();
  }

 private:
  explicit DecoderMaskedMhaKernel(const KernelInfo& info)
      : scale_(info.GetFloat("scale", 0.0f)),
        mask_filter_value_(info.GetFloat("mask_filter_value", -10000.0f)),
        output_qk_(info.GetInt("output_qk", 0) != 0) {}

  static int64_t BeamWidth(const KernelContext& ctx) {
    const Tensor* t = ctx.input_tensor(8);
    return t != nullptr && t->dtype() == DataType::kInt32 && t->size() == 1 ? t->data<int32_t>()[0] : 1;
  }

  // Writes the step's key and value into the cache at row past_sequence_length and points the
  // problem at it; with cache_indirection, fills `sources` (B, P + 1) with the entry each key is
  // read from. Returns P + 1.
  Result<int64_t> SelfCache(KernelContext& ctx, const Tensor& q, const Tensor* key, const Tensor* value,
                            const float* bias, int64_t batch, int64_t d, int64_t hs, AttentionProblem* p,
                            std::vector<int32_t>* sources, bool* beams) const {
    if (key != nullptr) {
      if (key->rank() != 3 || key->dim(0) != batch || key->dim(1) != 1 || key->dim(2) != d ||
          value->shape() != key->shape() || key->dtype() != DataType::kFloat || value->dtype() != DataType::kFloat) {
        return Bad("key and value must be float (" + std::to_string(batch) + ", 1, " + std::to_string(d) + "), got " +
                   ShapeToString(key->shape()) + " and " + ShapeToString(value->shape()));
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* past_k, ctx.RequireTensor(5));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* past_v, ctx.RequireTensor(6));
    if (past_k->dtype() != DataType::kFloat || past_k->rank() != 4 || past_k->dim(0) != batch ||
        past_k->dim(1) != heads_ || past_k->dim(3) != hs || past_v->shape() != past_k->shape() ||
        past_v->dtype() != DataType::kFloat) {
      return Bad("past_key and past_value must be float (" + std::to_string(batch) + ", " + std::to_string(heads_) +
                 ", max, " + std::to_string(hs) + "), got " + ShapeToString(past_k->shape()) + " and " +
                 ShapeToString(past_v->shape()));
    }
    const int64_t max = past_k->dim(2);
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* past_len_t, ctx.RequireTensor(7));
    if (past_len_t->dtype() != DataType::kInt32 || past_len_t->size() != 1) {
      return Bad("past_sequence_length must be one int32");
    }
    const int64_t past = past_len_t->data<int32_t>()[0];
    if (past < 0 || past >= max) {
      return Bad("past_sequence_length " + std::to_string(past) + " leaves no row for the new token in past_key's " +
                 std::to_string(max) + " rows");
    }
    const int64_t total = past + 1;

    // Beam search: cache_indirection (B / beam_width, beam_width, max) names, per entry and past
    // position, the beam of its group whose cache row to read; the new token is the entry's own.
    const Tensor* indir = ctx.input_tensor(9);
    const int64_t beam = BeamWidth(ctx);
    if (const Tensor* bw = ctx.input_tensor(8); bw != nullptr && (bw->dtype() != DataType::kInt32 || bw->size() != 1)) {
      return Bad("beam_width must be one int32");
    }
    if (beam > 1 && indir == nullptr) return Bad("beam_width > 1 needs cache_indirection");
    *beams = indir != nullptr;
    if (indir != nullptr) {
      if (beam <= 0 || batch % beam != 0 || indir->dtype() != DataType::kInt32 || indir->rank() != 3 ||
          indir->dim(0) * indir->dim(1) != batch || indir->dim(1) != beam || indir->dim(2) != max) {
        return Bad("cache_indirection must be int32 (" + std::to_string(beam > 0 ? batch / beam : 0) + ", beam_width " +
                   std::to_string(beam) + ", " + std::to_string(max) + ") for batch " + std::to_string(batch) + ", got " +
                   ShapeToString(indir->shape()));
      }
      sources->resize(batch * total);
      for (int64_t b = 0; b < batch; ++b) {
        const int32_t* row = indir->data<int32_t>() + b * max;
        for (int64_t j = 0; j < past; ++j) {
          if (row[j] < 0 || row[j] >= beam) {
            return Bad("cache_indirection[" + std::to_string(b) + ", " + std::to_string(j) + "] = " +
                       std::to_string(row[j]) + " is not a beam of " + std::to_string(beam));
          }
          (*sources)[b * total + j] = static_cast<int32_t>(b / beam * beam + row[j]);
        }
        (*sources)[b * total + past] = static_cast<int32_t>(b);
      }
    }

    // The new key and value rows (bias added) at row `past` of the shared buffer.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * pk, SharedBufferPresent(ctx, 5, 1, *past_k, nullptr));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * pv, SharedBufferPresent(ctx, 6, 2, *past_v, pk->raw_data()));
    const float* kin = key != nullptr ? key->data<float>() : q.data<float>() + d;
    const float* vin = value != nullptr ? value->data<float>() : q.data<float>() + 2 * d;
    const int64_t stride = key != nullptr ? d : 3 * d;
    float* kc = pk->mutable_data<float>();
    float* vc = pv->mutable_data<float>();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < heads_; ++h) {
        float* kr = kc + ((b * heads_ + h) * max + past) * hs;
        float* vr = vc + ((b * heads_ + h) * max + past) * hs;
        for (int64_t i = 0; i < hs; ++i) {
          kr[i] = kin[b * stride + h * hs + i] + (bias ? bias[d + h * hs + i] : 0.0f);
          vr[i] = vin[b * stride + h * hs + i] + (bias ? bias[2 * d + h * hs + i] : 0.0f);
        }
      }
    }
    p->k = {kc, heads_ * max * hs, max * hs, hs};
    p->v = {vc, heads_ * max * hs, max * hs, hs};
    return total;
  }

  // qk (B, N, 1, T): the scores before the softmax, scale * q.k plus the problem's additive terms.
  // A second pass over the keys, made only when the model asks for this output.
  Status Scores(KernelContext& ctx, const AttentionProblem& p) const {
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * qk, ctx.AllocateUninitialized(3, DataType::kFloat, {p.batch, heads_, 1, p.kv_len}));
    float* out = qk->mutable_data<float>();
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t h = 0; h < heads_; ++h) {
        float* s = out + (b * heads_ + h) * p.kv_len;
        for (int64_t j = 0, e = 0; j < p.kv_len; j = e) {  // runs of keys read from one entry
          const int64_t src = p.key_batch != nullptr ? p.key_batch[b * p.key_batch_stride + j] : b;
          for (e = j + 1; e < p.kv_len && p.key_batch != nullptr && p.key_batch[b * p.key_batch_stride + e] == src;) ++e;
          vec::DotRows(p.q.at(b, h, 0), p.k.at(src, h, j), p.k.row, e - j, p.head_size, s + j);
        }
        for (int64_t j = 0; j < p.kv_len; ++j) {
          s[j] *= p.scale;
          if (p.key_add != nullptr) s[j] += p.key_add[b * p.kv_len + j];
          if (p.bias != nullptr) s[j] += p.bias[b * p.bias_batch + h * p.bias_head + j];
        }
      }
    }
    return Status::Ok();
  }

  int64_t heads_ = 0;
  float scale_, mask_filter_value_;
  bool output_qk_;
  bool self_ = false;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDecoderMaskedMha(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "DecoderMaskedMultiHeadAttention", 1, kOpenEnded,
                           Make<DecoderMaskedMhaKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
