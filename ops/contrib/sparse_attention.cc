// com.microsoft SparseAttention (Phi-3-small and the other block-sparse decoders onnxruntime-genai's
// builder writes): causal grouped-query attention in which query block r sees only the key blocks
// its layout's CSR row r lists, over a key-value cache whose past and present are one buffer of the
// maximum length, with optional rotary embedding. It runs on RunAttention (attention_core.h), the
// layout given to the core as a per-(query block, key block) bitmap; float16 computes in float.
//
// SparseAttention(query, key?, value?, past_key, past_value, block_row_indices, block_col_indices,
//   total_sequence_length, key_total_sequence_lengths, cos_cache?, sin_cache?)
//   -> output, present_key, present_value
// As ONNX Runtime's CPU kernel (contrib_ops/cpu/sparse/sparse_attention*.h):
//  - query (B, S, N * H), key/value (B, S, Nkv * H), or query packed (B, S, (N + 2 Nkv) * H);
//    head size a multiple of 8 (of 16 with rotary).
//  - past_key/past_value (B, Nkv, M, H), M >= total_sequence_length; present is the same buffer
//    with the S new rows written at the entry's past length.
//  - a prompt when total_sequence_length == S (past 0); otherwise entry b holds
//    key_total_sequence_lengths[b] tokens after this step, past_b = that - S.
//  - head h reads layout h % num_layout; block_row_indices (num_layout, max_blocks + 1) and
//    block_col_indices (num_layout, max_nnz) are each layout's CSR rows. A row that lists r + 1
//    blocks, and a layout that has at least the lower triangle's count of blocks, count as dense
//    (ONNX Runtime looks at those counts, not at the columns). Hidden keys get the score -FLT_MAX.
//  - rotary: positions past_b + s, cos/sin (max, rotary_dim / 2), the first rotary_dim values.
//  - Entries of different key lengths each attend over their own keys. (ONNX Runtime 1.30 reads
//    the softmax of entry b, head h > 0 at an offset computed from b's length where it wrote it
//    from total_sequence_length, so there its shorter entries' later heads read other rows; the
//    tests take its outputs of each entry run alone.) Prompt rows past an entry's length see its
//    keys only (ONNX Runtime reads past the row there).
//  - The present is the past's buffer when the plan lets this node write into it (kv_cache.h);
//    otherwise the past is copied once, as ONNX Runtime would with two buffers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ops/contrib/attention_core.h"
#include "ops/contrib/common.h"
#include "ops/contrib/kv_cache.h"
#include "ops/contrib/register.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace contrib {
namespace {

constexpr char kOp[] = "SparseAttention";

Status Bad(const std::string& what) { return InvalidArgument(std::string(kOp) + ": " + what); }

// The layouts as a bitmap [layout][query block][key block] (1: visible), from the CSR indices,
// checked so that no index points outside its tensor.
constexpr int64_t kMaxLayoutBytes = int64_t{1} << 28;  // 32 layouts of 2,896 blocks each

struct SparseLayout {
  std::vector<unsigned char> visible;
  int64_t layouts = 0, blocks = 0;
};

Result<SparseLayout> BuildLayout(const Tensor& rows, const Tensor& cols, int64_t heads) {
  if (rows.dtype() != DataType::kInt32 || cols.dtype() != DataType::kInt32) {
    return Bad("block_row_indices and block_col_indices must be int32");
  }
  if (rows.rank() != 2 || rows.dim(0) <= 0 || rows.dim(1) <= 1 || heads % rows.dim(0) != 0) {
    return Bad("block_row_indices must be (num_layout, max_blocks + 1) with num_heads (" + std::to_string(heads) +
               ") divisible by num_layout, got " + ShapeToString(rows.shape()));
  }
  SparseLayout l;
  l.layouts = rows.dim(0);
  l.blocks = rows.dim(1) - 1;
  // The bitmap holds layouts x blocks^2 bytes: bounded before it is sized (a constant layout is
  // built at load, where no run limit applies yet).
  int64_t square = 0, bytes = 0;
  if (__builtin_mul_overflow(l.blocks, l.blocks, &square) || __builtin_mul_overflow(square, l.layouts, &bytes) ||
      bytes > kMaxLayoutBytes) {
    return Bad("block_row_indices " + ShapeToString(rows.shape()) + " makes a block layout of more than " +
               std::to_string(kMaxLayoutBytes) + " bytes");
  }
  if (cols.rank() != 2 || cols.dim(0) != l.layouts || cols.dim(1) > l.blocks * l.blocks) {
    return Bad("block_col_indices must be (" + std::to_string(l.layouts) + ", max_nnz) with max_nnz <= " +
               std::to_string(l.blocks * l.blocks) + ", got " + ShapeToString(cols.shape()));
  }
  const int64_t nnz = cols.dim(1), n = l.blocks;
  l.visible.assign(static_cast<size_t>(l.layouts * n * n), 0);
  for (int64_t layout = 0; layout < l.layouts; ++layout) {
    const int32_t* r = rows.data<int32_t>() + layout * (n + 1);
    const int32_t* c = cols.data<int32_t>() + layout * nnz;
    unsigned char* vis = l.visible.data() + layout * n * n;
    for (int64_t i = 0; i < n; ++i) {
      if (r[i] < 0 || r[i] > r[i + 1] || r[i + 1] > nnz) {
        return Bad("block_row_indices of layout " + std::to_string(layout) + " must rise from 0 to at most " +
                   std::to_string(nnz) + " (row " + std::to_string(i) + ": " + std::to_string(r[i]) + " to " +
                   std::to_string(r[i + 1]) + ")");
      }
      for (int32_t j = r[i]; j < r[i + 1]; ++j) {
        if (c[j] < 0 || c[j] >= n) {
          return Bad("block_col_indices[" + std::to_string(layout) + ", " + std::to_string(j) + "] = " +
                     std::to_string(c[j]) + " is outside [0, " + std::to_string(n) + ")");
        }
      }
    }
    const bool dense_layout = r[n] >= n * (n + 1) / 2;
    for (int64_t i = 0; i < n; ++i) {
      unsigned char* row = vis + i * n;
      if (dense_layout || r[i + 1] - r[i] == i + 1) {
        std::fill(row, row + n, 1);
      } else {
        for (int32_t j = r[i]; j < r[i + 1]; ++j) row[c[j]] = 1;
      }
    }
  }
  return l;
}

class SparseAttentionKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<SparseAttentionKernel>(new SparseAttentionKernel(info));
    ONNXFLOW_ASSIGN_OR_RETURN(k->heads_, info.RequireInt("num_heads"));
    ONNXFLOW_ASSIGN_OR_RETURN(k->kv_heads_, info.RequireInt("kv_num_heads"));
    ONNXFLOW_ASSIGN_OR_RETURN(k->block_, info.RequireInt("sparse_block_size"));
    if (k->heads_ <= 0 || k->kv_heads_ <= 0 || k->heads_ % k->kv_heads_ != 0) {
      return Bad("num_heads (" + std::to_string(k->heads_) + ") must be a positive multiple of kv_num_heads (" +
                 std::to_string(k->kv_heads_) + ")");
    }
    if (k->block_ <= 0) return Bad("sparse_block_size must be positive, got " + std::to_string(k->block_));
    if (!info.has_input(3) || !info.has_input(4)) {
      return Bad("past_key and past_value are required (the cache buffer present_key/present_value share)");
    }
    if (!info.has_input(5) || !info.has_input(6) || !info.has_input(7) || !info.has_input(8)) {
      return Bad("block_row_indices, block_col_indices, total_sequence_length and key_total_sequence_lengths are required");
    }
    // Constant layouts (the usual case: initializers) become the bitmap once.
    const Tensor* rows = info.constant_input(5);
    const Tensor* cols = info.constant_input(6);
    if (rows != nullptr && cols != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(SparseLayout l, BuildLayout(*rows, *cols, k->heads_));
      k->layout_.emplace(std::move(l));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequireTensor(0));
    if (q->dtype() != DataType::kFloat && q->dtype() != DataType::kFloat16) {
      return Bad(std::string("query must be float or float16 (ONNX Runtime's CPU types), got ") + DataTypeName(q->dtype()));
    }
    if (q->rank() != 3) return Bad("query must be (batch, sequence, width), got " + ShapeToString(q->shape()));
    const Tensor* key = ctx.input_tensor(1);
    const Tensor* value = ctx.input_tensor(2);
    const int64_t batch = q->dim(0), seq = q->dim(1);
    const bool packed = key == nullptr;
    int64_t hs = 0;
    if (packed) {
      if (value != nullptr) return Bad("key and value must be both given or both absent (packed QKV)");
      hs = q->dim(2) / (heads_ + 2 * kv_heads_);
      if (hs * (heads_ + 2 * kv_heads_) != q->dim(2)) {
        return Bad("packed query width " + std::to_string(q->dim(2)) + " does not split into num_heads + 2 * kv_num_heads heads");
      }
    } else {
      hs = q->dim(2) / heads_;
      if (value == nullptr) return Bad("key and value must be both given or both absent (packed QKV)");
      if (hs * heads_ != q->dim(2) || key->rank() != 3 || key->dim(0) != batch || key->dim(1) != seq ||
          key->dim(2) != kv_heads_ * hs || value->shape() != key->shape() || key->dtype() != q->dtype() ||
          value->dtype() != q->dtype()) {
        return Bad("key and value must be (" + std::to_string(batch) + ", " + std::to_string(seq) + ", " +
                   std::to_string(kv_heads_ * hs) + ") of the query's type, got " + ShapeToString(key->shape()) + " and " +
                   ShapeToString(value->shape()));
      }
    }
    if (hs <= 0 || hs % 8 != 0) return Bad("head size must be a multiple of 8, got " + std::to_string(hs));
    const int64_t d = heads_ * hs, kvd = kv_heads_ * hs;

    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* total_t, ctx.RequireTensor(7));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* lens_t, ctx.RequireTensor(8));
    if (total_t->dtype() != DataType::kInt32 || total_t->size() != 1) {
      return Bad("total_sequence_length must be one int32");
    }
    if (lens_t->dtype() != DataType::kInt32 || lens_t->rank() != 1 || lens_t->dim(0) != batch) {
      return Bad("key_total_sequence_lengths must be int32 (" + std::to_string(batch) + "), got " +
                 ShapeToString(lens_t->shape()));
    }
    const int64_t total = total_t->data<int32_t>()[0];

    std::optional<SparseLayout> run_layout;
    const SparseLayout* layout = layout_ ? &*layout_ : nullptr;
    if (layout == nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* rows, ctx.RequireTensor(5));
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* cols, ctx.RequireTensor(6));
      ONNXFLOW_ASSIGN_OR_RETURN(SparseLayout l, BuildLayout(*rows, *cols, heads_));
      run_layout.emplace(std::move(l));
      layout = &*run_layout;
    }
    const int64_t max_seq = layout->blocks * block_;
    if (total > max_seq) {
      return Bad("total_sequence_length " + std::to_string(total) + " is past the layout's " + std::to_string(max_seq) +
                 " tokens (max_blocks * sparse_block_size)");
    }

    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* past_k, ctx.RequireTensor(3));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* past_v, ctx.RequireTensor(4));
    if (past_k->rank() != 4 || past_k->dim(0) != batch || past_k->dim(1) != kv_heads_ || past_k->dim(3) != hs ||
        past_v->shape() != past_k->shape() || past_k->dtype() != q->dtype() || past_v->dtype() != q->dtype()) {
      return Bad("past_key and past_value must be (" + std::to_string(batch) + ", " + std::to_string(kv_heads_) +
                 ", max, " + std::to_string(hs) + ") of the query's type, got " + ShapeToString(past_k->shape()) +
                 " and " + ShapeToString(past_v->shape()));
    }
    const int64_t max_cache = past_k->dim(2);
    if (total < seq || total > max_cache) {
      return Bad("total_sequence_length " + std::to_string(total) + " must lie in [" + std::to_string(seq) +
                 ", past_key's " + std::to_string(max_cache) + " rows]");
    }

    // Entry b: past_b cached tokens, then the S new ones; it reads lens[b] keys.
    const bool prompt = total == seq;
    std::vector<int64_t> past(batch), lens(batch);
    int64_t kv_len = 0;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = lens_t->data<int32_t>()[b];
      if (len < (prompt ? 1 : seq) || len > total) {
        return Bad("key_total_sequence_lengths[" + std::to_string(b) + "] = " + std::to_string(len) + " must lie in [" +
                   std::to_string(prompt ? 1 : seq) + ", total_sequence_length " + std::to_string(total) + "]");
      }
      lens[b] = len;
      past[b] = prompt ? 0 : len - seq;
      kv_len = std::max(kv_len, std::max(len, past[b] + seq));
    }

    // Q, K, V as dense float (B, S, width) copies: rotary rotates them in place.
    DenseQkv qkv = CopyQkv(*q, key, value, batch * seq, d, kvd, packed);
    std::vector<float>& qd = qkv.q;
    std::vector<float>& kd = qkv.k;
    std::vector<float>& vd = qkv.v;
    if (do_rotary_) ONNXFLOW_RETURN_IF_ERROR(Rotate(ctx, batch, seq, hs, total, past, qd.data(), kd.data()));

    // The cache: the new rows at past_b of the shared buffer.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * pk, SharedBufferPresent(ctx, 3, 1, *past_k, nullptr));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * pv, SharedBufferPresent(ctx, 4, 2, *past_v, pk->raw_data()));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < kv_heads_; ++h) {
        const int64_t at = ((b * kv_heads_ + h) * max_cache + past[b]) * hs;
        PutRows(kd.data() + b * seq * kvd + h * hs, kvd, seq, hs, pk, at);
        PutRows(vd.data() + b * seq * kvd + h * hs, kvd, seq, hs, pv, at);
      }
    }
    std::vector<int64_t> read(batch, kv_len);
    FloatScratch k_store, v_store;

    AttentionProblem p;
    p.batch = batch;
    p.heads = heads_;
    p.kv_heads = kv_heads_;
    p.q_len = seq;
    p.kv_len = kv_len;
    p.head_size = p.v_head_size = hs;
    p.scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(hs));
    p.causal = true;
    p.q_offset = past;
    p.key_end = lens;
    p.mask_value = -std::numeric_limits<float>::infinity();
    p.q = {qd.data(), seq * d, hs, d};
    p.k = CacheView(*pk, read, k_store);
    p.v = CacheView(*pv, read, v_store);
    p.sparse_visible = layout->visible.data();
    p.sparse_block = block_;
    p.sparse_layouts = layout->layouts;
    p.sparse_blocks = layout->blocks;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, q->dtype(), {batch, seq, d}));
    FloatOut out(y);
    p.out = {out.data, seq * d, hs, d};
    RunAttention(p, ctx.threads());
    out.Finish();
    return Status::Ok();
  }

 private:
  explicit SparseAttentionKernel(const KernelInfo& info)
      : scale_(info.GetFloat("scale", 0.0f)),
        do_rotary_(info.GetInt("do_rotary", 0) == 1),
        interleaved_(info.GetInt("rotary_interleaved", 0) == 1) {}

  // Rotates the first rotary_dim values of every query and key head at positions past_b + s.
  Status Rotate(KernelContext& ctx, int64_t batch, int64_t seq, int64_t hs, int64_t total,
                const std::vector<int64_t>& past, float* qd, float* kd) const {
    const Tensor* cos = ctx.input_tensor(9);
    const Tensor* sin = ctx.input_tensor(10);
    if (cos == nullptr || sin == nullptr) return Bad("do_rotary needs cos_cache and sin_cache");
    if (hs % 16 != 0) return Bad("do_rotary needs a head size that is a multiple of 16, got " + std::to_string(hs));
    if (cos->rank() != 2 || sin->shape() != cos->shape() || cos->dim(1) > hs / 16 * 8 || cos->dim(1) % 8 != 0 ||
        cos->dim(0) < total || !IsFloatLike(cos->dtype()) || sin->dtype() != cos->dtype()) {
      return Bad("cos_cache and sin_cache must be (at least total_sequence_length " + std::to_string(total) +
                 ", rotary_dim / 2) with rotary_dim / 2 a multiple of 8 and at most head_size / 2, got " +
                 ShapeToString(cos->shape()) + " and " + ShapeToString(sin->shape()));
    }
    FloatIn ci(*cos), si(*sin);
    const int64_t half = cos->dim(1), d = heads_ * hs, kvd = kv_heads_ * hs;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t pos = past[b] + s;  // < lens[b] <= total <= rows of the caches
        const float* c = ci.data + pos * half;
        const float* sn = si.data + pos * half;
        for (int64_t h = 0; h < heads_; ++h) RotateHead(qd + (b * seq + s) * d + h * hs, 2 * half, c, sn, interleaved_);
        for (int64_t h = 0; h < kv_heads_; ++h) RotateHead(kd + (b * seq + s) * kvd + h * hs, 2 * half, c, sn, interleaved_);
      }
    }
    return Status::Ok();
  }

  int64_t heads_ = 0, kv_heads_ = 0, block_ = 0;
  float scale_;
  bool do_rotary_, interleaved_;
  std::optional<SparseLayout> layout_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSparseAttention(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "SparseAttention", 1, kOpenEnded, Make<SparseAttentionKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
