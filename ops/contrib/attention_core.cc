#include "ops/contrib/attention_core.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/math/gemm.h"
#include "ops/nn/row_kernels.h"

namespace onnxflow {
namespace contrib {
namespace {

// Rows of queries per task: enough for the GEMM to run full tiles, few enough that the block of
// scores (rows x keys) stays in L2 for long sequences. Short sequences take up to kMaxQueryBlock
// rows at once (all of BERT's 128), so K and V are packed once per head rather than once per
// 64 rows, as long as the heads alone still give each core two tasks.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kMaxQueryBlock = 256;
constexpr int64_t kScoreBlockFloats = 1 << 15;  // 128 KiB of scores per task

int64_t QueryBlock(const AttentionProblem& p, int threads) {
  int64_t rows = kScoreBlockFloats / std::max<int64_t>(p.kv_len, 1);
  rows = std::clamp<int64_t>(rows / 16 * 16, kQueryBlock, kMaxQueryBlock);
  if (p.batch * p.heads < 2 * threads) rows = kQueryBlock;
  return std::min(rows, std::max<int64_t>(p.q_len, 1));
}

}  // namespace

void RotateHead(float* x, int64_t rot, const float* cos, const float* sin, bool interleaved) {
  const int64_t half = rot / 2;
  if (interleaved) {
    for (int64_t i = 0; i < half; ++i) {
      const float a = x[2 * i], b = x[2 * i + 1];
      x[2 * i] = a * cos[i] - b * sin[i];
      x[2 * i + 1] = b * cos[i] + a * sin[i];
    }
  } else {
    for (int64_t i = 0; i < half; ++i) {
      const float a = x[i], b = x[i + half];
      x[i] = a * cos[i] - b * sin[i];
      x[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

void RunAttention(const AttentionProblem& p, int threads) {
  const int64_t block = QueryBlock(p, threads);
  const int64_t blocks = (p.q_len + block - 1) / block;
  const int64_t tasks = p.batch * p.heads * blocks;
  const int64_t group = p.heads / std::max<int64_t>(p.kv_heads, 1);
  const int64_t cost = block * p.kv_len * (p.head_size + p.v_head_size);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  ParallelRange(threads, tasks, cost, [&](int64_t t0, int64_t t1) {
    std::vector<float> scores;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t blk = t % blocks, bh = t / blocks, h = bh % p.heads, b = bh / p.heads;
      const int64_t kvh = h / group;
      const int64_t r0 = blk * block, rows = std::min(block, p.q_len - r0);
      const int64_t kb = p.key_begin.empty() ? 0 : std::clamp<int64_t>(p.key_begin[b], 0, p.kv_len);
      const int64_t ke = p.key_end.empty() ? p.kv_len : std::clamp<int64_t>(p.key_end[b], 0, p.kv_len);
      const int64_t off = p.q_offset.empty() ? 0 : p.q_offset[b];
      // Keys past every row's causal limit carry no weight: they are left out of both products
      // (with an additive mask_value, exp(score + mask_value) underflows to 0 just the same).
      int64_t n = p.kv_len;
      if (p.causal) n = std::clamp<int64_t>(off + r0 + rows, 0, p.kv_len);
      if (p.mask_value == neg_inf) n = std::min(n, ke);
      float* out0 = p.out.at(b, h, r0);
      if (n <= 0) {
        for (int64_t r = 0; r < rows; ++r) std::fill(out0 + r * p.out.row, out0 + r * p.out.row + p.v_head_size, 0.0f);
        continue;
      }
      scores.resize(static_cast<size_t>(rows * n));
      // Q K^T unscaled: a scaled A would be packed, an unscaled one is read in place. The scale
      // is applied below in the same pass over the row as the first additive term.
      GemmInputA qa{nullptr, p.q.at(b, h, r0), p.q.row, false, 1.0f};
      GemmInputB kt{nullptr, p.k.at(b, kvh, 0), p.k.row, true};
      Sgemm(rows, n, p.head_size, qa, kt, scores.data(), n, GemmEpilogue{}, 1);
      for (int64_t r = 0; r < rows; ++r) {
        float* s = scores.data() + r * n;
        const int64_t i = r0 + r, pos = off + i;
        float pending = p.scale;  // the scale not yet applied to s
        if (p.softcap > 0.0f) {
          for (int64_t j = 0; j < n; ++j) s[j] = p.softcap * std::tanh(s[j] * pending / p.softcap);
          pending = 1.0f;
        }
        // s = s * pending + a (SIMD), for each additive term.
        auto add = [&](const float* a) {
          NormalizeRow(s, 0.0f, pending, nullptr, a, s, n);
          pending = 1.0f;
        };
        if (p.key_add != nullptr) add(p.key_add + b * p.kv_len);
        if (p.row_add != nullptr) add(p.row_add + b * p.row_add_batch + i * p.row_add_row);
        if (p.bias != nullptr) add(p.bias + b * p.bias_batch + h * p.bias_head + i * p.bias_row);
        if (pending != 1.0f) AffineRow(s, pending, 0.0f, s, n);
        // Invisible keys: outside [kb, ke), past the causal limit, before the window.
        int64_t lo = kb, hi = ke;
        if (p.causal) hi = std::min(hi, pos + 1);
        if (p.window >= 0) lo = std::max(lo, pos - p.window);
        auto hide = [&](int64_t j) { s[j] = p.mask_value == neg_inf ? neg_inf : s[j] + p.mask_value; };
        for (int64_t j = 0; j < std::min(lo, n); ++j) hide(j);
        for (int64_t j = std::max<int64_t>(hi, 0); j < n; ++j) hide(j);
        float max = RowMax(s, n);
        const bool has_sink = p.sink != nullptr || p.smooth;
        const float sink = p.sink != nullptr ? p.sink[h] : 0.0f;
        if (has_sink) max = std::max(max, sink);
        if (max == neg_inf) {
          std::fill(s, s + n, 0.0f);
          continue;
        }
        float sum = ExpShiftSum(s, max, s, n);
        if (has_sink) sum += std::exp(sink - max);
        AffineRow(s, 1.0f / sum, 0.0f, s, n);
      }
      GemmInputA pa{nullptr, scores.data(), n, false, 1.0f};
      GemmInputB vb{nullptr, p.v.at(b, kvh, 0), p.v.row, false};
      Sgemm(rows, p.v_head_size, n, pa, vb, out0, p.out.row, GemmEpilogue{}, 1);
    }
  });
}

}  // namespace contrib
}  // namespace onnxflow
