// Throughput of Transpose / Concat / Gather / Slice on CNN-sized float tensors.
#include <benchmark/benchmark.h>

#include "ops/framework/testing.h"
#include "ops/tensor/register.h"

namespace onnxflow {
namespace {

Tensor Filled(const Shape& shape) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.mutable_data<float>()[i] = static_cast<float>(i % 1000);
  return t;
}

void RunAndCount(benchmark::State& state, OpTest& test, int64_t bytes) {
  for (auto _ : state) {
    auto r = test.Run(RegisterTensorKernels);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

void BM_TransposeNchwToNhwc(benchmark::State& state) {
  const Tensor x = Filled({1, 64, 112, 112});
  OpTest test("Transpose", 13);
  test.Input(x).Attr("perm", std::vector<int64_t>{0, 2, 3, 1}).Threads(static_cast<int>(state.range(0)));
  RunAndCount(state, test, static_cast<int64_t>(x.nbytes()));
}
BENCHMARK(BM_TransposeNchwToNhwc)->Arg(1)->Arg(2);

void BM_Transpose2D(benchmark::State& state) {
  const Tensor x = Filled({1024, 1000});
  OpTest test("Transpose", 13);
  test.Input(x).Threads(static_cast<int>(state.range(0)));
  RunAndCount(state, test, static_cast<int64_t>(x.nbytes()));
}
BENCHMARK(BM_Transpose2D)->Arg(1)->Arg(2);

// Bytes: a quantized region's edge (136 channels, 28x28) and ShuffleNet's channel shuffle
// channels-last ([784 pixels, 4 groups, 34] -> [784, 34, 4]).
void BM_TransposeBytes(benchmark::State& state) {
  const bool shuffle = state.range(1) == 1;
  Tensor x(DataType::kUint8, shuffle ? Shape{1, 784, 4, 34} : Shape{1, 136, 28, 28});
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i);
  OpTest test("Transpose", 13);
  test.Input(x).Attr("perm", shuffle ? std::vector<int64_t>{0, 1, 3, 2} : state.range(1) == 0 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 1, 2, 3});
  test.Threads(static_cast<int>(state.range(0)));
  RunAndCount(state, test, static_cast<int64_t>(x.nbytes()));
}
BENCHMARK(BM_TransposeBytes)->Args({1, 0})->Args({1, 1})->Args({1, 2});

void BM_TransposeGeneral(benchmark::State& state) {
  const Tensor x = Filled({16, 32, 48, 64});
  OpTest test("Transpose", 13);
  test.Input(x).Attr("perm", std::vector<int64_t>{3, 1, 0, 2}).Threads(static_cast<int>(state.range(0)));
  RunAndCount(state, test, static_cast<int64_t>(x.nbytes()));
}
BENCHMARK(BM_TransposeGeneral)->Arg(1)->Arg(2);

void BM_ConcatChannels(benchmark::State& state) {
  const Tensor a = Filled({1, 128, 56, 56}), b = Filled({1, 128, 56, 56});
  OpTest test("Concat", 13);
  test.Input(a).Input(b).Attr("axis", int64_t{1}).Threads(static_cast<int>(state.range(0)));
  RunAndCount(state, test, static_cast<int64_t>(2 * a.nbytes()));
}
BENCHMARK(BM_ConcatChannels)->Arg(1)->Arg(2);

void BM_GatherRows(benchmark::State& state) {
  const Tensor x = Filled({30000, 256});
  std::vector<int64_t> idx(4096);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>((i * 7919) % 30000);
  OpTest test("Gather", 13);
  test.Input(x).Input(Tensor::FromVector<int64_t>({4096}, idx)).Threads(static_cast<int>(state.range(0)));
  RunAndCount(state, test, 4096 * 256 * 4);
}
BENCHMARK(BM_GatherRows)->Arg(1)->Arg(2);

}  // namespace
}  // namespace onnxflow

BENCHMARK_MAIN();
