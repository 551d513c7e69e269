// Max, Min, Sum, Mean: one, two and three inputs with broadcasting, every type they take.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/elementwise/register.h"
#include "ops/elementwise/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using testing_util::MakeTensor;

template <typename T>
class VariadicTypedTest : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                      uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(VariadicTypedTest, NumericTypes);

TYPED_TEST(VariadicTypedTest, MaxMinSumOverThreeBroadcastInputs) {
  using T = TypeParam;
  const Tensor a = MakeTensor<T>({2, 2}, {1, 5, 3, 2});
  const Tensor b = MakeTensor<T>({2}, {4, 1});
  const Tensor c = MakeTensor<T>({}, {2});
  struct Case {
    const char* op;
    std::vector<double> want;
  };
  for (const Case& k : {Case{"Max", {4, 5, 4, 2}}, Case{"Min", {1, 1, 2, 1}}, Case{"Sum", {7, 8, 9, 5}}}) {
    OpTest test(k.op, 13);
    test.Input(a).Input(b).Input(c);
    auto out = test.Run(RegisterElementwiseKernels);
    ASSERT_TRUE(out.ok()) << k.op << ": " << out.status().ToString();
    EXPECT_TRUE(TensorsEqual(MakeTensor<T>({2, 2}, k.want), out->at(0).tensor())) << k.op;
  }
}

TEST(VariadicTest, OneInputIsACopy) {
  OpTest test("Max", 13);
  test.Input(MakeTensor<float>({3}, {1, -2, 3}));
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<float>({3}, {1, -2, 3}), out->at(0).tensor()));
}

TEST(VariadicTest, MeanOfFloatTypes) {
  OpTest test("Mean", 13);
  test.Input(MakeTensor<double>({3}, {1, 2, 3}))
      .Input(MakeTensor<double>({3}, {4, 5, 6}))
      .Input(MakeTensor<double>({1}, {3}));
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(MakeTensor<double>({3}, {8.0 / 3, 10.0 / 3, 4}), out->at(0).tensor()));
  OpTest half("Mean", 13);
  half.Input(MakeTensor<Float16>({2}, {1, 2})).Input(MakeTensor<Float16>({2}, {3, 5}));
  auto h = half.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<Float16>({2}, {2, 3.5}), h->at(0).tensor()));
}

TEST(VariadicTest, MaxPropagatesNaNForDouble) {
  OpTest test("Max", 13);
  test.Input(MakeTensor<double>({2}, {NAN, 1})).Input(MakeTensor<double>({2}, {1, NAN}));
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(std::isnan(out->at(0).tensor().data<double>()[0]));
  EXPECT_TRUE(std::isnan(out->at(0).tensor().data<double>()[1]));
}

TEST(VariadicTest, IncompatibleShapesFail) {
  OpTest test("Sum", 13);
  test.Input(MakeTensor<float>({2}, {1, 2})).Input(MakeTensor<float>({3}, {1, 2, 3}));
  EXPECT_TRUE(Refused(test.Run(RegisterElementwiseKernels), StatusCode::kInvalidArgument, "shapes [2] and [3] do not broadcast"));
}

}  // namespace
}  // namespace onnxflow
