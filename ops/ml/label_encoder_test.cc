#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

using Strings = std::vector<std::string>;
using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

Tensor S(Strings v) { return Tensor::FromVector<std::string>({static_cast<int64_t>(v.size())}, v); }
Tensor I(Ints v) { return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v); }
Tensor F(Floats v) { return Tensor::FromVector<float>({static_cast<int64_t>(v.size())}, v); }

TEST(LabelEncoder, Opset1BothDirections) {
  OpTest to_int("LabelEncoder", 1, "ai.onnx.ml");
  to_int.Input(S({"b", "zz", "a"})).Attr("classes_strings", Strings{"a", "b"}).Attr("default_int64", int64_t{7});
  auto out = to_int.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(I({1, 7, 0}), out.value()[0].tensor()));

  OpTest to_string("LabelEncoder", 1, "ai.onnx.ml");
  to_string.Input(I({1, 5, -1, 0})).Attr("classes_strings", Strings{"a", "b"}).Attr("default_string", std::string("?"));
  out = to_string.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(S({"b", "?", "?", "a"}), out.value()[0].tensor()));
}

TEST(LabelEncoder, Opset2FloatKeysWithNanAndDefaults) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTest t("LabelEncoder", 2, "ai.onnx.ml");
  t.Input(F({1.5f, -nan, 0.0f, 2.0f}))
      .Attr("keys_floats", Floats{1.5f, nan, -0.0f})
      .Attr("values_strings", Strings{"x", "nan", "zero"});
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(S({"x", "nan", "zero", "_Unused"}), out.value()[0].tensor()));

  OpTest u("LabelEncoder", 2, "ai.onnx.ml");
  u.Input(I({3, 4})).Attr("keys_int64s", Ints{3, 3}).Attr("values_floats", Floats{1.0f, 2.0f});
  out = u.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  // The last of a repeated key wins; the float default is -0.0.
  const Tensor& y = out.value()[0].tensor();
  EXPECT_EQ(y.data<float>()[0], 2.0f);
  EXPECT_TRUE(std::signbit(y.data<float>()[1]) && y.data<float>()[1] == 0.0f);
}

TEST(LabelEncoder, Opset4Tensors) {
  OpTest t("LabelEncoder", 4, "ai.onnx.ml");
  t.Input(Tensor::FromVector<int32_t>({2, 2}, {10, 20, 30, 10}))
      .Attr("keys_tensor", Tensor::FromVector<int32_t>({2}, {10, 20}))
      .Attr("values_tensor", Tensor::FromVector<double>({2}, {0.25, 0.5}))
      .Attr("default_tensor", Tensor::FromVector<double>({1}, {9.0}));
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<double>({2, 2}, {0.25, 0.5, 9.0, 0.25}), out.value()[0].tensor()));

  // int16 values without a default_tensor default to -1.
  OpTest u("LabelEncoder", 4, "ai.onnx.ml");
  u.Input(S({"k", "q"})).Attr("keys_strings", Strings{"k"}).Attr("values_tensor", Tensor::FromVector<int16_t>({1}, {5}));
  out = u.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int16_t>({2}, {5, -1}), out.value()[0].tensor()));
}

TEST(LabelEncoder, BadAttributesFailAtLoad) {
  OpTest two_keys("LabelEncoder", 2, "ai.onnx.ml");
  two_keys.Input(S({"a"})).Attr("keys_strings", Strings{"a"}).Attr("keys_int64s", Ints{1}).Attr("values_int64s", Ints{1});
  EXPECT_TRUE(Refused(two_keys.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "exactly one of the keys_* attributes must be set, got 2"));
  OpTest lengths("LabelEncoder", 2, "ai.onnx.ml");
  lengths.Input(S({"a"})).Attr("keys_strings", Strings{"a", "b"}).Attr("values_int64s", Ints{1});
  EXPECT_TRUE(Refused(lengths.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "keys and values must have the same length, got 2 and 1"));
  OpTest wrong_default("LabelEncoder", 4, "ai.onnx.ml");
  wrong_default.Input(S({"a"}))
      .Attr("keys_strings", Strings{"a"})
      .Attr("values_tensor", Tensor::FromVector<int16_t>({1}, {1}))
      .Attr("default_tensor", Tensor::FromVector<float>({1}, {1}));
  EXPECT_TRUE(Refused(wrong_default.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "the default must be one int16, got 1 of float32"));
  OpTest tensor_at_2("LabelEncoder", 2, "ai.onnx.ml");
  tensor_at_2.Input(S({"a"})).Attr("keys_strings", Strings{"a"}).Attr("values_tensor", Tensor::FromVector<int16_t>({1}, {1}));
  EXPECT_TRUE(Refused(tensor_at_2.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "exactly one of the values_* attributes must be set, got 0"));
}

TEST(LabelEncoder, InputTypeMustMatchKeys) {
  OpTest t("LabelEncoder", 2, "ai.onnx.ml");
  t.Input(I({1})).Attr("keys_strings", Strings{"a"}).Attr("values_int64s", Ints{1});
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(Refused(out, StatusCode::kInvalidArgument, "input X is int64, the keys are string"));
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
}

TEST(CategoryMapper, BothDirectionsWithDefaults) {
  OpTest to_int("CategoryMapper", 1, "ai.onnx.ml");
  to_int.Input(Tensor::FromVector<std::string>({2, 2}, {"dog", "cat", "emu", "dog"}))
      .Attr("cats_strings", Strings{"cat", "dog"})
      .Attr("cats_int64s", Ints{10, 20})
      .Attr("default_int64", int64_t{-5});
  auto out = to_int.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2, 2}, {20, 10, -5, 20}), out.value()[0].tensor()));
  OpTest to_string("CategoryMapper", 1, "ai.onnx.ml");
  to_string.Input(I({10, 11})).Attr("cats_strings", Strings{"cat", "dog"}).Attr("cats_int64s", Ints{10, 20});
  out = to_string.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(S({"cat", "_Unused"}), out.value()[0].tensor()));
  OpTest lengths("CategoryMapper", 1, "ai.onnx.ml");
  lengths.Input(I({1})).Attr("cats_strings", Strings{"cat"}).Attr("cats_int64s", Ints{10, 20});
  EXPECT_TRUE(Refused(lengths.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "cats_strings and cats_int64s must have the same length, got 1 and 2"));
  OpTest floats("CategoryMapper", 1, "ai.onnx.ml");
  floats.Input(F({1})).Attr("cats_strings", Strings{"cat"}).Attr("cats_int64s", Ints{10});
  EXPECT_TRUE(Refused(floats.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "X must be string or int64, got float32"));
}

}  // namespace
}  // namespace onnxflow
