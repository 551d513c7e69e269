// Normalizer, Scaler, Imputer, OneHotEncoder and FeatureVectorizer.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;

Result<std::vector<Value>> Normalize(const std::string& norm, const Tensor& x) {
  OpTest t("Normalizer", 1, "ai.onnx.ml");
  t.Input(x).Attr("norm", norm);
  return t.Run(RegisterMlKernels);
}

TEST(Normalizer, ThreeNormsRowWiseAndZeroRows) {
  const Tensor x = Tensor::FromVector<float>({3, 2}, {3, -4, 0, 0, -1, -2});
  auto out = Normalize("MAX", x);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3, 2}, {1, -4.f / 3, 0, 0, 1, 2}), out.value()[0].tensor()));
  out = Normalize("L1", x);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3, 2}, {3.f / 7, -4.f / 7, 0, 0, -1.f / 3, -2.f / 3}), out.value()[0].tensor()));
  out = Normalize("L2", Tensor::FromVector<int64_t>({2}, {3, -4}));
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2}, {0.6f, -0.8f}), out.value()[0].tensor()));
  EXPECT_TRUE(Refused(Normalize("L3", x), StatusCode::kInvalidArgument, "norm must be MAX, L1 or L2, got 'L3'"));
  EXPECT_TRUE(Refused(Normalize("L2", Tensor::FromVector<float>({1, 1, 1}, {1})), StatusCode::kInvalidArgument, "X must be [C] or [N, C], got [1,1,1]"));
}

TEST(Scaler, PerFeatureAndShared) {
  OpTest t("Scaler", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<double>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .Attr("offset", Floats{1, 2, 3})
      .Attr("scale", Floats{2, 0.5f, -1});
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 3}, {0, 0, 0, 6, 1.5f, -3}), out.value()[0].tensor()));
  OpTest shared("Scaler", 1, "ai.onnx.ml");
  shared.Input(Tensor::FromVector<int32_t>({3}, {1, 2, 3})).Attr("offset", Floats{1}).Attr("scale", Floats{3});
  out = shared.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3}, {0, 3, 6}), out.value()[0].tensor()));
  // float32 takes the Highway path: per-feature rows and the shared form.
  OpTest f32("Scaler", 1, "ai.onnx.ml");
  f32.Input(Tensor::FromVector<float>({3, 2}, {1, 2, 3, 4, 5, 6})).Attr("offset", Floats{1, -1}).Attr("scale", Floats{0.5f, 2});
  out = f32.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({3, 2}, {0, 6, 1, 10, 2, 14}), out.value()[0].tensor()));
  OpTest f32_shared("Scaler", 1, "ai.onnx.ml");
  f32_shared.Input(Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4})).Attr("offset", Floats{1}).Attr("scale", Floats{-1});
  out = f32_shared.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 2}, {0, -1, -2, -3}), out.value()[0].tensor()));
  OpTest mismatch("Scaler", 1, "ai.onnx.ml");
  mismatch.Input(Tensor::FromVector<float>({1, 2}, {1, 2})).Attr("offset", Floats{1, 2, 3}).Attr("scale", Floats{1, 2, 3});
  EXPECT_TRUE(Refused(mismatch.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "offset/scale have 3 entries but X has 2 features (shape [1,2])"));
  OpTest lengths("Scaler", 1, "ai.onnx.ml");
  lengths.Input(Tensor::FromVector<float>({1, 2}, {1, 2})).Attr("offset", Floats{1, 2}).Attr("scale", Floats{1});
  EXPECT_TRUE(Refused(lengths.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "offset and scale must have the same length, got 2 and 1"));
}

TEST(Imputer, NanAndIntegerReplacement) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTest t("Imputer", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<float>({2, 2}, {nan, 1, 2, nan}))
      .Attr("imputed_value_floats", Floats{7, 8})
      .Attr("replaced_value_float", nan);
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 2}, {7, 1, 2, 8}), out.value()[0].tensor()));
  OpTest ints("Imputer", 1, "ai.onnx.ml");
  ints.Input(Tensor::FromVector<int32_t>({3}, {-1, 5, -1})).Attr("imputed_value_int64s", Ints{0}).Attr("replaced_value_int64", int64_t{-1});
  out = ints.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({3}, {0, 5, 0}), out.value()[0].tensor()));
  OpTest wrong_kind("Imputer", 1, "ai.onnx.ml");
  wrong_kind.Input(Tensor::FromVector<int64_t>({1}, {0})).Attr("imputed_value_floats", Floats{1});
  EXPECT_TRUE(Refused(wrong_kind.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "X is int64 but only imputed_value_floats is set"));
  OpTest both("Imputer", 1, "ai.onnx.ml");
  both.Input(Tensor::FromVector<float>({1}, {0})).Attr("imputed_value_floats", Floats{1}).Attr("imputed_value_int64s", Ints{1});
  EXPECT_TRUE(Refused(both.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "exactly one of imputed_value_floats and imputed_value_int64s must be set (non-empty)"));
}

TEST(OneHotEncoder, IntsStringsAndUnknowns) {
  OpTest t("OneHotEncoder", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<double>({2}, {4.7, 9})).Attr("cats_int64s", Ints{1, 4, 7});
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 3}, {0, 1, 0, 0, 0, 0}), out.value()[0].tensor()));
  OpTest s("OneHotEncoder", 1, "ai.onnx.ml");
  s.Input(Tensor::FromVector<std::string>({1, 2}, {"b", "a"})).Attr("cats_strings", std::vector<std::string>{"a", "b"});
  out = s.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 2, 2}, {0, 1, 1, 0}), out.value()[0].tensor()));
  OpTest strict("OneHotEncoder", 1, "ai.onnx.ml");
  strict.Input(Tensor::FromVector<int64_t>({1}, {3})).Attr("cats_int64s", Ints{1}).Attr("zeros", int64_t{0});
  EXPECT_TRUE(Refused(strict.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "X[0] is not one of the categories (zeros = 0)"));
  OpTest mismatch("OneHotEncoder", 1, "ai.onnx.ml");
  mismatch.Input(Tensor::FromVector<int64_t>({1}, {3})).Attr("cats_strings", std::vector<std::string>{"a"});
  EXPECT_TRUE(Refused(mismatch.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "X is int64 but the categories are strings"));
}

TEST(FeatureVectorizer, CutsPadsAndConcatenates) {
  OpTest t("FeatureVectorizer", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .Input(Tensor::FromVector<double>({2, 1}, {0.5, 1.5}))
      .Attr("inputdimensions", Ints{2, 3});
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 5}, {1, 2, 0.5f, 0, 0, 4, 5, 1.5f, 0, 0}), out.value()[0].tensor()));
  OpTest rows("FeatureVectorizer", 1, "ai.onnx.ml");
  rows.Input(Tensor::FromVector<float>({2, 1}, {1, 2})).Input(Tensor::FromVector<float>({3, 1}, {1, 2, 3})).Attr("inputdimensions", Ints{1, 1});
  EXPECT_TRUE(Refused(rows.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "input 1 has 3 rows, input 0 has 2"));
  OpTest dims("FeatureVectorizer", 1, "ai.onnx.ml");
  dims.Input(Tensor::FromVector<float>({1}, {1})).Attr("inputdimensions", Ints{1, 1});
  EXPECT_TRUE(Refused(dims.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "inputdimensions has 2 entries for 1 inputs"));
}

}  // namespace
}  // namespace onnxflow
