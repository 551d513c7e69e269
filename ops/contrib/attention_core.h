// The attention computation the com.microsoft attention ops, com.onnxflow FusedAttention and float
// ONNX Attention share: for each (batch, head, block of query rows), scores = scale * Q K^T on the
// GEMM, softcap, additive biases and masks, softmax (with an optional sink term), then the block's
// rows of P V on the GEMM (K^T and V packed once when several blocks or heads read them; a few rows,
// a decoding step, read them in place as dot products and weighted rows instead). Heads and query
// blocks are split over the cores, and no (batch, heads, queries, keys)
// score tensor is ever written: a task holds its rows' scores for at most 1024 keys; longer key
// sequences go 512 keys at a time with an online softmax (running max and sum per row, the output
// rescaled as the max grows), so what a core holds does not grow with the sequence.
#pragma once

#include <cstdint>
#include <vector>

namespace onnxflow {
namespace contrib {

// Where element (b, h, row, d) of an operand lives: data + b * batch + h * head + row * row + d.
struct HeadView {
  const float* data = nullptr;
  int64_t batch = 0, head = 0, row = 0;
  const float* at(int64_t b, int64_t h, int64_t r) const { return data + b * batch + h * head + r * row; }
};
struct HeadOut {
  float* data = nullptr;
  int64_t batch = 0, head = 0, row = 0;
  float* at(int64_t b, int64_t h, int64_t r) const { return data + b * batch + h * head + r * row; }
};

struct AttentionProblem {
  int64_t batch = 0, heads = 0, kv_heads = 0;  // query head h reads kv head h / (heads / kv_heads)
  int64_t q_len = 0, kv_len = 0, head_size = 0, v_head_size = 0;
  HeadView q, k, v;
  HeadOut out;
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: score = softcap * tanh(score / softcap)
  // Key j is visible to query row i of batch b when key_begin[b] <= j < key_end[b] and, when
  // causal, j <= q_offset[b] + i and, with a window, j >= q_offset[b] + i - window. Empty vectors
  // mean 0, kv_len and 0.
  std::vector<int64_t> key_begin, key_end, q_offset;
  bool causal = false;
  int64_t window = -1;
  // A key outside [key_begin, key_end) gets `mask_value` added to its score (ONNX Runtime's
  // Attention and MultiHeadAttention add mask_filter_value, -10000 by default); -inf drops it. Keys
  // hidden by causal or the window always drop out.
  float mask_value = -10000.0f;
  // Additive terms: per (b, key) (a 0/1 key mask turned into 0 / mask_value), per (b, row, key), and
  // the attention_bias (b or 1, h or 1, row, key) with its batch and head strides (0 to repeat).
  const float* key_add = nullptr;    // [batch, kv_len]
  const float* row_add = nullptr;    // [batch, q_len, kv_len]
  int64_t row_add_row = 0;           // row stride of row_add (kv_len unless a larger mask is read)
  int64_t row_add_batch = 0;
  const float* bias = nullptr;
  int64_t bias_batch = 0, bias_head = 0, bias_row = 0;
  // Per head: a sink logit that joins the softmax denominator (GroupQueryAttention's head_sink;
  // smooth_softmax is a sink of 0 for every head).
  const float* sink = nullptr;
  bool smooth = false;
  // Block-sparse attention (SparseAttention): with sparse_visible set, query row i of batch b and
  // head h sees key j only where
  //   sparse_visible[((h % sparse_layouts) * sparse_blocks + pos / sparse_block) * sparse_blocks + j / sparse_block]
  // is non-zero, pos = q_offset[b] + i. The caller makes sure every visible position and key falls
  // within sparse_blocks * sparse_block. A key hidden this way (and not already dropped by the
  // causal limit) takes the score -FLT_MAX as ONNX Runtime writes it: a row that hides every key
  // then weighs them all equally, as there, where -inf would give zeros.
  const unsigned char* sparse_visible = nullptr;
  int64_t sparse_block = 1, sparse_layouts = 1, sparse_blocks = 0;
  // Beam search's cache indirection (DecoderMaskedMultiHeadAttention): key and value row j of batch
  // entry b are row j of batch entry key_batch[b * key_batch_stride + j] (its absolute index in
  // k and v). With it the products read the cache in place as dot products and weighted rows, run
  // by run of keys from one entry, whatever the number of query rows (a decoding step has one).
  const int32_t* key_batch = nullptr;
  int64_t key_batch_stride = 0;
};

// Runs the problem on up to `threads` cores.
void RunAttention(const AttentionProblem& p, int threads);

// Rotates the first `rot` values of one head vector in place: pairs (i, i + rot/2), or (2i, 2i+1)
// when interleaved, by the angles whose cosines and sines are cos[0..rot/2), sin[0..rot/2).
void RotateHead(float* x, int64_t rot, const float* cos, const float* sin, bool interleaved);

}  // namespace contrib
}  // namespace onnxflow
