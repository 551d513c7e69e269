// Timing of the pooling fast path at the CNN sizes that matter (SqueezeNet, Inception, ResNet):
//   ./bazelw build -c opt //ops/nn:pool_benchmark && bazel-bin/ops/nn/pool_benchmark [threads [case]]
// Per case: the kernel alone on a hot input (PoolRows into a preallocated output), the whole
// Compute (output allocation included) on a hot input, and the whole Compute on inputs rotated
// through 64 MB so that each run reads its input from beyond L2, as in a network.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"
#include "ops/nn/register.h"
#include "proto/onnx.pb.h"

namespace onnxflow {
namespace {

struct Case {
  const char* name;
  const char* op;
  Shape shape;
  std::vector<int64_t> kernel, strides, pads;
};

double MedianUs(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <typename F>
std::vector<double> Time(int iterations, F&& f) {
  std::vector<double> us;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f(i);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  return us;
}

int Main(int threads, const std::string& only) {
  const Case cases[] = {
      {"squeezenet 3x3/2", "MaxPool", {1, 64, 111, 111}, {3, 3}, {2, 2}, {0, 0, 0, 0}},
      {"squeezenet 3x3/2 b", "MaxPool", {1, 128, 55, 55}, {3, 3}, {2, 2}, {0, 0, 0, 0}},
      {"squeezenet 3x3/2 c", "MaxPool", {1, 256, 27, 27}, {3, 3}, {2, 2}, {0, 0, 0, 0}},
      {"inception 3x3/1 p1", "MaxPool", {1, 192, 27, 27}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"inception 3x3/1 p1 b", "MaxPool", {1, 480, 13, 13}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"resnet 3x3/2 p1", "MaxPool", {1, 64, 112, 112}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
      {"avg 3x3/1 p1", "AveragePool", {1, 192, 28, 28}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"avg 7x7/1", "AveragePool", {1, 1024, 7, 7}, {7, 7}, {1, 1}, {0, 0, 0, 0}},
  };
  KernelRegistry registry;
  if (!RegisterNnKernels(registry).ok()) return 1;
  std::printf("threads %d; microseconds, median of runs\n%-22s %-12s %14s %14s %14s\n", threads, "case", "op",
              "compute hot", "compute cold", "MB/s cold");
  for (const Case& c : cases) {
    if (!only.empty() && std::string(c.name).find(only) == std::string::npos) continue;
    onnx::NodeProto node;
    node.set_op_type(c.op);
    node.set_name("bench");
    node.add_input("x");
    node.add_output("y");
    auto ints = [&](const char* name, const std::vector<int64_t>& v) {
      auto* a = node.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t x : v) a->add_ints(x);
    };
    ints("kernel_shape", c.kernel);
    ints("strides", c.strides);
    ints("pads", c.pads);
    KernelInfo info(node, 13, {DataType::kFloat}, {nullptr}, {});
    auto kernel = registry.Find(kOnnxDomain, c.op, 13)->factory(info);
    if (!kernel.ok()) return 1;
    // Enough copies of the input to cover 64 MB.
    const int64_t bytes = ElementCount(c.shape) * 4;
    const int copies = static_cast<int>(std::max<int64_t>(2, (64 << 20) / bytes));
    std::vector<Value> values;
    for (int i = 0; i < copies; ++i) {
      Tensor x(DataType::kFloat, c.shape);
      float* p = x.mutable_data<float>();
      for (int64_t k = 0; k < x.size(); ++k) p[k] = std::sin(k * 0.37f + i);
      values.emplace_back(std::move(x));
    }
    values.emplace_back();  // the output slot
    const int out_slot = copies;
    RunState run(SessionLimits{}, RunOptions{}, threads);
    const std::string name = "bench";
    auto compute = [&](int input) {
      NodeSlots slots{{input}, {}, {out_slot}};
      KernelContext ctx(slots, values.data(), &run, name);
      if (!(*kernel)->Compute(ctx).ok()) std::abort();
    };
    const int iterations = 200;
    const double hot = MedianUs(Time(iterations, [&](int) { compute(0); }));
    const double cold = MedianUs(Time(iterations, [&](int i) { compute(i % copies); }));
    std::printf("%-22s %-12s %14.1f %14.1f %14.0f\n", c.name, c.op, hot, cold, bytes / cold);
  }
  return 0;
}

}  // namespace
}  // namespace onnxflow

// Arguments: [threads [case name substring]].
int main(int argc, char** argv) {
  return onnxflow::Main(argc > 1 ? std::atoi(argv[1]) : 1, argc > 2 ? argv[2] : "");
}
