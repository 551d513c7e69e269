#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/signal/register.h"

namespace onnxflow {
namespace {

Result<Tensor> Mel(int64_t bins, int64_t dft, int64_t rate, float low, float high, int64_t dtype = 1) {
  OpTest t("MelWeightMatrix", 17);
  t.Attr("output_datatype", dtype);
  t.Input(Tensor::Scalar<int64_t>(bins)).Input(Tensor::Scalar<int64_t>(dft)).Input(Tensor::Scalar<int64_t>(rate));
  t.Input(Tensor::Scalar<float>(low)).Input(Tensor::Scalar<float>(high));
  auto out = t.Run(RegisterSignalKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

TEST(MelWeightMatrix, TrianglesPeakAtOne) {
  // 8 mel bins over 0..4096 Hz at 8192 Hz with a 16-point DFT: 9 spectrogram bins.
  auto m = Mel(8, 16, 8192, 0, 4096);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->shape(), (Shape{9, 8}));
  for (int64_t col = 0; col < 8; ++col) {
    float peak = 0;
    for (int64_t row = 0; row < 9; ++row) {
      const float v = m->data<float>()[row * 8 + col];
      EXPECT_GE(v, 0.0f);
      EXPECT_LE(v, 1.0f);
      peak = std::max(peak, v);
    }
    EXPECT_EQ(peak, 1.0f) << col;
  }
  // The band edges land on bins 0, 0, 1, 1, 2, 3, 4, 5, 6, 8: the first band is its own peak.
  EXPECT_EQ(m->data<float>()[0], 1.0f);
}

TEST(MelWeightMatrix, OutputTypeAndErrors) {
  auto d = Mel(4, 64, 16000, 20, 8000, 11);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->dtype(), DataType::kDouble);
  EXPECT_EQ(d->shape(), (Shape{33, 4}));
  EXPECT_TRUE(Refused(Mel(0, 16, 8192, 0, 4096), StatusCode::kInvalidArgument, "num_mel_bins must be >= 1, got 0"));
  EXPECT_TRUE(Refused(Mel(8, 16, 0, 0, 4096), StatusCode::kInvalidArgument, "sample_rate must be >= 1, got 0"));
  EXPECT_TRUE(Refused(Mel(8, 16, 8192, -800, 4096), StatusCode::kInvalidArgument, "the mel band edges are not finite (check lower_edge_hertz / upper_edge_hertz)"));  // log of a negative number: not finite
  // An upper edge past Nyquist is clipped to the spectrogram, not written out of bounds.
  auto wide = Mel(8, 16, 8192, 0, 20000);
  ASSERT_TRUE(wide.ok());
}

}  // namespace
}  // namespace onnxflow
