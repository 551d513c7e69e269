// The attention core (attention_core.h) in GFLOP/s (2 * q_len * kv_len * (head_size + v_head_size)
// per head and batch, the two products; softmax not counted), on transformer shapes, 1 and 2
// threads: ViT-S/16 (6 heads, 197 tokens), BERT-base (12 heads, 128 tokens), a long causal
// sequence, and one decoding step over a 1024-token cache. q, k and v are read packed in one
// projection as a fused model reads them.
//   ./bazelw run -c opt //ops/contrib:attention_benchmark
#include <random>
#include <vector>

#include <benchmark/benchmark.h>
#include <oneapi/tbb/task_arena.h>

#include "ops/contrib/attention_core.h"

namespace onnxflow {
namespace contrib {
namespace {

// Args: heads, q_len, kv_len, head_size, causal, threads
void BM_Attention(benchmark::State& state) {
  const int64_t heads = state.range(0), q_len = state.range(1), kv_len = state.range(2), d = state.range(3);
  const bool causal = state.range(4) != 0;
  const int threads = static_cast<int>(state.range(5));
  const int64_t width = heads * d;  // one of q, k, v in a row of the projection
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> q(q_len * width), kv(kv_len * 2 * width), out(q_len * width);
  for (auto& x : q) x = normal(rng);
  for (auto& x : kv) x = normal(rng);
  AttentionProblem p;
  p.batch = 1;
  p.heads = p.kv_heads = heads;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.head_size = p.v_head_size = d;
  p.q = {q.data(), 0, d, width};
  p.k = {kv.data(), 0, d, 2 * width};
  p.v = {kv.data() + width, 0, d, 2 * width};
  p.out = {out.data(), 0, d, width};
  p.scale = 0.125f;
  p.causal = causal;
  if (causal) p.q_offset = {kv_len - q_len};
  tbb::task_arena arena(threads);
  for (auto _ : state) {
    arena.execute([&] { RunAttention(p, threads); });
    benchmark::DoNotOptimize(out.data());
  }
  const double flops = 2.0 * heads * q_len * kv_len * 2 * d * (causal && q_len > 1 ? 0.5 : 1.0);
  state.counters["GFLOPS"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({6, 197, 197, 64, 0, threads});     // ViT-S/16
    b->Args({12, 128, 128, 64, 0, threads});    // BERT-base
    b->Args({12, 384, 384, 64, 0, threads});    // BERT-base, SQuAD length
    b->Args({12, 2048, 2048, 64, 1, threads});  // a long causal prompt
    b->Args({12, 1, 1024, 64, 1, threads});     // one decoding step, 1024 cached tokens
  }
}
BENCHMARK(BM_Attention)->Apply(Shapes)->ArgNames({"heads", "q", "kv", "d", "causal", "threads"})->UseRealTime();

}  // namespace
}  // namespace contrib
}  // namespace onnxflow

BENCHMARK_MAIN();
