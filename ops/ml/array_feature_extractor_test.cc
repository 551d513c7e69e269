#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

Result<std::vector<Value>> Extract(const Tensor& x, const Tensor& y) {
  OpTest t("ArrayFeatureExtractor", 1, "ai.onnx.ml");
  t.Input(x).Input(y);
  return t.Run(RegisterMlKernels);
}

Tensor Indices(Shape shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(std::move(shape), v); }

TEST(ArrayFeatureExtractor, SelectsAlongLastAxis) {
  auto out = Extract(Tensor::FromVector<int32_t>({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
                     Indices({2, 1}, {2, 0}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 2, 2}, {2, 0, 5, 3, 8, 6, 11, 9}), out.value()[0].tensor()));
}

TEST(ArrayFeatureExtractor, VectorInputGivesOneRowAndRepeatsAllowed) {
  auto out = Extract(Tensor::FromVector<std::string>({3}, {"a", "b", "c"}), Indices({3}, {1, 1, 2}));
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<std::string>({1, 3}, {"b", "b", "c"}), out.value()[0].tensor()));
  out = Extract(Tensor::FromVector<double>({2}, {1.5, 2.5}), Indices({}, {1}));
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<double>({1, 1}, {2.5}), out.value()[0].tensor()));
  out = Extract(Tensor::FromVector<int64_t>({2, 2}, {1, 2, 3, 4}), Indices({1}, {0}));
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2, 1}, {1, 3}), out.value()[0].tensor()));
}

TEST(ArrayFeatureExtractor, OutOfRangeIndexFails) {
  auto out = Extract(Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4}), Indices({1}, {2}));
  ASSERT_TRUE(Refused(out, StatusCode::kOutOfRange, "index Y[0] = 2 is outside [0, 2) for X of shape [2,2]"));
  EXPECT_EQ(out.status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(Refused(Extract(Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4}), Indices({1}, {-1})), StatusCode::kOutOfRange, "index Y[0] = -1 is outside [0, 2) for X of shape [2,2]"));
  EXPECT_TRUE(Refused(Extract(Tensor::FromVector<float>({2}, {1, 2}), Tensor::FromVector<int32_t>({1}, {0})), StatusCode::kInvalidArgument, "indices Y must be int64, got int32"));
  EXPECT_TRUE(Refused(Extract(Tensor::FromVector<float>({}, {1}), Indices({1}, {0})), StatusCode::kInvalidArgument, "X must have rank >= 1, got a scalar"));
}

}  // namespace
}  // namespace onnxflow
