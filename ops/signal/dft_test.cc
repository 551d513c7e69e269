#include <cmath>
#include <cstdint>
#include <complex>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/signal/fft.h"
#include "ops/signal/register.h"

namespace onnxflow {
namespace {

constexpr int64_t kNoLength = INT64_MIN;

Result<Tensor> Dft(int opset, const Tensor& x, int64_t axis, int64_t inverse, int64_t onesided, int64_t length = kNoLength) {
  OpTest t("DFT", opset);
  t.Attr("inverse", inverse).Attr("onesided", onesided);
  if (opset < 20) t.Attr("axis", axis);
  t.Input(x);
  if (length != kNoLength) {
    t.Input(Tensor::Scalar<int64_t>(length));
  } else {
    t.AbsentInput();
  }
  if (opset >= 20) t.Input(Tensor::Scalar<int64_t>(axis));
  auto out = t.Run(RegisterSignalKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

TEST(Dft, HandValuesOfFourPoints) {
  // x = [1, 2, 3, 4]: X = [10, -2+2i, -2, -2-2i].
  const Tensor x = Tensor::FromVector<float>({1, 4, 1}, {1, 2, 3, 4});
  for (int opset : {17, 20}) {
    auto y = Dft(opset, x, 1, 0, 0);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2}), *y, 1e-5, 1e-5));
    auto r = Dft(opset, x, 1, 0, 1);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 3, 2}, {10, 0, -2, 2, -2, 0}), *r, 1e-5, 1e-5));
  }
}

TEST(Dft, InverseAndIrfftRoundTripOddLengthOnAnInnerAxis) {
  // Shape [2, 3, 7, 1]: transform along axis 2 (length 7, the direct path), then back.
  std::vector<double> v(42);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.3 * static_cast<double>(i)) + 0.1 * static_cast<double>(i);
  const Tensor x = Tensor::FromVector<double>({2, 3, 7, 1}, v);
  auto spectrum = Dft(20, x, -2, 0, 0);
  ASSERT_TRUE(spectrum.ok()) << spectrum.status().ToString();
  auto back = Dft(20, *spectrum, 2, 1, 0);
  ASSERT_TRUE(back.ok());
  for (int64_t i = 0; i < 42; ++i) {
    EXPECT_NEAR(back->data<double>()[2 * i], v[i], 1e-12);
    EXPECT_NEAR(back->data<double>()[2 * i + 1], 0, 1e-12);
  }
  // rfft then irfft with the explicit odd length 7.
  auto half = Dft(20, x, 2, 0, 1);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->shape(), (Shape{2, 3, 4, 2}));
  auto real = Dft(20, *half, 2, 1, 1, 7);
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  EXPECT_TRUE(TensorsNear(x, *real, 1e-12, 1e-12));
}

TEST(Dft, AxisZeroAndBluesteinLengthMatchNaive) {
  // A long odd length along axis 0 of [101, 2, 2] complex input.
  std::vector<float> v(101 * 2 * 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::cos(0.7 * static_cast<double>(i)));
  const Tensor x = Tensor::FromVector<float>({101, 2, 2}, v);
  auto y = Dft(17, x, 0, 0, 0);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  for (int col = 0; col < 2; ++col) {
    std::vector<signal::Complex> line;
    for (int k = 0; k < 101; ++k) line.emplace_back(v[(k * 2 + col) * 2], v[(k * 2 + col) * 2 + 1]);
    const auto e = signal::NaiveDft(line, false);
    for (int k = 0; k < 101; ++k) {
      EXPECT_NEAR(y->data<float>()[(k * 2 + col) * 2], e[k].real(), 1e-3);
      EXPECT_NEAR(y->data<float>()[(k * 2 + col) * 2 + 1], e[k].imag(), 1e-3);
    }
  }
}

TEST(Dft, DftLengthPadsAndTruncates) {
  const Tensor x = Tensor::FromVector<float>({1, 3, 1}, {1, 1, 1});
  auto padded = Dft(20, x, 1, 0, 0, 4);  // [1, 1, 1, 0] -> [3, -i, 1, i]
  ASSERT_TRUE(padded.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 4, 2}, {3, 0, 0, -1, 1, 0, 0, 1}), *padded, 1e-6, 1e-6));
  auto cut = Dft(20, x, 1, 0, 0, 1);
  ASSERT_TRUE(cut.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, 2}, {1, 0}), *cut));
}

TEST(Dft, HalfPrecisionTypes) {
  std::vector<Float16> h;
  std::vector<BFloat16> b;
  for (float f : {1.f, 2.f, 3.f, 4.f}) {
    h.push_back(Float16{FloatToHalf(f)});
    b.push_back(BFloat16{FloatToBFloat16(f)});
  }
  auto yh = Dft(20, Tensor::FromVector<Float16>({1, 4, 1}, h), 1, 0, 0);
  ASSERT_TRUE(yh.ok());
  EXPECT_EQ(HalfToFloat(yh->data<Float16>()[0].bits), 10.0f);
  EXPECT_EQ(HalfToFloat(yh->data<Float16>()[3].bits), 2.0f);
  auto yb = Dft(20, Tensor::FromVector<BFloat16>({1, 4, 1}, b), 1, 0, 0);
  ASSERT_TRUE(yb.ok());
  EXPECT_EQ(BFloat16ToFloat(yb->data<BFloat16>()[0].bits), 10.0f);
}

TEST(Dft, InvalidInputsAreErrors) {
  const Tensor x = Tensor::FromVector<float>({1, 4, 1}, {1, 2, 3, 4});
  EXPECT_TRUE(Refused(Dft(20, x, 2, 0, 0), StatusCode::kInvalidArgument, "axis 2 is out of range for input shape [1,4,1] (the last axis holds the complex parts)"));    // the complex axis
  EXPECT_TRUE(Refused(Dft(20, x, -1, 0, 0), StatusCode::kInvalidArgument, "axis -1 is out of range for input shape [1,4,1] (the last axis holds the complex parts)"));
  EXPECT_TRUE(Refused(Dft(20, x, 5, 0, 0), StatusCode::kInvalidArgument, "axis 5 is out of range for input shape [1,4,1] (the last axis holds the complex parts)"));
  EXPECT_TRUE(Refused(Dft(20, x, 1, 0, 0, 0), StatusCode::kInvalidArgument, "dft_length must be >= 1, got 0"));  // zero length
  EXPECT_TRUE(Refused(Dft(20, x, 1, 0, 0, -3), StatusCode::kInvalidArgument, "dft_length must be >= 1, got -3"));
  EXPECT_TRUE(Refused(Dft(20, Tensor::FromVector<float>({1, 4, 3}, std::vector<float>(12)), 1, 0, 0), StatusCode::kInvalidArgument, "the last axis must be 1 (real) or 2 (complex), got [1,4,3]"));
  EXPECT_TRUE(Refused(Dft(20, Tensor::FromVector<float>({1, 1, 2}, {1, 0}), 1, 1, 1), StatusCode::kInvalidArgument, "dft_length must be >= 1, got 0"));  // irfft of length 0
}

}  // namespace
}  // namespace onnxflow
