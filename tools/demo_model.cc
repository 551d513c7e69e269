#include "tools/demo_model.h"

#include <cmath>
#include <vector>

#include "tools/model_builder.h"

namespace onnxflow::tools {
namespace {

// A fixed linear congruential sequence scaled to He initialization for the fan-in.
Tensor Weights(const Shape& shape, int fan_in, uint32_t seed) {
  Tensor w(DataType::kFloat, shape);
  uint32_t state = seed;
  const float scale = std::sqrt(2.0f / static_cast<float>(fan_in));
  for (int64_t i = 0; i < w.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    w.mutable_data<float>()[i] = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 2.0f * scale;
  }
  return w;
}

Tensor Filled(const Shape& shape, float value) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.mutable_data<float>()[i] = value;
  return t;
}

}  // namespace

std::string DemoModelBytes() {
  ModelBuilder m(17);
  m.Input("image", DataType::kFloat, {1, 3, 32, 32});
  m.Output("probabilities", DataType::kFloat, {1, 10});
  m.Initializer("conv1.w", Weights({16, 3, 3, 3}, 27, 1));
  m.Initializer("conv1.b", Weights({16}, 16, 2));
  m.Initializer("conv2.w", Weights({32, 16, 3, 3}, 144, 3));
  m.Initializer("bn.scale", Filled({32}, 1.0f));
  m.Initializer("bn.bias", Weights({32}, 32, 4));
  m.Initializer("bn.mean", Weights({32}, 64, 5));
  m.Initializer("bn.var", Filled({32}, 0.9f));
  m.Initializer("fc.w", Weights({32, 10}, 32, 6));
  m.Initializer("fc.b", Weights({10}, 10, 7));

  SetAttr(m.Node("Conv", {"image", "conv1.w", "conv1.b"}, {"conv1"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.Node("Relu", {"conv1"}, {"relu1"});
  auto& pool = m.Node("MaxPool", {"relu1"}, {"pool1"});
  SetAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
  SetAttr(m.Node("Conv", {"pool1", "conv2.w"}, {"conv2"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.Node("BatchNormalization", {"conv2", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"bn"});
  m.Node("Relu", {"bn"}, {"relu2"});
  m.Node("GlobalAveragePool", {"relu2"}, {"gap"});
  m.Node("Flatten", {"gap"}, {"flat"});
  m.Node("Gemm", {"flat", "fc.w", "fc.b"}, {"logits"});
  m.Node("Softmax", {"logits"}, {"probabilities"});
  m.proto().mutable_graph()->set_name("demo_cnn");
  return m.Serialize();
}

}  // namespace onnxflow::tools
