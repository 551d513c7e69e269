#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;

TEST(LinearRegressor, TwoTargetsWithIntercepts) {
  OpTest t("LinearRegressor", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<int64_t>({2, 2}, {1, 2, 3, 4}))
      .Attr("coefficients", Floats{1, 1, 0.5f, -1})
      .Attr("intercepts", Floats{10, 0})
      .Attr("targets", int64_t{2});
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 2}, {13, -1.5f, 17, -2.5f}), out.value()[0].tensor()));
}

TEST(LinearRegressor, LogisticAndErrors) {
  OpTest t("LinearRegressor", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<float>({2}, {1, 1})).Attr("coefficients", Floats{1, -1}).Attr("post_transform", std::string("LOGISTIC"));
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1}, {0.5f}), out.value()[0].tensor()));
  OpTest wrong_c("LinearRegressor", 1, "ai.onnx.ml");
  wrong_c.Input(Tensor::FromVector<float>({3}, {1, 1, 1})).Attr("coefficients", Floats{1, -1});
  EXPECT_TRUE(Refused(wrong_c.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "X has 3 features, the model 2 coefficients for 1 outputs"));
  OpTest bad_intercepts("LinearRegressor", 1, "ai.onnx.ml");
  bad_intercepts.Input(Tensor::FromVector<float>({2}, {1, 1})).Attr("coefficients", Floats{1, -1}).Attr("intercepts", Floats{1, 2});
  EXPECT_TRUE(Refused(bad_intercepts.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "intercepts has 2 entries for 1 outputs"));
}

TEST(LinearClassifier, MulticlassArgmax) {
  OpTest t("LinearClassifier", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<float>({2, 2}, {1, 0, 0, 1}))
      .Attr("coefficients", Floats{1, 0, 0, 1, -1, -1})
      .Attr("intercepts", Floats{0, 0.5f, 0})
      .Attr("classlabels_strings", std::vector<std::string>{"x", "y", "z"})
      .Outputs(2);
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<std::string>({2}, {"x", "y"}), out.value()[0].tensor()));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 3}, {1, 0.5f, -1, 0, 1.5f, -1}), out.value()[1].tensor()));
}

TEST(LinearClassifier, BinaryOneRowGivesTwoScores) {
  OpTest t("LinearClassifier", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<double>({2, 1}, {2, -3}))
      .Attr("coefficients", Floats{1})
      .Attr("classlabels_ints", Ints{5, 6})
      .Outputs(2);
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2}, {6, 5}), out.value()[0].tensor()));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 2}, {-2, 2, 3, -3}), out.value()[1].tensor()));
}

TEST(LinearClassifier, Errors) {
  OpTest labels("LinearClassifier", 1, "ai.onnx.ml");
  labels.Input(Tensor::FromVector<float>({1}, {1})).Attr("coefficients", Floats{1}).Outputs(2);
  EXPECT_TRUE(Refused(labels.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "exactly one of classlabels_ints and classlabels_strings must be set"));
  OpTest too_many_rows("LinearClassifier", 1, "ai.onnx.ml");
  too_many_rows.Input(Tensor::FromVector<float>({1}, {1})).Attr("coefficients", Floats{1, 2, 3}).Attr("classlabels_ints", Ints{1, 2}).Outputs(2);
  EXPECT_TRUE(Refused(too_many_rows.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "3 scores for 2 labels"));
}

}  // namespace
}  // namespace onnxflow
