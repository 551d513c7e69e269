// Our SGEMM against OpenBLAS cblas_sgemm, in the same run, on 1 and 2 threads.
//   ./bazelw run -c opt //ops/math:gemm_benchmark
// Every case reports GFLOP/s (2*M*N*K per iteration). "packedB" is the path a Gemm/MatMul with a
// constant weight takes (B packed once, outside the timed loop); "rawB" packs nothing ahead of time;
// "StreamedB" is packedB with B coming from memory, as a model's weights do.
#include <cblas.h>

#include <algorithm>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>
#include <oneapi/tbb/task_arena.h>

#include "ops/math/gemm.h"

namespace onnxflow {
namespace {

struct Operands {
  std::vector<float> a, b, c;
  Operands(int64_t m, int64_t n, int64_t k) : a(m * k), b(k * n), c(m * n) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
  }
};

void SetCounters(benchmark::State& state, int64_t m, int64_t n, int64_t k) {
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

// Args: M, N, K, threads, packed B (0/1)
void BM_Onnxflow(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const bool packed = state.range(4) != 0;
  Operands op(m, n, k);
  PackedB pb;
  GemmInputB b{nullptr, op.b.data(), n, false};
  if (packed) {
    pb = PackB(op.b.data(), n, false, k, n);
    b = GemmInputB{&pb};
  }
  GemmInputA a{nullptr, op.a.data(), k, false, 1.0f};
  tbb::task_arena arena(threads);
  for (auto _ : state) {
    arena.execute([&] { Sgemm(m, n, k, a, b, op.c.data(), n, GemmEpilogue{}, threads); });
    benchmark::DoNotOptimize(op.c.data());
  }
  SetCounters(state, m, n, k);
}

// A model's weights are each used once per run and together exceed the caches, so a MatMul meets
// its packed B in memory, not in cache. This case cycles through enough distinct packed copies of B
// (at least 256 MiB) that every iteration streams its B from memory.
void BM_OnnxflowStreamedB(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  Operands op(m, n, k);
  const int64_t copies = std::max<int64_t>(2, (int64_t{256} << 20) / (n * k * 4));
  std::vector<PackedB> pbs;
  for (int64_t i = 0; i < copies; ++i) pbs.push_back(PackB(op.b.data(), n, false, k, n));
  GemmInputA a{nullptr, op.a.data(), k, false, 1.0f};
  tbb::task_arena arena(threads);
  size_t next = 0;
  for (auto _ : state) {
    const GemmInputB b{&pbs[next]};
    next = (next + 1) % pbs.size();
    arena.execute([&] { Sgemm(m, n, k, a, b, op.c.data(), n, GemmEpilogue{}, threads); });
    benchmark::DoNotOptimize(op.c.data());
  }
  SetCounters(state, m, n, k);
}

void BM_OpenBlas(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  openblas_set_num_threads(static_cast<int>(state.range(3)));
  Operands op(m, n, k);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, op.a.data(), k, op.b.data(), n, 0.0f,
                op.c.data(), n);
    benchmark::DoNotOptimize(op.c.data());
  }
  SetCounters(state, m, n, k);
}

void Shapes(benchmark::internal::Benchmark* b, bool with_packing) {
  const int64_t shapes[][3] = {{1, 256, 256},    {1, 1024, 1024},   {1, 4096, 4096},  {16, 512, 512},
                               {16, 4096, 1024}, {256, 256, 256},   {256, 1024, 1024}, {256, 4096, 64},
                               {1024, 1024, 1024}, {1024, 4096, 4096}, {1024, 64, 4096},
                               // Convolutions as GEMMs (M = out channels, N = output pixels, K = in
                               // channels x kernel): ResNet-50's stem, 1x1 and 3x3 layers, SqueezeNet's fire.
                               {64, 12544, 147}, {64, 3136, 64}, {64, 3136, 576}, {256, 3136, 64},
                               {128, 784, 1152}, {512, 49, 4608}, {2048, 49, 512}, {16, 3025, 64},
                               // BERT-base on 128 tokens: the projections and the feed-forward pair.
                               {128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}};
  for (int threads : {1, 2}) {
    for (const auto& s : shapes) {
      if (with_packing) {
        for (int packed : {0, 1}) b->Args({s[0], s[1], s[2], threads, packed});
      } else {
        b->Args({s[0], s[1], s[2], threads});
      }
    }
  }
}

BENCHMARK(BM_Onnxflow)
    ->ArgNames({"M", "N", "K", "threads", "packedB"})
    ->Apply([](benchmark::internal::Benchmark* b) { Shapes(b, true); })
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OnnxflowStreamedB)
    ->ArgNames({"M", "N", "K", "threads"})
    ->Args({128, 768, 768, 1})->Args({128, 3072, 768, 1})->Args({128, 768, 3072, 1})
    ->Args({128, 768, 768, 2})->Args({128, 3072, 768, 2})->Args({128, 768, 3072, 2})
    ->Args({1, 4096, 4096, 1})->Args({1, 4096, 4096, 2})
    // A short prompt's prefill (a few rows against streamed weights): GPT-2's feed-forward pair.
    ->Args({8, 3072, 768, 1})->Args({8, 768, 3072, 1})->Args({8, 3072, 768, 2})->Args({8, 768, 3072, 2})
    ->Args({4, 3072, 768, 2})->Args({16, 3072, 768, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OpenBlas)
    ->ArgNames({"M", "N", "K", "threads"})
    ->Apply([](benchmark::internal::Benchmark* b) { Shapes(b, false); })
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace onnxflow

BENCHMARK_MAIN();
