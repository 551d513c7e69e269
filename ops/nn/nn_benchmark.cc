// Micro-benchmarks of the CNN-critical nn kernels at ResNet/SqueezeNet sizes:
//   bazel run -c opt //ops/nn:nn_benchmark
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "ops/framework/testing.h"
#include "ops/nn/register.h"

namespace onnxflow {
namespace {

Tensor Input(const Shape& shape) {
  std::vector<float> v(ElementCount(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(i * 0.37f);
  return Tensor::FromVector<float>(shape, v);
}

void BM_MaxPool3x3s2(benchmark::State& state) {
  const Tensor x = Input({1, 64, 112, 112});
  for (auto _ : state) {
    OpTest t("MaxPool", 22);
    t.Input(x).Attr("kernel_shape", std::vector<int64_t>{3, 3}).Attr("strides", std::vector<int64_t>{2, 2})
        .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    auto out = t.Run(RegisterNnKernels);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_MaxPool3x3s2)->Unit(benchmark::kMicrosecond);

void BM_AveragePool3x3s1(benchmark::State& state) {
  const Tensor x = Input({1, 192, 28, 28});
  for (auto _ : state) {
    OpTest t("AveragePool", 22);
    t.Input(x).Attr("kernel_shape", std::vector<int64_t>{3, 3}).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    auto out = t.Run(RegisterNnKernels);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_AveragePool3x3s1)->Unit(benchmark::kMicrosecond);

void BM_Softmax(benchmark::State& state) {
  const Tensor x = Input({64, 1000});
  for (auto _ : state) {
    OpTest t("Softmax", 13);
    t.Input(x);
    auto out = t.Run(RegisterNnKernels);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_Softmax)->Unit(benchmark::kMicrosecond);

void BM_BatchNorm(benchmark::State& state) {
  const Tensor x = Input({1, 64, 112, 112});
  const Tensor p = Input({64});
  std::vector<float> ones(64, 1.0f);
  const Tensor var = Tensor::FromVector<float>({64}, ones);
  for (auto _ : state) {
    OpTest t("BatchNormalization", 15);
    t.Input(x).Input(p).Input(p).Input(p).Input(var);
    auto out = t.Run(RegisterNnKernels);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_BatchNorm)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace onnxflow

BENCHMARK_MAIN();
