#include "ops/contrib/attention_core.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/math/gemm.h"
#include "ops/nn/row_kernels.h"
#include "ops/vec/vec_ops.h"

namespace onnxflow {
namespace contrib {
namespace {

// Rows of queries per task: enough for the GEMM to run full tiles, few enough that the block of
// scores (rows x keys) stays in L2 for long sequences. Short sequences take up to kMaxQueryBlock
// rows at once (all of BERT's 128), so K and V are packed once per head rather than once per
// 64 rows, as long as the heads alone still give each core two tasks.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kMaxQueryBlock = 256;
// 256 KiB of scores per task: ViT-S/16's 197 rows are one block per head, six equal tasks rather
// than blocks of 160 and 37 rows (at 2 threads 128 -> 155 GFLOP/s, attention_benchmark, 4 rounds
// alternated; 1 thread and 384 or 2048 tokens unchanged). At 128 KiB, the last session measured
// no clear gain; packing K and V once per head since then made smaller blocks no cheaper.
constexpr int64_t kScoreBlockFloats = 1 << 16;
// Up to kSinglePassKeys keys, a row's scores are computed at once; past it, kKeyBlock at a time
// with the online softmax.
constexpr int64_t kSinglePassKeys = 1024;
constexpr int64_t kKeyBlock = 512;
// Up to this many query rows (a decoding step, a few speculative tokens), the products read K and
// V where they lie, as dot products and weighted sums of rows: the GEMM would transpose and copy
// the whole cache for a product that reads each of its values once or twice. One step over 1024
// cached tokens spent 45% of its time there (attention_benchmark).
constexpr int64_t kDotRows = 4;

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

// Keys in chunks of kKeyBlock past kSinglePassKeys: each chunk's K^T and V as the GEMM reads them.
int64_t KeyChunk(int64_t keys) { return keys <= kSinglePassKeys ? keys : kKeyBlock; }

// K^T and V of every (batch, kv head, chunk of keys), packed once for all the tasks that read
// them: the query blocks of a head (a long sequence has many) and the query heads of a group.
// Packed per task instead, a 2048-token causal prompt spent 17% of its time transposing and
// copying the same keys and values again for each block of 64 rows (attention_benchmark).
class SharedKeys {
 public:
  SharedKeys(const AttentionProblem& p, int threads) : chunk_(KeyChunk(p.kv_len)) {
    chunks_ = (p.kv_len + chunk_ - 1) / chunk_;
    kv_heads_ = std::max<int64_t>(p.kv_heads, 1);
    const int64_t n = p.batch * kv_heads_ * chunks_;
    kt_.resize(static_cast<size_t>(n));
    v_.resize(static_cast<size_t>(n));
    const int64_t cost = chunk_ * (p.head_size + p.v_head_size) / 16;  // copies, not multiply-adds
    ParallelFor(threads, n, MacCost(cost), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t c = i % chunks_, bh = i / chunks_, h = bh % kv_heads_, b = bh / kv_heads_;
        const int64_t c0 = c * chunk_, w = std::min(chunk_, p.kv_len - c0);
        kt_[i] = PackB(p.k.at(b, h, c0), p.k.row, /*trans=*/true, p.head_size, w);
        v_[i] = PackB(p.v.at(b, h, c0), p.v.row, /*trans=*/false, w, p.v_head_size);
      }
    });
  }
  // Whether packing them all at once stays within twice what K and V hold: strips pad the head
  // sizes to the GEMM's tile width, which a head of a few values would multiply (a head size of 1
  // would pack V 48 times over, every head at once).
  static bool Fits(const AttentionProblem& p) {
    const int64_t nr = GemmTile().nr, keys = KeyChunk(p.kv_len);
    const auto up = [nr](int64_t x) { return (x + nr - 1) / nr * nr; };
    const int64_t packed = p.head_size * up(keys) + keys * up(p.v_head_size);
    return packed <= 2 * keys * (p.head_size + p.v_head_size);
  }
  int64_t chunk() const { return chunk_; }
  // Chunk c0 / chunk() of (b, kv head h); a product may read a prefix of its keys (gemm.h).
  const PackedB& kt(int64_t b, int64_t h, int64_t c0) const { return kt_[Index(b, h, c0)]; }
  const PackedB& v(int64_t b, int64_t h, int64_t c0) const { return v_[Index(b, h, c0)]; }

 private:
  size_t Index(int64_t b, int64_t h, int64_t c0) const {
    return static_cast<size_t>((b * kv_heads_ + h) * chunks_ + c0 / chunk_);
  }
  int64_t chunk_ = 0, chunks_ = 0, kv_heads_ = 1;
  std::vector<PackedB> kt_, v_;
};

void RunAttention(const AttentionProblem& p, int threads) {
  const int64_t block = QueryBlock(p, threads);
  const int64_t blocks = (p.q_len + block - 1) / block;
  const int64_t tasks = p.batch * p.heads * blocks;
  const int64_t group = p.heads / std::max<int64_t>(p.kv_heads, 1);
  const int64_t cost = block * p.kv_len * (p.head_size + p.v_head_size);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  // Several tasks read each head's keys and values: pack them once, before the tasks. (One block
  // of rows per head packs its own inside the GEMM, as it reads them once.)
  const bool dots = block <= kDotRows || p.key_batch != nullptr;
  std::optional<SharedKeys> shared;
  if (!dots && (blocks > 1 || group > 1) && SharedKeys::Fits(p)) shared.emplace(p, threads);
  ParallelFor(threads, tasks, MacCost(cost), [&](int64_t t0, int64_t t1) {
    std::vector<float> scores, row_max, row_sum;
    // Calls run(src, j, len) for the runs of keys [c0, c0 + w) of batch entry b that lie in one
    // batch entry src: b itself, or with beam indirection the entries key_batch names (beams share
    // long prefixes, so a step is a few runs).
    auto each_run = [&p](int64_t b, int64_t c0, int64_t w, auto&& run) {
      if (p.key_batch == nullptr) return run(b, c0, w);
      const int32_t* src = p.key_batch + b * p.key_batch_stride;
      for (int64_t j = c0, e = c0; j < c0 + w; j = e) {
        for (e = j + 1; e < c0 + w && src[e] == src[j];) ++e;
        run(static_cast<int64_t>(src[j]), j, e - j);
      }
    };
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
      // Keys in chunks of kKeyBlock past kSinglePassKeys (online softmax): each row keeps its
      // running max and sum, and its output rows are rescaled when the max grows, so the scores
      // held at a time are rows x chunk whatever the sequence length. Shared packs fix the chunks
      // by the whole sequence.
      const int64_t kc = shared ? shared->chunk() : KeyChunk(n);
      scores.resize(static_cast<size_t>(rows * kc));
      const bool has_sink = p.sink != nullptr || p.smooth;
      const float sink = p.sink != nullptr ? p.sink[h] : 0.0f;
      // The sink joins the denominator: starting the max at it gives max(scores, sink).
      row_max.assign(static_cast<size_t>(rows), has_sink ? sink : neg_inf);
      row_sum.assign(static_cast<size_t>(rows), 0.0f);
      GemmInputA qa{nullptr, p.q.at(b, h, r0), p.q.row, false, 1.0f};
      for (int64_t c0 = 0; c0 < n; c0 += kc) {
        const int64_t w = std::min(kc, n - c0);
        // Q K^T unscaled: a scaled A would be packed, an unscaled one is read in place. The scale
        // is applied below in the same pass over the row as the first additive term, or in the
        // exponent.
        if (dots) {
          for (int64_t r = 0; r < rows; ++r) {
            each_run(b, c0, w, [&](int64_t src, int64_t j, int64_t len) {
              vec::DotRows(p.q.at(b, h, r0 + r), p.k.at(src, kvh, j), p.k.row, len, p.head_size,
                           scores.data() + r * w + (j - c0));
            });
          }
        } else {
          GemmInputB kt{nullptr, p.k.at(b, kvh, c0), p.k.row, true};
          if (shared) kt = GemmInputB{&shared->kt(b, kvh, c0)};
          Sgemm(rows, w, p.head_size, qa, kt, scores.data(), w, GemmEpilogue{}, 1);
        }
        // The scale is folded into the exponent (exp(s * scale - max)) when nothing is added to
        // the scores in this chunk: scaling then adding would differ from adding to the unscaled
        // scores. Keys that drop out (-inf) are the same either way.
        const bool adds_mask = p.mask_value != neg_inf && (kb > c0 || ke < c0 + w);
        // Nor with a block-sparse layout: its hidden keys' -FLT_MAX must be the scaled score (a
        // row that hides every key weighs them equally), and exp(s * scale - max) with s = -FLT_MAX
        // is off by the rounding of -FLT_MAX * scale, far past exp's range.
        const bool fold_scale = p.scale > 0.0f && p.softcap <= 0.0f && !adds_mask && p.key_add == nullptr &&
                                p.row_add == nullptr && p.bias == nullptr && p.sparse_visible == nullptr;
        for (int64_t r = 0; r < rows; ++r) {
          float* s = scores.data() + r * w;
          const int64_t i = r0 + r, pos = off + i;
          float pending = p.scale;  // the scale not yet applied to s
          if (p.softcap > 0.0f) {
            for (int64_t j = 0; j < w; ++j) s[j] = p.softcap * std::tanh(s[j] * pending / p.softcap);
            pending = 1.0f;
          }
          // s = s * pending + a (SIMD), for each additive term.
          auto add = [&](const float* a) {
            NormalizeRow(s, 0.0f, pending, nullptr, a, s, w);
            pending = 1.0f;
          };
          if (p.key_add != nullptr) add(p.key_add + b * p.kv_len + c0);
          if (p.row_add != nullptr) add(p.row_add + b * p.row_add_batch + i * p.row_add_row + c0);
          if (p.bias != nullptr) add(p.bias + b * p.bias_batch + h * p.bias_head + i * p.bias_row + c0);
          if (pending != 1.0f && !fold_scale) {
            AffineRow(s, pending, 0.0f, s, w);
            pending = 1.0f;
          }
          // Invisible keys: outside [kb, ke) they get mask_value; past the causal limit or before
          // the window they drop out whatever mask_value is, as ONNX Runtime masks them (its
          // mask_filter_value applies to the masks a model passes, not to unidirectional).
          auto hide = [&](int64_t from, int64_t to, bool drop) {
            for (int64_t j = std::max(from, c0); j < std::min(to, c0 + w); ++j) {
              s[j - c0] = drop || p.mask_value == neg_inf ? neg_inf : s[j - c0] + p.mask_value;
            }
          };
          hide(0, kb, false);
          hide(ke, p.kv_len, false);
          if (p.causal) hide(pos + 1, p.kv_len, true);
          if (p.window >= 0) hide(0, pos - p.window, true);
          if (p.sparse_visible != nullptr) {
            const unsigned char* visible =
                p.sparse_visible + ((h % p.sparse_layouts) * p.sparse_blocks + pos / p.sparse_block) * p.sparse_blocks;
            for (int64_t j = c0; j < c0 + w; ++j) {  // the scale is applied (pending == 1) here
              if (visible[j / p.sparse_block] == 0 && s[j - c0] != neg_inf) s[j - c0] = -std::numeric_limits<float>::max();
            }
          }
          const float old_max = row_max[r];
          const float max = std::max(old_max, RowMax(s, w) * pending);  // pending > 0 here
          if (max == neg_inf) {  // nothing visible yet: no weight
            std::fill(s, s + w, 0.0f);
            continue;
          }
          const float sum = ExpShiftSum(s, max, s, w, pending);
          const float correction = old_max == neg_inf ? 0.0f : std::exp(old_max - max);
          row_sum[r] = row_sum[r] * correction + sum;
          row_max[r] = max;
          if (c0 > 0 && correction != 1.0f) {
            float* o = out0 + r * p.out.row;
            AffineRow(o, correction, 0.0f, o, p.v_head_size);
          }
        }
        if (dots) {
          for (int64_t r = 0; r < rows; ++r) {
            float* o = out0 + r * p.out.row;
            if (c0 == 0) std::fill(o, o + p.v_head_size, 0.0f);
            each_run(b, c0, w, [&](int64_t src, int64_t j, int64_t len) {
              vec::AccumulateRows(scores.data() + r * w + (j - c0), p.v.at(src, kvh, j), p.v.row, len, p.v_head_size, o);
            });
          }
          continue;
        }
        GemmInputA pa{nullptr, scores.data(), w, false, 1.0f};
        GemmInputB vb{nullptr, p.v.at(b, kvh, c0), p.v.row, false};
        if (shared) vb = GemmInputB{&shared->v(b, kvh, c0)};
        GemmEpilogue ep;
        ep.accumulate = c0 > 0;
        Sgemm(rows, p.v_head_size, w, pa, vb, out0, p.out.row, ep, 1);
      }
      // The weights were left unnormalized: each output row is divided by its sum once, v_head_size
      // values rather than a row of scores per chunk.
      for (int64_t r = 0; r < rows; ++r) {
        float* o = out0 + r * p.out.row;
        if (row_max[r] == neg_inf) {  // no key was visible (and no sink)
          std::fill(o, o + p.v_head_size, 0.0f);
          continue;
        }
        const float total = row_sum[r] + (has_sink ? std::exp(sink - row_max[r]) : 0.0f);
        AffineRow(o, 1.0f / total, 0.0f, o, p.v_head_size);
      }
    }
  });
}

}  // namespace contrib
}  // namespace onnxflow
