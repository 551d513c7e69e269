// Throughput of the elementwise engine on shapes that CNNs and transformers produce:
//   bazel run -c opt //ops/elementwise:elementwise_benchmark
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "ops/activation/register.h"
#include "ops/elementwise/float_simd.h"
#include "ops/elementwise/register.h"
#include "ops/elementwise/test_util.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"
#include "ops/framework/run_state.h"

namespace onnxflow {
namespace {

// One node's kernel, built once, run over and over on the same inputs.
class KernelBench {
 public:
  KernelBench(const std::string& op, int opset, std::vector<Tensor> inputs, int threads)
      : run_(SessionLimits{}, RunOptions{}, threads) {
    (void)RegisterElementwiseKernels(registry_);
    (void)RegisterActivationKernels(registry_);
    node_.set_op_type(op);
    std::vector<DataType> types;
    for (size_t i = 0; i < inputs.size(); ++i) {
      node_.add_input("in" + std::to_string(i));
      types.push_back(inputs[i].dtype());
      values_.emplace_back(inputs[i]);
      slots_.inputs.push_back(static_cast<int>(i));
    }
    node_.add_output("out");
    slots_.outputs.push_back(static_cast<int>(values_.size()));
    values_.emplace_back();
    KernelInfo info(node_, opset, types, std::vector<const Tensor*>(inputs.size(), nullptr), {});
    auto kernel = registry_.Find(kOnnxDomain, op, opset)->factory(info);
    kernel_ = std::move(kernel).value();
  }

  void Run() {
    KernelContext ctx(slots_, values_.data(), &run_, name_);
    if (!kernel_->Compute(ctx).ok()) std::abort();
  }

 private:
  KernelRegistry registry_;
  onnx::NodeProto node_;
  std::vector<Value> values_;
  NodeSlots slots_;
  RunState run_;
  std::string name_ = "bench";
  std::unique_ptr<OpKernel> kernel_;
};

Tensor Floats(Shape shape) {
  const int64_t n = ElementCount(shape);
  const std::vector<float> v = testing_util::RandomFloats(n, -3, 3);
  return Tensor::FromVector<float>(std::move(shape), v);
}

void Report(benchmark::State& state, int64_t elements) { state.SetItemsProcessed(state.iterations() * elements); }

void BM_AddSameShape(benchmark::State& state) {
  KernelBench b("Add", 14, {Floats({1 << 20}), Floats({1 << 20})}, state.range(0));
  for (auto _ : state) b.Run();
  Report(state, 1 << 20);
}
void BM_AddChannelBias(benchmark::State& state) {
  KernelBench b("Add", 14, {Floats({8, 64, 56, 56}), Floats({64, 1, 1})}, state.range(0));
  for (auto _ : state) b.Run();
  Report(state, 8 * 64 * 56 * 56);
}
void BM_AddSmallInnerRun(benchmark::State& state) {
  KernelBench b("Add", 14, {Floats({349525, 3}), Floats({3})}, state.range(0));
  for (auto _ : state) b.Run();
  Report(state, 349525 * 3);
}
void BM_MulScalar(benchmark::State& state) {
  KernelBench b("Mul", 14, {Floats({1 << 20}), Floats({})}, state.range(0));
  for (auto _ : state) b.Run();
  Report(state, 1 << 20);
}
void BM_Unary(benchmark::State& state, const char* op, int opset) {
  KernelBench b(op, opset, {Floats({1 << 20})}, state.range(0));
  for (auto _ : state) b.Run();
  Report(state, 1 << 20);
}

BENCHMARK(BM_AddSameShape)->Arg(1)->Arg(2);
BENCHMARK(BM_AddChannelBias)->Arg(1)->Arg(2);
BENCHMARK(BM_AddSmallInnerRun)->Arg(1);
BENCHMARK(BM_MulScalar)->Arg(1);
BENCHMARK_CAPTURE(BM_Unary, Relu, "Relu", 14)->Arg(1);
BENCHMARK_CAPTURE(BM_Unary, Sigmoid, "Sigmoid", 13)->Arg(1)->Arg(2);
BENCHMARK_CAPTURE(BM_Unary, Gelu, "Gelu", 20)->Arg(1);
BENCHMARK_CAPTURE(BM_Unary, Exp, "Exp", 13)->Arg(1);
BENCHMARK_CAPTURE(BM_Unary, Tanh, "Tanh", 13)->Arg(1);
BENCHMARK_CAPTURE(BM_Unary, Erf, "Erf", 13)->Arg(1);

}  // namespace
}  // namespace onnxflow

namespace onnxflow {
namespace {

// The array function alone on preallocated buffers (no output allocation), for comparison.
void BM_FloatBinaryRaw(benchmark::State& state) {
  const int64_t n = 1 << 20;
  std::vector<float> a = testing_util::RandomFloats(n + 64, -3, 3), b = testing_util::RandomFloats(n + 64, -3, 3);
  std::vector<float> out(n + 64);
  const int shift = static_cast<int>(state.range(0));
  for (auto _ : state) {
    FloatBinary(FloatBinaryOp::kAdd, a.data(), false, b.data() + shift, false, out.data() + 2 * shift, n);
    benchmark::DoNotOptimize(out.data());
  }
  Report(state, n);
}
BENCHMARK(BM_FloatBinaryRaw)->Arg(0)->Arg(5);

}  // namespace
}  // namespace onnxflow

BENCHMARK_MAIN();
