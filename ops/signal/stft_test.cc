#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/signal/fft.h"
#include "ops/signal/register.h"

namespace onnxflow {
namespace {

TEST(Stft, FramesMatchAWindowedNaiveDft) {
  // 1 batch, 23 samples, frame 6 (a direct-path length), step 4, Hann-like window: 5 frames.
  std::vector<float> signal(23), window(6);
  for (int i = 0; i < 23; ++i) signal[i] = static_cast<float>(std::sin(0.5 * i) + 0.25 * i);
  for (int i = 0; i < 6; ++i) window[i] = 0.5f - 0.5f * static_cast<float>(std::cos(2 * M_PI * i / 6));
  for (int64_t onesided : {1, 0}) {
    OpTest t("STFT", 17);
    t.Attr("onesided", onesided);
    t.Input(Tensor::FromVector<float>({1, 23, 1}, signal)).Input(Tensor::Scalar<int64_t>(4));
    t.Input(Tensor::FromVector<float>({6}, window));
    auto out = t.Run(RegisterSignalKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& y = out.value()[0].tensor();
    const int64_t bins = onesided ? 4 : 6;
    ASSERT_EQ(y.shape(), (Shape{1, 5, bins, 2}));
    for (int f = 0; f < 5; ++f) {
      std::vector<signal::Complex> frame;
      for (int k = 0; k < 6; ++k) frame.emplace_back(signal[f * 4 + k] * window[k], 0);
      const auto e = signal::NaiveDft(frame, false);
      for (int k = 0; k < bins; ++k) {
        EXPECT_NEAR(y.data<float>()[(f * bins + k) * 2], e[k].real(), 1e-4);
        EXPECT_NEAR(y.data<float>()[(f * bins + k) * 2 + 1], e[k].imag(), 1e-4);
      }
    }
  }
}

TEST(Stft, FrameLengthWithoutWindowAndComplexInput) {
  // Complex signal [1, 8, 2], frame_length 4 given as int32, step 2: 3 frames, two-sided.
  std::vector<double> s(16);
  for (int i = 0; i < 16; ++i) s[i] = i % 3;
  OpTest t("STFT", 17);
  t.Attr("onesided", int64_t{0});
  t.Input(Tensor::FromVector<double>({1, 8, 2}, s)).Input(Tensor::Scalar<int32_t>(2)).AbsentInput();
  t.Input(Tensor::Scalar<int32_t>(4));
  auto out = t.Run(RegisterSignalKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = out.value()[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{1, 3, 4, 2}));
  for (int f = 0; f < 3; ++f) {
    std::vector<signal::Complex> frame;
    for (int k = 0; k < 4; ++k) frame.emplace_back(s[(f * 2 + k) * 2], s[(f * 2 + k) * 2 + 1]);
    const auto e = signal::NaiveDft(frame, false);
    for (int k = 0; k < 4; ++k) {
      EXPECT_NEAR(y.data<double>()[(f * 4 + k) * 2], e[k].real(), 1e-12);
      EXPECT_NEAR(y.data<double>()[(f * 4 + k) * 2 + 1], e[k].imag(), 1e-12);
    }
  }
}

TEST(Stft, InvalidInputsAreErrors) {
  const Tensor s = Tensor::FromVector<float>({1, 8, 1}, std::vector<float>(8, 1));
  {
    OpTest t("STFT", 17);
    t.Input(s).Input(Tensor::Scalar<int64_t>(0));  // zero step
    EXPECT_TRUE(Refused(t.Run(RegisterSignalKernels), StatusCode::kInvalidArgument, "frame_step must be >= 1, got 0"));
  }
  {
    OpTest t("STFT", 17);
    t.Input(Tensor::FromVector<float>({8}, std::vector<float>(8))).Input(Tensor::Scalar<int64_t>(2));
    EXPECT_TRUE(Refused(t.Run(RegisterSignalKernels), StatusCode::kInvalidArgument, "signal must be [batch, length, 1 or 2], got [8]"));  // not [batch, length, parts]
  }
  {
    OpTest t("STFT", 17);
    t.Input(s).Input(Tensor::Scalar<int64_t>(2)).AbsentInput().Input(Tensor::Scalar<int64_t>(-4));
    EXPECT_TRUE(Refused(t.Run(RegisterSignalKernels), StatusCode::kInvalidArgument, "frame_length must be >= 1, got -4"));
  }
}

}  // namespace
}  // namespace onnxflow
