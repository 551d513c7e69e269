// Attention (opset 23, 24, 25): scaled dot-product attention over 3D (B, S, H*D) or 4D (B, H, S, D)
// inputs, with grouped-query heads, a boolean or additive mask, bottom-right causal masking, a
// soft cap, a past/present key-value cache, nonpad_kv_seqlen (24+) and sliding windows (25+).
//
// One (batch, query head) pair is one work item. For each query row:
//   scores = (q . K^T) * scale                 -> qk_matmul_output mode 0
//   scores = softcap * tanh(scores / softcap)  -> mode 1
//   scores += bias (mask, causal, padding, window; -inf where disallowed) -> mode 2
//   probs = softmax(scores), zero when every key is disallowed           -> mode 3
//   y = probs . V
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ops/attention/common.h"
#include "ops/contrib/attention_core.h"
#include "ops/attention/register.h"
#include "ops/vec/vec_ops.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace attention {
namespace {

enum Input { kQ = 0, kK, kV, kMask, kPastKey, kPastValue, kNonpad };
enum Output { kY = 0, kPresentKey, kPresentValue, kQkOutput };

// Where row s of head h of batch b starts, for a 3D (B, S, H*D) or 4D (B, H, S, D) tensor.
template <typename C>
struct HeadView {
  const C* data = nullptr;
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
  const C* at(int64_t b, int64_t h, int64_t s = 0) const {
    return data + b * batch_stride + h * head_stride + s * row_stride;
  }
};

template <typename C>
HeadView<C> MakeView(const C* data, bool rank3, int64_t heads, int64_t seq, int64_t head_size) {
  HeadView<C> v;
  v.data = data;
  if (rank3) {
    v.batch_stride = seq * heads * head_size;
    v.head_stride = head_size;
    v.row_stride = heads * head_size;
  } else {
    v.batch_stride = heads * seq * head_size;
    v.head_stride = seq * head_size;
    v.row_stride = head_size;
  }
  return v;
}

// The mask as additive C values (bool: 0 / -inf) with its dims aligned right against
// (batch, q_heads, q_seq, keys). Its last dim may be shorter than the key count: the missing
// keys are disallowed (padded with -inf / False).
template <typename C>
struct MaskBias {
  std::vector<C> values;
  int64_t stride[3] = {0, 0, 0};  // per aligned dim 0..2; 0 where broadcast
  int64_t last = 0;                // length of the last dim
  const C* row(int64_t b, int64_t h, int64_t i) const {
    return values.data() + b * stride[0] + h * stride[1] + i * stride[2];
  }
};

template <typename C>
Result<MaskBias<C>> PrepareMask(const Tensor& mask, int64_t batch, int64_t heads, int64_t q_seq, int64_t keys) {
  MaskBias<C> out;
  const Shape& s = mask.shape();
  if (mask.rank() < 1 || mask.rank() > 4) {
    return InvalidArgument("attn_mask must have rank 1 to 4, got shape " + ShapeToString(s));
  }
  Shape aligned(4 - s.size(), 1);
  aligned.insert(aligned.end(), s.begin(), s.end());
  const int64_t want[3] = {batch, heads, q_seq};
  const char* names[3] = {"batch_size", "q_num_heads", "q_sequence_length"};
  for (int d = 0; d < 3; ++d) {
    if (aligned[d] != 1 && aligned[d] != want[d]) {
      return InvalidArgument("attn_mask shape " + ShapeToString(s) + " does not broadcast to " + names[d] + " " +
                             std::to_string(want[d]));
    }
  }
  if (aligned[3] > keys) {
    return InvalidArgument("attn_mask's last dim " + std::to_string(aligned[3]) +
                           " is longer than the total sequence length " + std::to_string(keys));
  }
  out.last = aligned[3];
  const int64_t row_stride = aligned[3];
  const int64_t dim_stride[3] = {aligned[1] * aligned[2] * row_stride, aligned[2] * row_stride, row_stride};
  for (int d = 0; d < 3; ++d) out.stride[d] = aligned[d] == 1 ? 0 : dim_stride[d];

  const int64_t n = mask.size();
  out.values.resize(static_cast<size_t>(n));
  if (mask.dtype() == DataType::kBool) {
    const bool* m = mask.data<bool>();
    for (int64_t i = 0; i < n; ++i) out.values[i] = m[i] ? C(0) : -std::numeric_limits<C>::infinity();
    return out;
  }
  Status st = DispatchType<ONNXFLOW_FLOAT_TYPES, ONNXFLOW_INT_TYPES>(mask.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* m = mask.data<T>();
    for (int64_t i = 0; i < n; ++i) out.values[i] = static_cast<C>(ToCompute<T>(m[i]));
    return Status::Ok();
  });
  if (!st.ok()) return InvalidArgument(std::string("attn_mask of type ") + DataTypeName(mask.dtype()) + " is not supported");
  return out;
}

class AttentionKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<AttentionKernel>();
    k->opset_ = info.opset();
    k->is_causal_ = info.GetInt("is_causal", 0) != 0;
    k->q_num_heads_ = info.GetInt("q_num_heads", 0);
    k->kv_num_heads_ = info.GetInt("kv_num_heads", 0);
    k->has_scale_ = info.has_attribute("scale");
    k->scale_ = info.GetFloat("scale", 0.0f);
    k->softcap_ = info.GetFloat("softcap", 0.0f);
    k->mode_ = info.GetInt("qk_matmul_output_mode", 0);
    if (k->mode_ < 0 || k->mode_ > 3) {
      return InvalidArgument("qk_matmul_output_mode must be 0, 1, 2 or 3, got " + std::to_string(k->mode_));
    }
    if (info.has_attribute("softmax_precision")) {
      const int64_t p = info.GetInt("softmax_precision", 1);
      if (p != 1 && p != 10 && p != 11 && p != 16) {
        return InvalidArgument("softmax_precision must be 1, 10, 11 or 16, got " + std::to_string(p));
      }
      k->softmax_precision_ = static_cast<DataType>(p);
    }
    if (k->q_num_heads_ < 0 || k->kv_num_heads_ < 0) {
      return InvalidArgument("q_num_heads and kv_num_heads must be positive");
    }
    if (k->opset_ >= 25) {
      k->left_window_ = info.GetInt("left_window_size", -1);
      k->right_window_ = info.GetInt("right_window_size", -1);
      if (k->left_window_ < -1 || k->right_window_ < -1) {
        return InvalidArgument("left_window_size and right_window_size must be -1 or nonnegative");
      }
    }
    for (int i : {kQ, kK, kV, kPastKey, kPastValue}) {
      const DataType t = info.input_type(i);
      if (t != DataType::kUndefined && !IsAttentionFloat(t)) {
        return Unimplemented(std::string("Attention does not support input type ") + DataTypeName(t));
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequireTensor(kQ));
    if (q->dtype() == DataType::kDouble) return ComputeIn<double>(ctx);
    if (!IsAttentionFloat(q->dtype())) {
      return InvalidArgument(std::string("Q must be a float tensor, got ") + DataTypeName(q->dtype()));
    }
    return ComputeIn<float>(ctx);
  }

 private:
  template <typename C>
  Status ComputeIn(KernelContext& ctx) const;

  int opset_ = 23;
  bool is_causal_ = false;
  int64_t q_num_heads_ = 0, kv_num_heads_ = 0;
  bool has_scale_ = false;
  float scale_ = 0.0f;
  float softcap_ = 0.0f;
  int64_t mode_ = 0;
  DataType softmax_precision_ = DataType::kUndefined;
  int64_t left_window_ = -1, right_window_ = -1;
};

template <typename C>
Status AttentionKernel::ComputeIn(KernelContext& ctx) const {
  constexpr C kNegInf = -std::numeric_limits<C>::infinity();
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequireTensor(kQ));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* k, ctx.RequireTensor(kK));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* v, ctx.RequireTensor(kV));
  const Tensor* mask = ctx.input_tensor(kMask);
  const Tensor* past_key = ctx.input_tensor(kPastKey);
  const Tensor* past_value = ctx.input_tensor(kPastValue);
  const Tensor* nonpad = opset_ >= 24 ? ctx.input_tensor(kNonpad) : nullptr;

  // Shapes.
  if (q->rank() != k->rank() || q->rank() != v->rank() || (q->rank() != 3 && q->rank() != 4)) {
    return InvalidArgument("Q, K and V must all be 3D or all 4D, got " + ShapeToString(q->shape()) + ", " +
                           ShapeToString(k->shape()) + ", " + ShapeToString(v->shape()));
  }
  const bool rank3 = q->rank() == 3;
  int64_t batch, q_heads, kv_heads, q_seq, kv_seq, head_size, v_head_size;
  if (rank3) {
    if (q_num_heads_ <= 0 || kv_num_heads_ <= 0) {
      return InvalidArgument("3D inputs need the q_num_heads and kv_num_heads attributes");
    }
    q_heads = q_num_heads_;
    kv_heads = kv_num_heads_;
    batch = q->dim(0);
    q_seq = q->dim(1);
    kv_seq = k->dim(1);
    if (q->dim(2) % q_heads != 0) {
      return InvalidArgument("Q's hidden size " + std::to_string(q->dim(2)) + " is not a multiple of q_num_heads " +
                             std::to_string(q_heads));
    }
    head_size = q->dim(2) / q_heads;
    if (k->dim(2) != kv_heads * head_size) {
      return InvalidArgument("K's hidden size " + std::to_string(k->dim(2)) + " is not kv_num_heads * head_size = " +
                             std::to_string(kv_heads * head_size));
    }
    if (v->dim(2) % kv_heads != 0) {
      return InvalidArgument("V's hidden size " + std::to_string(v->dim(2)) + " is not a multiple of kv_num_heads " +
                             std::to_string(kv_heads));
    }
    v_head_size = v->dim(2) / kv_heads;
  } else {
    if (opset_ >= 25 && (q_num_heads_ > 0 || kv_num_heads_ > 0)) {
      return InvalidArgument("q_num_heads and kv_num_heads must not be set for 4D inputs");
    }
    batch = q->dim(0);
    q_heads = q->dim(1);
    q_seq = q->dim(2);
    head_size = q->dim(3);
    kv_heads = k->dim(1);
    kv_seq = k->dim(2);
    v_head_size = v->dim(3);
    if (k->dim(3) != head_size) {
      return InvalidArgument("K's head size " + std::to_string(k->dim(3)) + " differs from Q's " +
                             std::to_string(head_size));
    }
    if (v->dim(1) != kv_heads) {
      return InvalidArgument("V has " + std::to_string(v->dim(1)) + " heads, K has " + std::to_string(kv_heads));
    }
  }
  if (k->dim(0) != batch || v->dim(0) != batch) {
    return InvalidArgument("Q, K and V must have the same batch size, got " + ShapeToString(q->shape()) + ", " +
                           ShapeToString(k->shape()) + ", " + ShapeToString(v->shape()));
  }
  if (v->dim(rank3 ? 1 : 2) != kv_seq) {
    return InvalidArgument("K and V must have the same sequence length, got " + ShapeToString(k->shape()) + " and " +
                           ShapeToString(v->shape()));
  }
  if (kv_heads <= 0 || q_heads % kv_heads != 0) {
    return InvalidArgument("q_num_heads " + std::to_string(q_heads) + " must be a multiple of kv_num_heads " +
                           std::to_string(kv_heads));
  }
  if ((past_key == nullptr) != (past_value == nullptr)) {
    return InvalidArgument("past_key and past_value must be given together");
  }
  int64_t past_seq = 0;
  if (past_key != nullptr) {
    if (nonpad != nullptr) return InvalidArgument("nonpad_kv_seqlen cannot be combined with past_key/past_value");
    const Shape want_k = {batch, kv_heads, past_key->rank() == 4 ? past_key->dim(2) : -1, head_size};
    if (past_key->shape() != want_k) {
      return InvalidArgument("past_key shape " + ShapeToString(past_key->shape()) + " must be (batch, kv_heads, past, " +
                             std::to_string(head_size) + ")");
    }
    past_seq = past_key->dim(2);
    const Shape want_v = {batch, kv_heads, past_seq, v_head_size};
    if (past_value->shape() != want_v) {
      return InvalidArgument("past_value shape " + ShapeToString(past_value->shape()) + ", expected " +
                             ShapeToString(want_v));
    }
  }
  const int64_t total = past_seq + kv_seq;
  ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({batch, kv_heads, total, std::max(head_size, v_head_size)}, sizeof(C),
                                        "the key/value cache"));
  const int64_t* nonpad_data = nullptr;
  if (nonpad != nullptr) {
    if (nonpad->dtype() != DataType::kInt64 || nonpad->shape() != Shape{batch}) {
      return InvalidArgument("nonpad_kv_seqlen must be int64 of shape (" + std::to_string(batch) + "), got " +
                             DataTypeName(nonpad->dtype()) + " " + ShapeToString(nonpad->shape()));
    }
    nonpad_data = nonpad->data<int64_t>();
  }

  // Inputs in the compute type.
  std::vector<C> q_store, k_store, v_store, pk_store, pv_store;
  ONNXFLOW_ASSIGN_OR_RETURN(const C* q_data, ReadFloatTensor<C>(*q, q_store, "Q"));
  ONNXFLOW_ASSIGN_OR_RETURN(const C* k_data, ReadFloatTensor<C>(*k, k_store, "K"));
  ONNXFLOW_ASSIGN_OR_RETURN(const C* v_data, ReadFloatTensor<C>(*v, v_store, "V"));
  const HeadView<C> q_view = MakeView(q_data, rank3, q_heads, q_seq, head_size);
  HeadView<C> k_view = MakeView(k_data, rank3, kv_heads, kv_seq, head_size);
  HeadView<C> v_view = MakeView(v_data, rank3, kv_heads, kv_seq, v_head_size);

  // The key/value cache: past rows then the new ones, (B, kv_heads, total, D). Built when the
  // past is given (the products read it) or when the model asks for present_key/present_value.
  const bool need_present_k = past_key != nullptr || ctx.has_output(kPresentKey);
  const bool need_present_v = past_key != nullptr || ctx.has_output(kPresentValue);
  std::vector<C> present_k, present_v;
  auto build_present = [&](const Tensor* past, const HeadView<C>& fresh, int64_t d, std::vector<C>& store,
                           std::vector<C>& out, const char* what) -> Status {
    const C* past_data = nullptr;
    if (past != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(past_data, ReadFloatTensor<C>(*past, store, what));
    }
    out.resize(static_cast<size_t>(batch * kv_heads * total * d));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < kv_heads; ++h) {
        C* dst = out.data() + (b * kv_heads + h) * total * d;
        if (past_data != nullptr) {
          const C* src = past_data + (b * kv_heads + h) * past_seq * d;
          std::copy(src, src + past_seq * d, dst);
        }
        for (int64_t s = 0; s < kv_seq; ++s) {
          const C* src = fresh.at(b, h, s);
          std::copy(src, src + d, dst + (past_seq + s) * d);
        }
      }
    }
    return Status::Ok();
  };
  if (need_present_k) {
    ONNXFLOW_RETURN_IF_ERROR(build_present(past_key, k_view, head_size, pk_store, present_k, "past_key"));
    k_view = MakeView<C>(present_k.data(), false, kv_heads, total, head_size);
  }
  if (need_present_v) {
    ONNXFLOW_RETURN_IF_ERROR(build_present(past_value, v_view, v_head_size, pv_store, present_v, "past_value"));
    v_view = MakeView<C>(present_v.data(), false, kv_heads, total, v_head_size);
  }
  if (ctx.has_output(kPresentKey)) {
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(kPresentKey, k->dtype(), {batch, kv_heads, total, head_size}));
    ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor<C>(present_k.data(), out->size(), out));
  }
  if (ctx.has_output(kPresentValue)) {
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out,
                              ctx.Allocate(kPresentValue, v->dtype(), {batch, kv_heads, total, v_head_size}));
    ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor<C>(present_v.data(), out->size(), out));
  }

  MaskBias<C> mask_bias;
  if (mask != nullptr) {
    ONNXFLOW_ASSIGN_OR_RETURN(mask_bias, PrepareMask<C>(*mask, batch, q_heads, q_seq, total));
  }

  // Outputs, computed in C and stored in Q's type.
  const DataType out_type = q->dtype();
  const Shape y_shape = rank3 ? Shape{batch, q_seq, q_heads * v_head_size} : Shape{batch, q_heads, q_seq, v_head_size};
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(kY, out_type, y_shape));
  std::vector<C> y_buf(static_cast<size_t>(y->size()));
  const bool want_qk = ctx.has_output(kQkOutput);
  Tensor* qk_out = nullptr;
  std::vector<C> qk_buf;
  if (want_qk) {
    ONNXFLOW_ASSIGN_OR_RETURN(qk_out, ctx.Allocate(kQkOutput, out_type, {batch, q_heads, q_seq, total}));
    qk_buf.resize(static_cast<size_t>(qk_out->size()));
  }

  const C scale = has_scale_ ? static_cast<C>(scale_) : C(1) / std::sqrt(static_cast<C>(head_size));
  const C softcap = static_cast<C>(softcap_);
  const DataType sm_type = softmax_precision_ == DataType::kUndefined ? out_type : softmax_precision_;
  const bool round_scores = NeedsRounding<C>(out_type);
  const bool round_probs = NeedsRounding<C>(sm_type);
  const int64_t group = q_heads / kv_heads;
  const bool use_window = left_window_ >= 0 || right_window_ >= 0;

  auto offset_of = [&](int64_t b) -> int64_t {
    if (past_key != nullptr) return past_seq;
    if (nonpad_data != nullptr) return nonpad_data[b] - q_seq;
    return 0;
  };

  // Float attention that asks for no raw scores, 16-bit rounding or a right window runs on the
  // blocked core the com.microsoft ops share (GEMM products, query blocks and heads over the cores,
  // online softmax past 1024 keys). The row loop below computes the rest (and double).
  if constexpr (std::is_same_v<C, float>) {
    if (!want_qk && !round_scores && !round_probs && right_window_ < 0) {
      contrib::AttentionProblem p;
      p.batch = batch;
      p.heads = q_heads;
      p.kv_heads = kv_heads;
      p.q_len = q_seq;
      p.kv_len = total;
      p.head_size = head_size;
      p.v_head_size = v_head_size;
      p.q = {q_view.data, q_view.batch_stride, q_view.head_stride, q_view.row_stride};
      p.k = {k_view.data, k_view.batch_stride, k_view.head_stride, k_view.row_stride};
      p.v = {v_view.data, v_view.batch_stride, v_view.head_stride, v_view.row_stride};
      p.out = rank3 ? contrib::HeadOut{y_buf.data(), q_seq * q_heads * v_head_size, v_head_size, q_heads * v_head_size}
                    : contrib::HeadOut{y_buf.data(), q_heads * q_seq * v_head_size, q_seq * v_head_size, v_head_size};
      p.scale = scale;
      p.softcap = softcap;
      p.causal = is_causal_;
      p.window = left_window_;
      // Keys past the mask's last column or a batch entry's nonpad length drop out (-inf).
      p.mask_value = kNegInf;
      for (int64_t b = 0; b < batch; ++b) {
        int64_t end = mask != nullptr ? mask_bias.last : total;
        if (nonpad_data != nullptr) end = std::min<int64_t>(end, nonpad_data[b]);
        p.key_end.push_back(end);
        p.q_offset.push_back(offset_of(b));
      }
      if (mask != nullptr) {
        p.bias = mask_bias.values.data();
        p.bias_batch = mask_bias.stride[0];
        p.bias_head = mask_bias.stride[1];
        p.bias_row = mask_bias.stride[2];
      }
      contrib::RunAttention(p, ctx.threads());
      return WriteFloatTensor<C>(y_buf.data(), y->size(), y);
    }
  }

  const int64_t cost = q_seq * total * (head_size + v_head_size + 16);
  ParallelFor(ctx, batch * q_heads, cost, [&](int64_t begin, int64_t end) {
    std::vector<C> scores(static_cast<size_t>(total)), bias(static_cast<size_t>(total));
    std::vector<C> y_row(static_cast<size_t>(v_head_size));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / q_heads, h = item % q_heads, kvh = h / group;
      const int64_t offset = offset_of(b);
      const C* k_head = k_view.at(b, kvh);
      const C* v_head = v_view.at(b, kvh);
      for (int64_t i = 0; i < q_seq; ++i) {
        C* qk_row = want_qk ? qk_buf.data() + ((b * q_heads + h) * q_seq + i) * total : nullptr;
        // Keys past the causal / padding / window frontier end up at -inf whatever their score,
        // so unless the raw scores are asked for, only the keys before it are multiplied.
        const int64_t pos = offset + i;  // the query's absolute position
        int64_t live = total;
        if (!want_qk || mode_ == 3) {
          if (is_causal_) live = std::min(live, pos + 1);
          if (nonpad_data != nullptr) live = std::min(live, nonpad_data[b]);
          if (right_window_ >= 0) live = std::min(live, pos + right_window_ + 1);
          live = std::max<int64_t>(live, 0);
        }
        vec::DotRows(q_view.at(b, h, i), k_head, k_view.row_stride, live, head_size, scores.data());
        std::fill(scores.begin() + live, scores.end(), C(0));
        for (int64_t j = 0; j < total; ++j) {
          scores[j] *= scale;
          if (round_scores) scores[j] = RoundTo(out_type, scores[j]);
        }
        if (want_qk && mode_ == 0) std::copy(scores.begin(), scores.end(), qk_row);
        if (softcap > 0) {
          for (int64_t j = 0; j < total; ++j) {
            scores[j] = softcap * std::tanh(scores[j] / softcap);
            if (round_scores) scores[j] = RoundTo(out_type, scores[j]);
          }
        }
        if (want_qk && mode_ == 1) std::copy(scores.begin(), scores.end(), qk_row);

        // The additive bias of this row, and whether it disallows every key.
        std::fill(bias.begin(), bias.end(), C(0));
        if (mask != nullptr) {
          const C* m = mask_bias.row(b, h, i);
          for (int64_t j = 0; j < total; ++j) bias[j] = j < mask_bias.last ? m[j] : kNegInf;
        }
        for (int64_t j = 0; j < total; ++j) {
          if (is_causal_ && j > pos) bias[j] += kNegInf;
          if (use_window && ((left_window_ >= 0 && pos - j > left_window_) ||
                             (right_window_ >= 0 && j - pos > right_window_))) {
            bias[j] += kNegInf;
          }
          if (nonpad_data != nullptr && j >= nonpad_data[b]) bias[j] += kNegInf;
        }
        bool all_masked = true;
        for (int64_t j = 0; j < total; ++j) {
          if (!(bias[j] == kNegInf)) {
            all_masked = false;
            break;
          }
        }
        for (int64_t j = 0; j < total; ++j) {
          scores[j] += bias[j];
          if (round_scores) scores[j] = RoundTo(out_type, scores[j]);
        }
        if (want_qk && mode_ == 2) std::copy(scores.begin(), scores.end(), qk_row);

        if (all_masked) {
          std::fill(scores.begin(), scores.end(), C(0));
        } else {
          if (round_probs) {
            for (int64_t j = 0; j < total; ++j) scores[j] = RoundTo(sm_type, scores[j]);
          }
          SoftmaxRow(scores.data(), total);
          if (round_probs) {
            for (int64_t j = 0; j < total; ++j) scores[j] = RoundTo(sm_type, scores[j]);
          }
        }
        if (want_qk && mode_ == 3) std::copy(scores.begin(), scores.end(), qk_row);

        std::fill(y_row.begin(), y_row.end(), C(0));
        vec::AccumulateRows(scores.data(), v_head, v_view.row_stride, total, v_head_size, y_row.data());
        C* y_dst = rank3 ? y_buf.data() + (b * q_seq + i) * q_heads * v_head_size + h * v_head_size
                         : y_buf.data() + ((b * q_heads + h) * q_seq + i) * v_head_size;
        std::copy(y_row.begin(), y_row.end(), y_dst);
      }
    }
  });

  ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor<C>(y_buf.data(), y->size(), y));
  if (want_qk) {
    ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor<C>(qk_buf.data(), qk_out->size(), qk_out));
  }
  return Status::Ok();
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterAttention(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Attention", 23, kOpenEnded, Make<AttentionKernel>());
}

}  // namespace attention
}  // namespace onnxflow
