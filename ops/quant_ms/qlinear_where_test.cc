// com.microsoft QLinearWhere: byte copies, requantization (half to even, saturated) and
// broadcasting, worked by hand and against a reference with scales whose ratios are exact in
// binary (so ties are real ties and the expected bytes are exact).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace {

template <typename T>
struct Operand {
  Tensor data;
  float scale;
  std::optional<T> zero;  // absent when empty
};

template <typename T>
Result<std::vector<Value>> RunWhere(const Tensor& cond, const Operand<T>& x, const Operand<T>& y, float z_scale,
                                    std::optional<T> z_zero, int threads = 1) {
  OpTest test("QLinearWhere", 1, "com.microsoft");
  test.Input(cond);
  for (const Operand<T>* o : {&x, &y}) {
    test.Input(o->data).Input(Tensor::Scalar<float>(o->scale));
    if (o->zero) test.Input(Tensor::Scalar<T>(*o->zero));
    else test.AbsentInput();
  }
  test.Input(Tensor::Scalar<float>(z_scale));
  if (z_zero) test.Input(Tensor::Scalar<T>(*z_zero));
  test.Threads(threads);
  return test.Run(RegisterQuantMsKernels);
}

Tensor Cond(const Shape& shape, const std::vector<bool>& v) {
  Tensor t(DataType::kBool, shape);
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<bool>()[i] = v[i];
  return t;
}

template <typename T>
std::vector<T> Bytes(const Result<std::vector<Value>>& out) {
  const Tensor& t = (*out)[0].tensor();
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

TEST(QLinearWhere, CopiesWhenParametersMatch) {
  const Operand<uint8_t> x{Tensor::FromVector<uint8_t>({4}, {1, 2, 3, 4}), 0.5f, uint8_t{10}};
  const Operand<uint8_t> y{Tensor::FromVector<uint8_t>({4}, {5, 6, 7, 8}), 0.5f, uint8_t{10}};
  auto out = RunWhere<uint8_t>(Cond({4}, {true, false, true, false}), x, y, 0.5f, uint8_t{10});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bytes<uint8_t>(out), (std::vector<uint8_t>{1, 6, 3, 8}));
}

TEST(QLinearWhere, BroadcastsConditionXAndY) {
  // condition [2, 1], X [1, 3], Y a scalar: Z [2, 3]; an int8 copy.
  const Operand<int8_t> x{Tensor::FromVector<int8_t>({1, 3}, {-10, 20, 30}), 1.f, std::nullopt};
  const Operand<int8_t> y{Tensor::FromVector<int8_t>({}, {-99}), 1.f, std::nullopt};
  auto out = RunWhere<int8_t>(Cond({2, 1}, {true, false}), x, y, 1.f, std::nullopt);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(Bytes<int8_t>(out), (std::vector<int8_t>{-10, 20, 30, -99, -99, -99}));
}

TEST(QLinearWhere, RequantizesUint8HalfToEvenAndSaturates) {
  // X: (x - 100) * 1 / 0.5 + 128: 100 -> 128, 101 -> 130, 90 -> 108, 200 -> 328 -> 255.
  // Y: y * 0.25 / 0.5 + 128: 3 -> 1.5 -> 2 -> 130, 1 -> 0.5 -> 0 -> 128, 5 -> 2.5 -> 2 -> 130,
  // 7 -> 3.5 -> 4 -> 132.
  const Operand<uint8_t> x{Tensor::FromVector<uint8_t>({8}, {100, 101, 90, 200, 0, 0, 0, 0}), 1.f, uint8_t{100}};
  const Operand<uint8_t> y{Tensor::FromVector<uint8_t>({8}, {0, 0, 0, 0, 3, 1, 5, 7}), 0.25f, std::nullopt};
  auto out = RunWhere<uint8_t>(Cond({8}, {true, true, true, true, false, false, false, false}), x, y, 0.5f,
                               uint8_t{128});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bytes<uint8_t>(out), (std::vector<uint8_t>{128, 130, 108, 255, 130, 128, 130, 132}));
}

TEST(QLinearWhere, RequantizesInt8) {
  // X * 2: -100 -> -200 -> -128, 3 -> 6, 50 -> 100. Y (y + 1) * 4: -1 -> 0, 40 -> 164 -> 127.
  const Operand<int8_t> x{Tensor::FromVector<int8_t>({5}, {-100, 3, 50, 0, 0}), 2.f, std::nullopt};
  const Operand<int8_t> y{Tensor::FromVector<int8_t>({5}, {0, 0, 0, -1, 40}), 4.f, int8_t{-1}};
  auto out = RunWhere<int8_t>(Cond({5}, {true, true, true, false, false}), x, y, 1.f, std::nullopt);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bytes<int8_t>(out), (std::vector<int8_t>{-128, 6, 100, 0, 127}));
  // Half to even on both sides of zero: x * 0.5 for 1, 3, -3, -1, 5 -> 0, 2, -2, 0, 2; Y is copied.
  const Operand<int8_t> h{Tensor::FromVector<int8_t>({5}, {1, 3, -3, -1, 5}), 0.5f, std::nullopt};
  const Operand<int8_t> s{Tensor::FromVector<int8_t>({}, {77}), 1.f, int8_t{0}};
  auto half = RunWhere<int8_t>(Cond({1}, {true}), h, s, 1.f, int8_t{0});
  ASSERT_TRUE(half.ok()) << half.status().ToString();
  EXPECT_EQ(Bytes<int8_t>(half), (std::vector<int8_t>{0, 2, -2, 0, 2}));
}

// condition [2, 1, 40], X [30, 1], Y [2, 30, 40]: Z [2, 30, 40]. X's ratio to Z is 1.5 and Y's 0.5,
// so half of the values are ties; the reference rounds them in double, exactly.
template <typename T>
void CheckBroadcastReference(int threads) {
  const T zx = std::is_signed_v<T> ? -3 : 120, zy = std::is_signed_v<T> ? 5 : 130, zz = std::is_signed_v<T> ? 1 : 128;
  const double lo = std::is_signed_v<T> ? -128 : 0, hi = lo + 255;
  // Values over the whole byte range; the condition's pattern is not periodic in its row of 40.
  std::vector<bool> cb;
  for (int i = 0; i < 80; ++i) cb.push_back((i * i + i / 3) % 3 == 0);
  std::vector<T> xv, yv;
  for (int i = 0; i < 30; ++i) xv.push_back(static_cast<T>(i * 53 + 7));
  for (int i = 0; i < 2 * 30 * 40; ++i) yv.push_back(static_cast<T>(i * 37 + 11));
  const Operand<T> x{Tensor::FromVector<T>({30, 1}, xv), 0.375f, zx};
  const Operand<T> y{Tensor::FromVector<T>({2, 30, 40}, yv), 0.125f, zy};
  auto out = RunWhere<T>(Cond({2, 1, 40}, cb), x, y, 0.25f, zz, threads);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].tensor().shape(), (Shape{2, 30, 40}));
  const std::vector<T> got = Bytes<T>(out);
  for (int b = 0; b < 2; ++b) {
    for (int r = 0; r < 30; ++r) {
      for (int c = 0; c < 40; ++c) {
        const int i = (b * 30 + r) * 40 + c;
        const double v = cb[b * 40 + c] ? (xv[r] - zx) * 0.375 : (yv[i] - zy) * 0.125;
        const T want = static_cast<T>(std::min(hi, std::max(lo, std::nearbyint(v / 0.25) + zz)));
        ASSERT_EQ(int(got[i]), int(want)) << "element " << i;
      }
    }
  }
}

TEST(QLinearWhere, BroadcastAgainstReference) {
  for (int threads : {1, 2}) {
    CheckBroadcastReference<uint8_t>(threads);
    CheckBroadcastReference<int8_t>(threads);
  }
}

TEST(QLinearWhere, Refusals) {
  const Operand<uint8_t> x{Tensor::FromVector<uint8_t>({2}, {1, 2}), 1.f, uint8_t{0}};
  const Tensor cond = Cond({2}, {true, false});
  EXPECT_TRUE(Refused(RunWhere<uint8_t>(Tensor::FromVector<uint8_t>({2}, {1, 0}), x, x, 1.f, uint8_t{0}),
                      StatusCode::kInvalidArgument, "input 'condition' has type uint8; expected bool"));
  const Operand<int8_t> s{Tensor::FromVector<int8_t>({2}, {1, 2}), 1.f, std::nullopt};
  {
    OpTest test("QLinearWhere", 1, "com.microsoft");
    test.Input(cond).Input(x.data).Input(Tensor::Scalar<float>(1.f)).AbsentInput();
    test.Input(s.data).Input(Tensor::Scalar<float>(1.f)).AbsentInput().Input(Tensor::Scalar<float>(1.f));
    EXPECT_TRUE(Refused(test.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument,
                        "input 'Y' has type int8 but 'X' has uint8"));
  }
  {
    OpTest test("QLinearWhere", 1, "com.microsoft");
    const Tensor f = Tensor::FromVector<float>({2}, {1, 2});
    test.Input(cond).Input(f).Input(Tensor::Scalar<float>(1.f)).AbsentInput();
    test.Input(f).Input(Tensor::Scalar<float>(1.f)).AbsentInput().Input(Tensor::Scalar<float>(1.f));
    EXPECT_TRUE(Refused(test.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument,
                        "input 'X' has type float32; expected uint8 or int8"));
  }
  {
    OpTest test("QLinearWhere", 1, "com.microsoft");
    test.Input(cond).Input(x.data).Input(Tensor::Scalar<float>(1.f)).AbsentInput();
    test.Input(x.data).Input(Tensor::Scalar<float>(1.f)).AbsentInput().AbsentInput();
    EXPECT_TRUE(Refused(test.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument,
                        "input 'z_scale' is required but absent"));
  }
  {
    OpTest test("QLinearWhere", 1, "com.microsoft");
    test.Input(cond).Input(x.data).Input(Tensor::Scalar<float>(1.f)).Input(Tensor::Scalar<int8_t>(0));
    test.Input(x.data).Input(Tensor::Scalar<float>(1.f)).AbsentInput().Input(Tensor::Scalar<float>(1.f));
    EXPECT_TRUE(Refused(test.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument,
                        "input 'x_zero_point' must be a uint8 with one element"));
  }
  const Operand<uint8_t> three{Tensor::FromVector<uint8_t>({3}, {1, 2, 3}), 1.f, uint8_t{0}};
  EXPECT_TRUE(Refused(RunWhere<uint8_t>(cond, three, x, 1.f, uint8_t{0}), StatusCode::kInvalidArgument, "broadcast"));
}

}  // namespace
}  // namespace onnxflow
