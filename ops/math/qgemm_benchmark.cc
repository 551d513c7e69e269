// The integer GEMM (qgemm.h) in GOPS (2*M*N*K integer operations per iteration), on the float GEMM
// table's shapes (gemm_benchmark.cc), on 1 and 2 threads, uint8 A x int8 B packed once (the path a
// constant weight takes), int32 out. BM_VnniPeak measures the machine's vpdpbusd peak: 2 x 12
// independent dependency chains of zmm vpdpbusd (64 multiply-adds each), no memory, on 1 and 2
// threads; BM_AmxPeak the tdpbusd peak where the CPU has AMX: four accumulator tiles, each
// tdpbusd 16 x 16 x 64 multiply-adds, no memory. The amx argument 0 runs the VNNI kernels on an AMX
// machine.
//   ./bazelw run -c opt //ops/math:qgemm_benchmark
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>
#include <oneapi/tbb/task_arena.h>

#include "ops/math/qgemm.h"
#include "ops/math/qgemm_amx.h"

namespace onnxflow {
namespace {

void SetCounters(benchmark::State& state, double ops) {
  state.counters["GOPS"] =
      benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// Args: M, N, K, threads, amx (0: the VNNI kernels on a CPU that has AMX too), weights: 0 uniform
// random bytes, else like a model's, normal with that standard deviation: 24 is per-tensor
// quantization's (the largest of a 768 x 768 matrix, 5 deviations out, becomes 127), 40 per-
// channel's (3.2 deviations). AVX2 bounds the pairs of the first for vpmaddubsw (QPackedB).
void BM_QGemm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  QGemmDisableAmxForTest(state.range(4) == 0);
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> byte(0, 255);
  std::normal_distribution<float> weight(0.0f, static_cast<float>(std::max<int64_t>(1, state.range(5))));
  std::vector<uint8_t> a(m * k), b(k * n);
  for (auto& x : a) x = static_cast<uint8_t>(byte(rng));
  for (auto& x : b) {
    x = state.range(5) == 0 ? static_cast<uint8_t>(byte(rng))
                            : static_cast<uint8_t>(std::clamp(static_cast<int>(std::lround(weight(rng))), -127, 127));
  }
  std::vector<int32_t> c(m * n);
  const QPackedB pb = QPackB(b.data(), true, n, false, k, n);
  const int32_t za = 7;
  QZeroPoints zero{&za, 1, nullptr, 1};
  tbb::task_arena arena(threads);
  for (auto _ : state) {
    arena.execute([&] {
      const QPackedA pa = QPackA(a.data(), false, k, m, k, threads);  // as the ops pack it
      QGemm(pa, pb, zero, QEpilogue{}, c.data(), n, threads);
    });
    benchmark::DoNotOptimize(c.data());
  }
  SetCounters(state, 2.0 * m * n * k);
  state.SetLabel(QGemmUsesAmx() && k >= 64 ? "amx"
                 : QGemmUsesVnni()           ? "vnni"
                 : pb.pairs_bounded          ? "bounded"
                                             : "no-vnni");
  QGemmDisableAmxForTest(false);
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void VnniLoop(benchmark::State& state) {
  constexpr int kChains = 12;
  const __m512i a = _mm512_set1_epi32(0x01010101), b = _mm512_set1_epi32(0x01FF01FF);
  __m512i c0 = a, c1 = b, c2 = a, c3 = b, c4 = a, c5 = b, c6 = a, c7 = b, c8 = a, c9 = b, c10 = a, c11 = b;
  const int64_t iters = 1 << 16;
  for (auto _ : state) {
    for (int64_t it = 0; it < iters; ++it) {
      c0 = _mm512_dpbusd_epi32(c0, a, b);
      c1 = _mm512_dpbusd_epi32(c1, a, b);
      c2 = _mm512_dpbusd_epi32(c2, a, b);
      c3 = _mm512_dpbusd_epi32(c3, a, b);
      c4 = _mm512_dpbusd_epi32(c4, a, b);
      c5 = _mm512_dpbusd_epi32(c5, a, b);
      c6 = _mm512_dpbusd_epi32(c6, a, b);
      c7 = _mm512_dpbusd_epi32(c7, a, b);
      c8 = _mm512_dpbusd_epi32(c8, a, b);
      c9 = _mm512_dpbusd_epi32(c9, a, b);
      c10 = _mm512_dpbusd_epi32(c10, a, b);
      c11 = _mm512_dpbusd_epi32(c11, a, b);
      // Opaque to the compiler: otherwise chains with equal starting values merge into one.
      __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5), "+v"(c6), "+v"(c7),
                       "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));
    }
  }
  __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                               _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7)));
  s = _mm512_add_epi32(s, _mm512_add_epi32(_mm512_add_epi32(c8, c9), _mm512_add_epi32(c10, c11)));
  int32_t out[16];
  _mm512_storeu_si512(out, s);
  benchmark::DoNotOptimize(out);
  // Google Benchmark adds the threads' counters and then multiplies by the iterations of all
  // threads: each thread counts its share, or two threads report twice their rate.
  SetCounters(state, 2.0 * 64 * kChains * iters / state.threads());
}

void BM_VnniPeak(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx512vnni")) {
    state.SkipWithError("no AVX-512 VNNI");
    return;
  }
  VnniLoop(state);
}

__attribute__((target("amx-tile,amx-int8"))) void AmxLoop(benchmark::State& state) {
  const qgemm_amx::TileScope tiles;
  alignas(64) static uint8_t a[16 * 64] = {1};
  alignas(64) static int8_t b[16 * 64] = {1};
  _tile_loadd(4, a, 64);
  _tile_loadd(5, a, 64);
  _tile_loadd(6, b, 64);
  _tile_loadd(7, b, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const int64_t iters = 1 << 14;
  for (auto _ : state) {
    for (int64_t it = 0; it < iters; ++it) {
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(1, 4, 7);
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    }
  }
  alignas(64) int32_t out[16 * 16];
  _tile_stored(0, out, 64);
  benchmark::DoNotOptimize(out);
  SetCounters(state, 2.0 * 16 * 16 * 64 * 4 * iters / state.threads());
}

void BM_AmxPeak(benchmark::State& state) {
  if (!qgemm_amx::Usable()) {
    state.SkipWithError("no AMX-INT8");
    return;
  }
  AmxLoop(state);
}

void Shapes(benchmark::internal::Benchmark* b) {
  const int64_t shapes[][3] = {{1, 256, 256},    {1, 1024, 1024},   {1, 4096, 4096},  {16, 512, 512},
                               {16, 4096, 1024}, {256, 256, 256},   {256, 1024, 1024}, {256, 4096, 64},
                               {1024, 1024, 1024}, {1024, 4096, 4096}, {1024, 64, 4096},
                               {64, 12544, 147}, {64, 3136, 64}, {64, 3136, 576}, {256, 3136, 64},
                               {128, 784, 1152}, {512, 49, 4608}, {2048, 49, 512}, {16, 3025, 64},
                               {128, 768, 768}, {128, 3072, 768}, {128, 768, 3072},
                               // The large squares the peak is quoted on (issue 21's int8 table).
                               {512, 512, 512},   {2048, 2048, 2048}};
  for (int threads : {1, 2}) {
    for (const auto& s : shapes) {
      for (int amx : {1, 0}) b->Args({s[0], s[1], s[2], threads, amx, 0});
      for (int deviation : {24, 40}) b->Args({s[0], s[1], s[2], threads, 0, deviation});
    }
  }
}

// One loop per core: the two-thread GEMM's percentage is against the two-thread peak measured in
// the same run (the counters of the threads add up).
BENCHMARK(BM_VnniPeak)->UseRealTime()->Threads(1)->Threads(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AmxPeak)->UseRealTime()->Threads(1)->Threads(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_QGemm)
    ->ArgNames({"M", "N", "K", "threads", "amx", "weights"})
    ->Apply(Shapes)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace onnxflow

BENCHMARK_MAIN();
