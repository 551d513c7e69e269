// Load-time passes (constant folding, BatchNormalization folding, activation fusion, dead-node
// removal) must not change what a model computes.
#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/demo_model.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

void ExpectSameWithAndWithoutPasses(const std::function<Result<Session>(const SessionOptions&)>& load,
                                    const std::vector<NamedValue>& inputs, double rtol) {
  SessionOptions plain, optimized;
  plain.optimize = false;
  auto a = load(plain);
  auto b = load(optimized);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << " " << b.status().ToString();
  auto out_a = a->Run(inputs);
  auto out_b = b->Run(inputs);
  ASSERT_TRUE(out_a.ok() && out_b.ok()) << out_a.status().ToString() << " " << out_b.status().ToString();
  ASSERT_EQ(out_a->size(), out_b->size());
  for (size_t i = 0; i < out_a->size(); ++i) {
    const Comparison c = CompareValues((*out_a)[i].value, (*out_b)[i].value, rtol, 1e-6);
    EXPECT_TRUE(c.match) << (*out_a)[i].name << ": " << c.mismatch;
  }
}

TEST(Passes, DemoConvBatchNormReluUnchanged) {
  auto input = FillTensor(DataType::kFloat, {1, 3, 32, 32});
  ASSERT_TRUE(input.ok());
  ExpectSameWithAndWithoutPasses(
      [](const SessionOptions& o) { return Session::LoadFromBytes(tools::DemoModelBytes(), o); },
      {{"image", *input}}, 1e-4);
}

TEST(Passes, EveryFusedActivationUnchanged) {
  // Conv -> activation for each activation the fusion knows, plus Gemm/MatMul producers.
  const std::vector<std::string> activations = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "Clip"};
  for (const auto& act : activations) {
    tools::ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1, 2, 5, 5});
    m.Input("v", DataType::kFloat, {3, 4});
    Tensor w(DataType::kFloat, {3, 2, 3, 3});
    for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<float>()[i] = static_cast<float>((i * 7) % 11) / 5.0f - 1.0f;
    m.Initializer("w", w);
    m.Initializer("lo", Tensor::Scalar<float>(-0.25f));
    m.Initializer("hi", Tensor::Scalar<float>(0.5f));
    m.Initializer("g", Tensor::FromVector<float>({4, 2}, {1, -1, 0.5f, 2, -2, 0.25f, 3, -0.5f}));
    m.Node("Conv", {"x", "w"}, {"c"});
    auto inputs = act == "Clip" ? std::vector<std::string>{"c", "lo", "hi"} : std::vector<std::string>{"c"};
    auto& a = m.Node(act, inputs, {"y"});
    if (act == "LeakyRelu") tools::SetAttr(a, "alpha", 0.3f);
    m.Node("MatMul", {"v", "g"}, {"mm"});
    m.Node(act == "Clip" ? "Relu" : act, {"mm"}, {"z"});
    m.Output("y", DataType::kFloat, {1, 3, 3, 3});
    m.Output("z", DataType::kFloat, {3, 2});
    const std::string bytes = m.Serialize();
    auto x = FillTensor(DataType::kFloat, {1, 2, 5, 5});
    auto v = FillTensor(DataType::kFloat, {3, 4});
    SCOPED_TRACE(act);
    ExpectSameWithAndWithoutPasses([&](const SessionOptions& o) { return Session::LoadFromBytes(bytes, o); },
                                   {{"x", *x}, {"v", *v}}, 1e-5);
  }
}

TEST(Passes, WholeNetworksUnchanged) {
  const char* data = std::getenv("ONNXFLOW_TEST_DATA");
  ASSERT_NE(data, nullptr) << "ONNXFLOW_TEST_DATA is not set";
  for (const char* name : {"real_squeezenet", "real_shufflenet", "real_inception_v1", "light_squeezenet"}) {
    const std::string folder = std::string(data) + "/models/" + name;
    auto probe = Session::Load(folder + "/model.onnx");
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    std::vector<NamedValue> inputs;
    for (size_t i = 0; i < probe->inputs().size(); ++i) {
      auto v = ReadValueFile(folder + "/test_data_set_0/input_" + std::to_string(i) + ".pb", &probe->inputs()[i]);
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      inputs.push_back({probe->inputs()[i].name, *v});
    }
    SCOPED_TRACE(name);
    ExpectSameWithAndWithoutPasses([&](const SessionOptions& o) { return Session::Load(folder + "/model.onnx", o); },
                                   inputs, 1e-4);
  }
}

}  // namespace
}  // namespace onnxflow
