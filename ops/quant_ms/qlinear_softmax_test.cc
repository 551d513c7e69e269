// com.microsoft QLinearSoftmax: small cases worked by hand (exact), larger ones against a double
// reference (dequantize, softmax, quantize half to even) within one unit, both axis conventions.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace {

template <typename T>
struct Case {
  Shape shape;
  std::vector<T> x;
  float x_scale = 1.f;
  float y_scale = 1.f / 256;
  bool x_zero = false;  // give x_zero_point (3)
  bool y_zero = true;   // give y_zero_point (0 uint8, -128 int8: the quantizer's)
  int64_t opset = 13;
  bool has_axis = true;
  int64_t axis = -1;
  int threads = 1;
};

template <typename T>
T YZero() {
  return std::is_signed_v<T> ? T(-128) : T(0);
}

template <typename T>
Result<std::vector<Value>> RunSoftmax(const Case<T>& c) {
  OpTest test("QLinearSoftmax", 1, "com.microsoft");
  test.Attr("opset", c.opset);
  if (c.has_axis) test.Attr("axis", c.axis);
  test.Input(Tensor::FromVector<T>(c.shape, c.x)).Input(Tensor::Scalar<float>(c.x_scale));
  if (c.x_zero) test.Input(Tensor::Scalar<T>(3));
  else test.AbsentInput();
  test.Input(Tensor::Scalar<float>(c.y_scale));
  if (c.y_zero) test.Input(Tensor::Scalar<T>(YZero<T>()));
  test.Threads(c.threads);
  return test.Run(RegisterQuantMsKernels);
}

template <typename T>
std::vector<T> Bytes(const Result<std::vector<Value>>& out) {
  const Tensor& t = (*out)[0].tensor();
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

// The reference: softmax in double over groups of `len` elements `stride` apart.
template <typename T>
std::vector<T> Reference(const Case<T>& c, int64_t outer, int64_t len, int64_t inner) {
  const double zero = c.y_zero ? YZero<T>() : 0, lo = std::is_signed_v<T> ? -128 : 0, hi = lo + 255;
  std::vector<T> y(c.x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      double mx = -1e9, sum = 0;
      for (int64_t d = 0; d < len; ++d) mx = std::max(mx, double(c.x[base + d * inner]));
      for (int64_t d = 0; d < len; ++d) sum += std::exp(c.x_scale * (c.x[base + d * inner] - mx));
      for (int64_t d = 0; d < len; ++d) {
        const double p = std::exp(c.x_scale * (c.x[base + d * inner] - mx)) / sum;
        y[base + d * inner] = static_cast<T>(std::min(hi, std::max(lo, std::nearbyint(p / c.y_scale) + zero)));
      }
    }
  }
  return y;
}

// Scattered bytes: a quadratic residue pattern, so each row's max sits somewhere else.
template <typename T>
std::vector<T> Scattered(int64_t n, int64_t seed) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>((i * i * 31 + i * 7 + seed * 101) & 255);
  return v;
}

// Checks c against the reference within one unit, and that fewer than 2% of the bytes differ.
template <typename T>
void CheckAgainstReference(const Case<T>& c, int64_t outer, int64_t len, int64_t inner) {
  auto out = RunSoftmax(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].tensor().shape(), c.shape);
  const std::vector<T> got = Bytes<T>(out), want = Reference(c, outer, len, inner);
  int off = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::abs(int(got[i]) - int(want[i])), 1) << "element " << i;
    off += got[i] != want[i];
  }
  EXPECT_LE(off, static_cast<int>(got.size() / 50 + 1));
}

TEST(QLinearSoftmax, Uint8ByHand) {
  // softmax(0, 1, 2, 3) = 0.0321, 0.0871, 0.2369, 0.6439; * 256 = 8.21, 22.31, 60.64, 164.84.
  Case<uint8_t> c;
  c.shape = {1, 4};
  c.x = {10, 11, 12, 13};
  c.x_zero = true;  // read and checked, and cancels out
  auto out = RunSoftmax(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bytes<uint8_t>(out), (std::vector<uint8_t>{8, 22, 61, 165}));
}

TEST(QLinearSoftmax, Int8ByHandWithTheQuantizersZeroPoint) {
  Case<int8_t> c;
  c.shape = {4};
  c.x = {-3, -2, -1, 0};
  auto out = RunSoftmax(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bytes<int8_t>(out), (std::vector<int8_t>{8 - 128, 22 - 128, 61 - 128, 165 - 128}));
}

TEST(QLinearSoftmax, Int8SaturatesWhereOnnxRuntimeWraps) {
  // exp(-200) underflows to 0 -> -128; the winner's 1.0 * 256 - 128 = 128 saturates to 127 (ONNX
  // Runtime's int8 loop casts 128 to int8, -128).
  Case<int8_t> c;
  c.shape = {2};
  c.x = {100, -100};
  auto out = RunSoftmax(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bytes<int8_t>(out), (std::vector<int8_t>{127, -128}));
}

TEST(QLinearSoftmax, MultiplierIsTheFloorOfOneOverYScale) {
  // One element: p = 1. 1 / 0.35 = 2.857: ONNX Runtime multiplies by 2, where quantizing 1.0
  // would give 3. Without y_zero_point the zero point is 0.
  Case<uint8_t> c;
  c.shape = {1};
  c.x = {7};
  c.y_scale = 0.35f;
  c.y_zero = false;
  auto out = RunSoftmax(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bytes<uint8_t>(out), (std::vector<uint8_t>{2}));
}

TEST(QLinearSoftmax, AxisConventionsByHand) {
  // x [1, 2, 2] = {{0, 1}, {2, 3}}.
  Case<uint8_t> c;
  c.shape = {1, 2, 2};
  c.x = {0, 1, 2, 3};
  c.axis = 1;
  c.opset = 11;  // [1, 4]: one softmax over all four
  auto flat = RunSoftmax(c);
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_EQ(Bytes<uint8_t>(flat), (std::vector<uint8_t>{8, 22, 61, 165}));
  c.opset = 13;  // along axis 1 only: columns {0, 2} and {1, 3}; softmax(0, 2) * 256 = 30.5, 225.5
  auto per_axis = RunSoftmax(c);
  ASSERT_TRUE(per_axis.ok()) << per_axis.status().ToString();
  EXPECT_EQ(Bytes<uint8_t>(per_axis), (std::vector<uint8_t>{31, 31, 225, 225}));
}

TEST(QLinearSoftmax, DefaultAxisIsMinusOneAtEveryOpset) {
  // ONNX Runtime gives a node without axis its schema's -1, below opset 13 too (not Softmax-11's 1):
  // rows of 2 here either way. softmax(0, 1) * 256 = 68.84, 187.16.
  for (int64_t opset : {11, 13}) {
    Case<uint8_t> c;
    c.shape = {1, 2, 2};
    c.x = {0, 1, 2, 3};
    c.has_axis = false;
    c.opset = opset;
    auto out = RunSoftmax(c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Bytes<uint8_t>(out), (std::vector<uint8_t>{69, 187, 69, 187})) << "opset " << opset;
  }
}

template <typename T>
Case<T> ScatteredCase(const Shape& shape, float x_scale, int64_t opset, int64_t axis, int threads) {
  Case<T> c;
  c.shape = shape;
  c.x = Scattered<T>(ElementCount(shape), shape[0]);
  c.x_scale = x_scale;
  c.opset = opset;
  c.axis = axis;
  c.threads = threads;
  return c;
}

TEST(QLinearSoftmax, RowsAgainstReference) {
  for (int threads : {1, 2}) {
    CheckAgainstReference(ScatteredCase<uint8_t>({300, 257}, 0.05f, 13, -1, threads), 300, 257, 1);
    auto s = ScatteredCase<int8_t>({6, 5, 7}, 0.1f, 11, 1, threads);  // rows of 35
    s.x_zero = true;
    CheckAgainstReference(s, 6, 35, 1);
  }
}

TEST(QLinearSoftmax, MiddleAxisAgainstReference) {
  // Opset 13 on axis 1 of [4, 50, 300]: 300 columns per image, in blocks of 64 and a partial one.
  for (int threads : {1, 2}) {
    CheckAgainstReference(ScatteredCase<int8_t>({4, 50, 300}, 0.08f, 13, 1, threads), 4, 50, 300);
    auto u = ScatteredCase<uint8_t>({3, 9, 2}, 0.2f, 13, -3, threads);
    u.y_zero = false;
    CheckAgainstReference(u, 1, 3, 18);
  }
}

TEST(QLinearSoftmax, EmptyInput) {
  Case<uint8_t> c;
  c.shape = {0, 3};
  auto out = RunSoftmax(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{0, 3}));
}

// A node of X, X_scale, y_scale and y_zero_point (each left out where null), opset 13 or none.
Result<std::vector<Value>> RunInputs(const Tensor& x, const Tensor* x_scale, const Tensor* y_scale,
                                     const Tensor* y_zero, bool has_opset = true) {
  OpTest test("QLinearSoftmax", 1, "com.microsoft");
  if (has_opset) test.Attr("opset", int64_t{13});
  test.Input(x);
  for (const Tensor* t : {x_scale, static_cast<const Tensor*>(nullptr), y_scale, y_zero}) {
    if (t != nullptr) test.Input(*t);
    else test.AbsentInput();
  }
  return test.Run(RegisterQuantMsKernels);
}

TEST(QLinearSoftmax, Refusals) {
  const Tensor u8 = Tensor::FromVector<uint8_t>({2}, {1, 2}), f32 = Tensor::FromVector<float>({2}, {1, 2});
  const Tensor one = Tensor::Scalar<float>(1.f), zero = Tensor::Scalar<float>(0.f);
  const Tensor u8_zero = Tensor::Scalar<uint8_t>(0), s8_zero = Tensor::Scalar<int8_t>(0);
  const auto kInvalid = StatusCode::kInvalidArgument;
  EXPECT_TRUE(Refused(RunInputs(f32, &one, &one, nullptr), kInvalid, "input 'X' has type float32; expected uint8 or int8"));
  EXPECT_TRUE(Refused(RunInputs(u8, &one, nullptr, &u8_zero), kInvalid, "input 'y_scale' is required but absent"));
  EXPECT_TRUE(Refused(RunInputs(u8, &one, &one, &s8_zero), kInvalid, "input 'y_zero_point' must be a uint8"));
  EXPECT_TRUE(Refused(RunInputs(u8, &zero, &one, nullptr), kInvalid, "input 'X_scale' must be positive and finite"));
  EXPECT_TRUE(Refused(RunInputs(u8, &one, &one, nullptr, false), kInvalid, "attribute 'opset'"));
  // The same inputs with an opset run.
  EXPECT_TRUE(RunInputs(u8, &one, &one, &u8_zero).ok());
}

}  // namespace
}  // namespace onnxflow
