#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

template <typename T>
void ExpectBinarized(std::vector<T> in, std::vector<T> expected, float threshold) {
  OpTest t("Binarizer", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<T>({static_cast<int64_t>(in.size())}, in)).Attr("threshold", threshold);
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<T>({static_cast<int64_t>(expected.size())}, expected), out.value()[0].tensor()));
}

TEST(Binarizer, EveryType) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ExpectBinarized<float>({-1.0f, 0.5f, 0.5000001f, 3.0f, nan}, {0, 0, 1, 1, 0}, 0.5f);
  ExpectBinarized<double>({0.5, 0.51, -7}, {0, 1, 0}, 0.5f);
  ExpectBinarized<int64_t>({-3, 0, 1, 2}, {0, 0, 1, 1}, 0.5f);
  ExpectBinarized<int32_t>({-3, 0, 1, 2}, {0, 0, 0, 1}, 1.0f);
}

TEST(Binarizer, DefaultThresholdIsZeroAndShapeKept) {
  OpTest t("Binarizer", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<float>({2, 2}, {-0.0f, 0.0f, 1e-30f, -1e-30f}));
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 2}, {0, 0, 1, 0}), out.value()[0].tensor()));
}

TEST(Binarizer, RejectsOtherTypes) {
  OpTest t("Binarizer", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<int8_t>({1}, {1}));
  EXPECT_TRUE(Refused(t.Run(RegisterMlKernels), StatusCode::kUnimplemented, "type int8 is not supported here"));
}

}  // namespace
}  // namespace onnxflow
