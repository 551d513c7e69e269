#include <cmath>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

using Floats = std::vector<float>;

Result<std::vector<Value>> Svm(const std::string& kernel, Floats params, int64_t one_class, const Tensor& x) {
  OpTest t("SVMRegressor", 1, "ai.onnx.ml");
  t.Input(x)
      .Attr("kernel_type", kernel)
      .Attr("kernel_params", params)
      .Attr("n_supports", int64_t{2})
      .Attr("support_vectors", Floats{1, 0, 0, 1})
      .Attr("coefficients", Floats{2, -1})
      .Attr("rho", Floats{0.5f})
      .Attr("one_class", one_class);
  return t.Run(RegisterMlKernels);
}

TEST(SVMRegressor, Kernels) {
  const Tensor x = Tensor::FromVector<float>({2, 2}, {1, 2, -1, 0});
  // dot products with the support vectors: row 0 -> (1, 2), row 1 -> (-1, 0)
  auto out = Svm("LINEAR", {0, 0, 0}, 0, x);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 1}, {2 * 1 - 2 + 0.5f, -2 + 0.5f}), out.value()[0].tensor()));
  out = Svm("POLY", {0.5f, 1, 2}, 0, x);
  ASSERT_TRUE(out.ok());
  auto poly = [](double d) { return (0.5 * d + 1) * (0.5 * d + 1); };
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 1}, {static_cast<float>(2 * poly(1) - poly(2) + 0.5),
                                                              static_cast<float>(2 * poly(-1) - poly(0) + 0.5)}),
                          out.value()[0].tensor()));
  out = Svm("RBF", {0.5f, 0, 0}, 0, x);
  ASSERT_TRUE(out.ok());
  // |row0 - sv0|^2 = 4, |row0 - sv1|^2 = 2; |row1 - sv0|^2 = 4, |row1 - sv1|^2 = 2
  const float v = static_cast<float>(2 * std::exp(-2.0) - std::exp(-1.0) + 0.5);
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 1}, {v, v}), out.value()[0].tensor()));
  out = Svm("SIGMOID", {1, 0, 0}, 1, x);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 1}, {1, -1}), out.value()[0].tensor()));
}

TEST(SVMRegressor, LinearFormWithoutSupportVectors) {
  OpTest t("SVMRegressor", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<int64_t>({3}, {1, 2, 3})).Attr("coefficients", Floats{1, 1, -1}).Attr("rho", Floats{0.25f});
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1}, {0.25f}), out.value()[0].tensor()));
}

TEST(SVMRegressor, Errors) {
  EXPECT_TRUE(Refused(Svm("CUBIC", {0, 0, 0}, 0, Tensor::FromVector<float>({1, 2}, {1, 2})), StatusCode::kInvalidArgument, "kernel_type must be LINEAR, POLY, RBF or SIGMOID, got 'CUBIC'"));
  EXPECT_TRUE(Refused(Svm("LINEAR", {0, 0, 0}, 0, Tensor::FromVector<float>({1, 3}, {1, 2, 3})), StatusCode::kInvalidArgument, "X has 3 features, the model expects 2"));  // wrong C
  EXPECT_TRUE(Refused(Svm("LINEAR", {0, 0}, 0, Tensor::FromVector<float>({1, 2}, {1, 2})), StatusCode::kInvalidArgument, "kernel_params must hold gamma, coef0 and degree"));       // 2 params
}

}  // namespace
}  // namespace onnxflow
