#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/text/register.h"

namespace onnxflow {
namespace {

Tensor Strings(Shape shape, std::vector<std::string> v) { return Tensor::FromVector<std::string>(std::move(shape), v); }

Result<std::vector<Value>> Concat(const Tensor& x, const Tensor& y) {
  OpTest t("StringConcat", 20);
  t.Input(x).Input(y);
  return t.Run(RegisterTextKernels);
}

TEST(StringConcat, SameShape) {
  auto out = Concat(Strings({2}, {"ab", ""}), Strings({2}, {"c", "d"}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Strings({2}, {"abc", "d"}), out.value()[0].tensor()));
}

TEST(StringConcat, BroadcastsBothWays) {
  // [2, 1] + [3] -> [2, 3]
  auto out = Concat(Strings({2, 1}, {"a", "b"}), Strings({3}, {"1", "2", "3"}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Strings({2, 3}, {"a1", "a2", "a3", "b1", "b2", "b3"}), out.value()[0].tensor()));
}

TEST(StringConcat, ScalarWithMatrixAndUtf8) {
  auto out = Concat(Strings({}, {"é"}), Strings({2, 2}, {"中", "", "x", "ß"}));
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Strings({2, 2}, {"é中", "é", "éx", "éß"}), out.value()[0].tensor()));
}

TEST(StringConcat, EmptyBroadcast) {
  auto out = Concat(Strings({0, 3}, {}), Strings({1}, {"s"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.value()[0].tensor().shape(), (Shape{0, 3}));
}

TEST(StringConcat, IncompatibleShapesFail) {
  EXPECT_TRUE(Refused(Concat(Strings({2}, {"a", "b"}), Strings({3}, {"a", "b", "c"})), StatusCode::kInvalidArgument, "shapes [2] and [3] do not broadcast"));
}

TEST(StringConcat, NonStringInputFails) {
  EXPECT_TRUE(Refused(Concat(Strings({1}, {"a"}), Tensor::FromVector<float>({1}, {1.0f})), StatusCode::kInvalidArgument, "StringConcat needs string inputs, got string and float32"));
}

}  // namespace
}  // namespace onnxflow
