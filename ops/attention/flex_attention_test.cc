#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/session.h"
#include "ops/attention/register.h"
#include "ops/framework/numeric.h"
#include "ops/framework/subgraph.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

// softmax(q.k * scale * score_mul) * prob_mul . v, on 4D data; query head h reads kv head h / (hq / hkv).
std::vector<float> Reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                             int64_t b, int64_t hq, int64_t hkv, int64_t l, int64_t s, int64_t d, int64_t dv,
                             float scale, float score_mul = 1.0f, float prob_mul = 1.0f) {
  std::vector<float> y(b * hq * l * dv, 0.0f);
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kh = h / (hq / hkv);
      for (int64_t i = 0; i < l; ++i) {
        std::vector<double> sc(s);
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < s; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d; ++e) dot += q[((bi * hq + h) * l + i) * d + e] * k[((bi * hkv + kh) * s + j) * d + e];
          sc[j] = dot * scale * score_mul;
          mx = std::max(mx, sc[j]);
        }
        for (double& x : sc) sum += (x = std::exp(x - mx));
        for (int64_t j = 0; j < s; ++j)
          for (int64_t e = 0; e < dv; ++e)
            y[((bi * hq + h) * l + i) * dv + e] += static_cast<float>(prob_mul * sc[j] / sum * v[((bi * hkv + kh) * s + j) * dv + e]);
      }
    }
  return y;
}

TEST(FlexAttention, GqaMatchesReference) {
  const int64_t b = 2, hq = 4, hkv = 2, l = 3, s = 5, d = 4, dv = 6;
  const auto q = Random(b * hq * l * d, 1), k = Random(b * hkv * s * d, 2), v = Random(b * hkv * s * dv, 3);
  OpTest test("FlexAttention", 1, "ai.onnx.preview");
  test.Input(F({b, hq, l, d}, q)).Input(F({b, hkv, s, d}, k)).Input(F({b, hkv, s, dv}, v));
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({b, hq, l, dv}, Reference(q, k, v, b, hq, hkv, l, s, d, dv, 0.5f)), (*out)[0].tensor(),
                          1e-5, 1e-6));
}

TEST(FlexAttention, DoubleAndScale) {
  const auto q = Random(8, 4), k = Random(12, 5), v = Random(12, 6);
  const auto want = Reference(q, k, v, 1, 1, 1, 2, 3, 4, 4, 0.1f);
  auto d = [](const std::vector<float>& x) { return std::vector<double>(x.begin(), x.end()); };
  OpTest test("FlexAttention", 1, "ai.onnx.preview");
  test.Input(Tensor::FromVector<double>({1, 1, 2, 4}, d(q)))
      .Input(Tensor::FromVector<double>({1, 1, 3, 4}, d(k)))
      .Input(Tensor::FromVector<double>({1, 1, 3, 4}, d(v)))
      .Attr("scale", 0.1f);
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1, 1, 2, 4}, d(want)), (*out)[0].tensor(), 1e-5, 1e-6));
}

TEST(FlexAttention, Float16) {
  const auto q = Random(8, 7), k = Random(12, 8), v = Random(12, 9);
  auto half = [](const std::vector<float>& x) {
    std::vector<Float16> h;
    for (float f : x) h.push_back(Float16{FloatToHalf(f)});
    return h;
  };
  OpTest test("FlexAttention", 1, "ai.onnx.preview");
  test.Input(Tensor::FromVector<Float16>({1, 1, 2, 4}, half(q)))
      .Input(Tensor::FromVector<Float16>({1, 1, 3, 4}, half(k)))
      .Input(Tensor::FromVector<Float16>({1, 1, 3, 4}, half(v)));
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<Float16>({1, 1, 2, 4}, half(Reference(q, k, v, 1, 1, 1, 2, 3, 4, 4, 0.5f))),
                          (*out)[0].tensor(), 5e-3, 5e-3));
}

TEST(FlexAttention, BadShapesAreErrors) {
  const auto x = Random(64, 10);
  OpTest rank3("FlexAttention", 1, "ai.onnx.preview");
  rank3.Input(F({1, 2, 4}, x)).Input(F({1, 2, 4}, x)).Input(F({1, 2, 4}, x));
  EXPECT_EQ(StatusCode::kInvalidArgument, rank3.Run(RegisterAttentionKernels).status().code());
  OpTest heads("FlexAttention", 1, "ai.onnx.preview");
  heads.Input(F({1, 3, 1, 4}, x)).Input(F({1, 2, 1, 4}, x)).Input(F({1, 2, 1, 4}, x));
  EXPECT_EQ(StatusCode::kInvalidArgument, heads.Run(RegisterAttentionKernels).status().code());
  // Empty Q and K with huge sequence lengths: the score tensor would pass the tensor limit.
  OpTest huge("FlexAttention", 1, "ai.onnx.preview");
  huge.Input(F({1, 1, int64_t{1} << 30, 0}, {})).Input(F({1, 1, int64_t{1} << 30, 0}, {}));
  huge.Input(F({1, 1, int64_t{1} << 30, 0}, {}));
  EXPECT_EQ(StatusCode::kResourceExhausted, huge.Run(RegisterAttentionKernels).status().code());
}

// A stand-in for the scheduler's subgraph: adds (or multiplies by) a constant.
class ConstantOpGraph : public Subgraph {
 public:
  ConstantOpGraph(float add, float mul) : add_(add), mul_(mul) {}
  const std::vector<std::string>& input_names() const override { return in_; }
  const std::vector<std::string>& output_names() const override { return out_; }
  const std::vector<ValueInfo>& output_infos() const override { return infos_; }
  Result<std::unique_ptr<SubgraphFrame>> NewFrame(KernelContext&) const override {
    return std::unique_ptr<SubgraphFrame>(new Frame(add_, mul_));
  }

 private:
  class Frame : public SubgraphFrame {
   public:
    Frame(float add, float mul) : add_(add), mul_(mul) {}
    Status Run(std::vector<Value>& inputs, std::vector<Value>* outputs) override {
      if (inputs.size() != 1 || inputs[0].tensor().dtype() != DataType::kFloat) return Internal("unexpected input");
      Tensor t = inputs[0].tensor().Clone();
      for (int64_t i = 0; i < t.size(); ++i) t.mutable_data<float>()[i] = t.data<float>()[i] * mul_ + add_;
      outputs->push_back(Value(std::move(t)));
      return Status::Ok();
    }

   private:
    float add_, mul_;
  };
  float add_, mul_;
  std::vector<std::string> in_ = {"x"}, out_ = {"y"};
  std::vector<ValueInfo> infos_ = std::vector<ValueInfo>(1);
};

TEST(FlexAttention, ScoreAndProbModifiersRunTheirGraphs) {
  const auto q = Random(8, 11), k = Random(12, 12), v = Random(12, 13);
  ConstantOpGraph score_mod(0.0f, 3.0f), prob_mod(0.0f, 2.0f);
  onnx::NodeProto node;
  node.set_op_type("FlexAttention");
  node.set_domain("ai.onnx.preview");
  for (const char* n : {"q", "k", "v"}) node.add_input(n);
  node.add_output("y");
  for (const char* n : {"score_mod", "prob_mod"}) {
    auto* a = node.add_attribute();
    a->set_name(n);
    a->set_type(onnx::AttributeProto::GRAPH);
  }
  KernelRegistry registry;
  ASSERT_TRUE(RegisterAttentionKernels(registry).ok());
  const KernelDef* def = registry.Find("ai.onnx.preview", "FlexAttention", 1);
  ASSERT_NE(nullptr, def);
  KernelInfo info(node, 1, {DataType::kFloat, DataType::kFloat, DataType::kFloat}, {nullptr, nullptr, nullptr},
                  {{"score_mod", &score_mod}, {"prob_mod", &prob_mod}});
  auto kernel = def->factory(info);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();

  std::vector<Value> values = {F({1, 1, 2, 4}, q), F({1, 1, 3, 4}, k), F({1, 1, 3, 4}, v), Value()};
  NodeSlots slots;
  slots.inputs = {0, 1, 2};
  slots.outputs = {3};
  RunState run(SessionLimits{}, RunOptions{}, 1);
  const std::string name = "flex";
  KernelContext ctx(slots, values.data(), &run, name);
  ASSERT_TRUE((*kernel)->Compute(ctx).ok());
  EXPECT_TRUE(TensorsNear(F({1, 1, 2, 4}, Reference(q, k, v, 1, 1, 1, 2, 3, 4, 4, 0.5f, 3.0f, 2.0f)),
                          values[3].tensor(), 1e-5, 1e-6));

  // A graph attribute the runtime did not prepare is refused at load.
  KernelInfo unprepared(node, 1, {}, {}, {});
  EXPECT_EQ(StatusCode::kUnimplemented, def->factory(unprepared).status().code());
}

}  // namespace
}  // namespace onnxflow
