// Comparisons, logical ops, bitwise ops and Where.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ops/elementwise/register.h"
#include "ops/elementwise/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using testing_util::MakeTensor;

Tensor Bools(Shape shape, std::vector<bool> v) {
  Tensor t(DataType::kBool, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<bool>()[i] = v[i];
  return t;
}

Result<Tensor> Binary(const char* op, int opset, const Tensor& a, const Tensor& b) {
  OpTest test(op, opset);
  test.Input(a).Input(b);
  auto out = test.Run(RegisterElementwiseKernels);
  if (!out.ok()) return out.status();
  return out->at(0).tensor();
}

template <typename T>
class CompareTypedTest : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                      uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(CompareTypedTest, NumericTypes);

TYPED_TEST(CompareTypedTest, AllComparisonsWithBroadcast) {
  using T = TypeParam;
  const Tensor a = MakeTensor<T>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = MakeTensor<T>({3}, {2, 2, 7});
  struct Case {
    const char* op;
    std::vector<bool> want;
  };
  for (const Case& c : {Case{"Equal", {false, true, false, false, false, false}},
                        Case{"Greater", {false, false, false, true, true, false}},
                        Case{"Less", {true, false, true, false, false, true}},
                        Case{"GreaterOrEqual", {false, true, false, true, true, false}},
                        Case{"LessOrEqual", {true, true, true, false, false, true}}}) {
    auto y = Binary(c.op, 19, a, b);
    ASSERT_TRUE(y.ok()) << c.op << ": " << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(Bools({2, 3}, c.want), *y)) << c.op;
  }
}

TEST(CompareTest, EqualStringsBoolsAndNaN) {
  auto s = Binary("Equal", 19, Tensor::FromVector<std::string>({3}, {"a", "bc", "d"}),
                  Tensor::FromVector<std::string>({1}, {"bc"}));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(TensorsEqual(Bools({3}, {false, true, false}), *s));
  auto b = Binary("Equal", 19, Bools({2}, {true, false}), Bools({2}, {true, true}));
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(TensorsEqual(Bools({2}, {true, false}), *b));
  auto n = Binary("Equal", 19, MakeTensor<float>({1}, {NAN}), MakeTensor<float>({1}, {NAN}));
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(TensorsEqual(Bools({1}, {false}), *n));
  EXPECT_FALSE(
      Binary("Greater", 13, Tensor::FromVector<std::string>({1}, {"a"}), Tensor::FromVector<std::string>({1}, {"b"}))
          .ok());
}

TEST(LogicalTest, AndOrXorNot) {
  const Tensor a = Bools({2, 2}, {true, true, false, false});
  const Tensor b = Bools({2}, {true, false});
  auto y_and = Binary("And", 7, a, b);
  auto y_or = Binary("Or", 7, a, b);
  auto y_xor = Binary("Xor", 7, a, b);
  ASSERT_TRUE(y_and.ok() && y_or.ok() && y_xor.ok());
  EXPECT_TRUE(TensorsEqual(Bools({2, 2}, {true, false, false, false}), *y_and));
  EXPECT_TRUE(TensorsEqual(Bools({2, 2}, {true, true, true, false}), *y_or));
  EXPECT_TRUE(TensorsEqual(Bools({2, 2}, {false, true, true, false}), *y_xor));
  OpTest not_test("Not", 1);
  not_test.Input(a);
  auto y_not = not_test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(y_not.ok());
  EXPECT_TRUE(TensorsEqual(Bools({2, 2}, {false, false, true, true}), y_not->at(0).tensor()));
  EXPECT_TRUE(Refused(Binary("And", 7, MakeTensor<int32_t>({1}, {1}), MakeTensor<int32_t>({1}, {1})), StatusCode::kUnimplemented, "And does not take int32 (input 0)"));
}

template <typename T>
class BitwiseTypedTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(BitwiseTypedTest, IntTypes);

TYPED_TEST(BitwiseTypedTest, AndOrXorNot) {
  using T = TypeParam;
  const Tensor a = MakeTensor<T>({3}, {12, 10, 7});
  const Tensor b = MakeTensor<T>({}, {6});
  auto y_and = Binary("BitwiseAnd", 18, a, b);
  auto y_or = Binary("BitwiseOr", 18, a, b);
  auto y_xor = Binary("BitwiseXor", 18, a, b);
  ASSERT_TRUE(y_and.ok() && y_or.ok() && y_xor.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({3}, {4, 2, 6}), *y_and));
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({3}, {14, 14, 7}), *y_or));
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({3}, {10, 12, 1}), *y_xor));
  OpTest not_test("BitwiseNot", 18);
  not_test.Input(a);
  auto y_not = not_test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(y_not.ok());
  EXPECT_EQ(y_not->at(0).tensor().template data<T>()[0], static_cast<T>(~T{12}));
}

TEST(BitShiftTest, LeftRightAndOversizedShifts) {
  const Tensor a = Tensor::FromVector<uint8_t>({4}, {1, 16, 255, 3});
  const Tensor s = Tensor::FromVector<uint8_t>({4}, {1, 2, 8, 9});
  OpTest left("BitShift", 11);
  left.Input(a).Input(s).Attr("direction", std::string("LEFT"));
  auto l = left.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({4}, {2, 64, 0, 0}), l->at(0).tensor()));
  OpTest right("BitShift", 11);
  right.Input(a).Input(s).Attr("direction", std::string("RIGHT"));
  auto r = right.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({4}, {0, 4, 0, 0}), r->at(0).tensor()));
  OpTest u64("BitShift", 11);
  u64.Input(Tensor::FromVector<uint64_t>({1}, {1}))
      .Input(Tensor::FromVector<uint64_t>({1}, {63}))
      .Attr("direction", std::string("LEFT"));
  auto w = u64.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->at(0).tensor().data<uint64_t>()[0], uint64_t{1} << 63);
  OpTest bad("BitShift", 11);
  bad.Input(a).Input(s).Attr("direction", std::string("UP"));
  EXPECT_TRUE(Refused(bad.Run(RegisterElementwiseKernels), StatusCode::kInvalidArgument, "BitShift: attribute direction must be LEFT or RIGHT, not 'UP'"));
}

template <typename T>
class WhereTypedTest : public ::testing::Test {};
using WhereTypes = ::testing::Types<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                    uint16_t, uint32_t, uint64_t, bool>;
TYPED_TEST_SUITE(WhereTypedTest, WhereTypes);

TYPED_TEST(WhereTypedTest, SelectsPerElement) {
  using T = TypeParam;
  OpTest test("Where", 16);
  test.Input(Bools({4}, {true, false, false, true}))
      .Input(MakeTensor<T>({4}, {1, 1, 1, 1}))
      .Input(MakeTensor<T>({1}, {0}));
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({4}, {1, 0, 0, 1}), out->at(0).tensor()));
}

TEST(WhereTest, BroadcastsAllThreeInputs) {
  OpTest test("Where", 16);
  test.Input(Bools({2, 1}, {true, false})).Input(MakeTensor<float>({3}, {1, 2, 3})).Input(MakeTensor<float>({}, {-1}));
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<float>({2, 3}, {1, 2, 3, -1, -1, -1}), out->at(0).tensor()));
}

TEST(WhereTest, StringsAndIntegerTypes) {
  OpTest test("Where", 16);
  test.Input(Bools({3}, {true, false, true}))
      .Input(Tensor::FromVector<std::string>({3}, {"a", "b", "c"}))
      .Input(Tensor::FromVector<std::string>({1}, {"z"}));
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<std::string>({3}, {"a", "z", "c"}), out->at(0).tensor()));
  OpTest ints("Where", 16);
  ints.Input(Bools({2}, {false, true})).Input(MakeTensor<int64_t>({2}, {1, 2})).Input(MakeTensor<int64_t>({2}, {3, 4}));
  auto y = ints.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<int64_t>({2}, {3, 2}), y->at(0).tensor()));
  OpTest bad("Where", 16);
  bad.Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<float>({1}, {1}));
  EXPECT_TRUE(Refused(bad.Run(RegisterElementwiseKernels), StatusCode::kUnimplemented, "Where does not take float32 (input 0)"));
}

}  // namespace
}  // namespace onnxflow
