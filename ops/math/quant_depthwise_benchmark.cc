// The 8-bit depthwise convolution (quant_depthwise.h) on QDQ ShuffleNet's and MobileNetV2's shapes (3x3, pad 1,
// uint8 activations, int8 weights: on an AVX-512 VNNI CPU the vpdpbusd path), in multiply-adds
// per second, on 1 and 2 threads:
//   ./bazelw run -c opt //ops/math:quant_depthwise_benchmark
#include <random>
#include <vector>

#include <benchmark/benchmark.h>
#include <oneapi/tbb/task_arena.h>

#include "ops/math/quant_depthwise.h"

namespace onnxflow {
namespace {

// Args: input height = width, channels, stride, threads
void BM_QDepthwise(benchmark::State& state) {
  const int64_t hw = state.range(0), c = state.range(1), stride = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  ConvAttributes attrs;
  attrs.kernel_shape = {3, 3};
  attrs.strides = {stride, stride};
  attrs.pads = {1, 1, 1, 1};
  attrs.group = c;
  auto g = ComputeConvGeometry(attrs, {1, c, hw, hw}, {c, 1, 3, 3});
  if (!g.ok()) return state.SkipWithError("geometry");
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> x(hw * hw * c), y(g->out_size() * c);
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  Tensor w(DataType::kInt8, {c, 1, 3, 3});
  for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>(byte(rng) - 128);
  const QDepthwiseWeights packed = PackQDepthwise(w, nullptr);
  std::vector<int32_t> bias(c, 100);
  std::vector<float> multiplier(c, 0.001f);
  QDepthwiseArgs args;
  args.x = x.data();
  args.x_zero = 3;
  args.bias = bias.data();
  args.multiplier = multiplier.data();
  args.y_zero = 5;
  args.y = y.data();
  tbb::task_arena arena(threads);
  for (auto _ : state) {
    arena.execute([&] { QDepthwiseConv(*g, packed, args, threads); });
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GMACs"] = benchmark::Counter(static_cast<double>(g->out_size() * c * 9),
                                               benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// ShuffleNet (QDQ, groups of 4): stride 1 at 28x28x136, 14x14x272, 7x7x544; stride 2 into them.
BENCHMARK(BM_QDepthwise)
    ->ArgsProduct({{28}, {136}, {1}, {1, 2}})
    ->ArgsProduct({{14}, {272}, {1}, {1, 2}})
    ->ArgsProduct({{7}, {544}, {1}, {1, 2}})
    ->ArgsProduct({{56}, {112}, {2}, {1, 2}})
    ->ArgsProduct({{28}, {272}, {2}, {1, 2}})
    ->ArgsProduct({{14}, {544}, {2}, {1, 2}})
    // MobileNetV2 (the zoo's mobilenetv2-12-int8, qzoo_models.py): 112x112x32, 56x56x144 at
    // stride 1; 112x112x96 at stride 2.
    ->ArgsProduct({{112}, {32}, {1}, {1, 2}})
    ->ArgsProduct({{56}, {144}, {1}, {1, 2}})
    ->ArgsProduct({{112}, {96}, {2}, {1, 2}})
    ->UseRealTime();

}  // namespace
}  // namespace onnxflow

BENCHMARK_MAIN();
