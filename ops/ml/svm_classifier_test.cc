#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;

// Three classes, one support vector each (1, 2, 3), linear kernel. Pair scores (k = x * v):
//   (0,1): a0 k0 + a1 k1   (0,2): b0 k0 + a2 k2   (1,2): b1 k1 + b2 k2   with a = [1,-1,-1], b = [1,1,-1].
OpTest OneVsOne() {
  OpTest t("SVMClassifier", 1, "ai.onnx.ml");
  t.Attr("classlabels_ints", Ints{10, 20, 30})
      .Attr("vectors_per_class", Ints{1, 1, 1})
      .Attr("support_vectors", Floats{1, 2, 3})
      .Attr("coefficients", Floats{1, -1, -1, 1, 1, -1})
      .Attr("rho", Floats{0, 0, 0})
      .Attr("kernel_type", std::string("LINEAR"))
      .Outputs(2);
  return t;
}

TEST(SVMClassifier, OneVsOneVotes) {
  OpTest t = OneVsOne();
  t.Input(Tensor::FromVector<float>({2, 1}, {1, -1}));
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2}, {30, 10}), out.value()[0].tensor()));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 3}, {-1, -2, -1, 1, 2, 1}), out.value()[1].tensor()));
}

TEST(SVMClassifier, ProbabilitiesSumToOne) {
  OpTest t = OneVsOne();
  t.Attr("prob_a", Floats{-1, -1, -1}).Attr("prob_b", Floats{0, 0, 0});
  t.Input(Tensor::FromVector<double>({1, 1}, {-1}));
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& z = out.value()[1].tensor();
  ASSERT_EQ(z.shape(), (Shape{1, 3}));
  const float* p = z.data<float>();
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.0f, 1e-5);
  EXPECT_GT(p[0], p[1]);  // class 0 wins both of its pairs
  EXPECT_GT(p[1], p[2]);
}

TEST(SVMClassifier, LinearFormBinaryStrings) {
  OpTest t("SVMClassifier", 1, "ai.onnx.ml");
  t.Attr("classlabels_strings", std::vector<std::string>{"neg", "pos"})
      .Attr("coefficients", Floats{1, -1, 0, 1})
      .Attr("rho", Floats{0.5f})
      .Outputs(2);
  t.Input(Tensor::FromVector<int32_t>({2, 2}, {1, 0, 0, 2}));
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<std::string>({2}, {"neg", "pos"}), out.value()[0].tensor()));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 2}, {1.5f, 0.5f, -1.5f, 2.5f}), out.value()[1].tensor()));
}

TEST(SVMClassifier, BadModelsAndInputsFail) {
  OpTest wrong_coefficients = OneVsOne();
  for (auto& a : *wrong_coefficients.node().mutable_attribute()) {
    if (a.name() == "coefficients") a.mutable_floats()->RemoveLast();
  }
  wrong_coefficients.Input(Tensor::FromVector<float>({1, 1}, {1}));
  EXPECT_TRUE(Refused(wrong_coefficients.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "coefficients must be (classes - 1) x vectors = 6, got 5"));
  OpTest wrong_features = OneVsOne();
  wrong_features.Input(Tensor::FromVector<float>({1, 2}, {1, 2}));
  EXPECT_TRUE(Refused(wrong_features.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "X has 2 features, the model expects 1"));
  OpTest no_labels("SVMClassifier", 1, "ai.onnx.ml");
  no_labels.Attr("coefficients", Floats{1}).Attr("rho", Floats{0}).Outputs(2);
  no_labels.Input(Tensor::FromVector<float>({1, 1}, {1}));
  EXPECT_TRUE(Refused(no_labels.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "exactly one of classlabels_ints and classlabels_strings must be set (non-empty)"));
}

}  // namespace
}  // namespace onnxflow
