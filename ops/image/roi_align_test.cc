#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/image/register.h"

namespace onnxflow {
namespace {

Result<Tensor> Pool(const Tensor& x, const Tensor& rois, std::vector<int64_t> batch, const std::string& mode,
                    const std::string& ctm, int64_t out, int64_t ratio, int opset = 22) {
  OpTest t("RoiAlign", opset);
  t.Attr("mode", mode).Attr("output_height", out).Attr("output_width", out).Attr("sampling_ratio", ratio);
  if (opset >= 16) t.Attr("coordinate_transformation_mode", ctm);
  t.Input(x).Input(rois).Input(Tensor::FromVector<int64_t>({static_cast<int64_t>(batch.size())}, batch));
  auto o = t.Run(RegisterImageKernels);
  if (!o.ok()) return o.status();
  return o.value()[0].tensor();
}

// A 4x4 ramp: value = 4 * row + col, so bilinear samples equal 4y + x exactly.
Tensor Ramp() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  return Tensor::FromVector<float>({1, 1, 4, 4}, v);
}

TEST(RoiAlign, AverageOfALinearRampIsItsValueAtTheBinCentre) {
  // output_half_pixel: roi [0,0]-[2,2], 2x2 bins of size 1, 2x2 samples each; centres (0.5, 0.5)...
  auto y = Pool(Ramp(), Tensor::FromVector<float>({1, 4}, {0, 0, 2, 2}), {0}, "avg", "output_half_pixel", 2, 2);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, 2, 2}, {2.5f, 3.5f, 6.5f, 7.5f}), *y));
  // half_pixel shifts the roi by -0.5: centres (0, 0), (0, 1), ...
  auto h = Pool(Ramp(), Tensor::FromVector<float>({1, 4}, {0, 0, 2, 2}), {0}, "avg", "half_pixel", 2, 2);
  ASSERT_TRUE(h.ok());
  // Samples at -0.25 clamp to 0 (within a pixel of the edge): bin (0, 0) samples rows and columns
  // {0, 0.25}, mean 0.125 each -> 4 * 0.125 + 0.125.
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, 2, 2}, {0.625f, 1.5f, 4.125f, 5.0f}), *h, 1e-5, 1e-5));
  // Opset 10 has no coordinate_transformation_mode and behaves as output_half_pixel.
  auto old = Pool(Ramp(), Tensor::FromVector<float>({1, 4}, {0, 0, 2, 2}), {0}, "avg", "", 2, 2, 10);
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(TensorsNear(*y, *old));
}

TEST(RoiAlign, MaxTakesTheLargestWeightedCorner) {
  // One sample per bin at (1.5, 1.5): corners 5, 6, 9, 10 each weighted 0.25 -> max 2.5.
  auto y = Pool(Ramp(), Tensor::FromVector<float>({1, 4}, {1, 1, 2, 2}), {0}, "max", "output_half_pixel", 1, 1);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, 1, 1}, {2.5f}), *y));
}

TEST(RoiAlign, DoubleAndFloat16) {
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[i] = i;
  auto y = Pool(Tensor::FromVector<double>({1, 1, 4, 4}, v), Tensor::FromVector<double>({1, 4}, {0, 0, 2, 2}), {0},
                "avg", "output_half_pixel", 1, 2);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1, 1, 1, 1}, {5.0}), *y));
  std::vector<Float16> h, r;
  for (int i = 0; i < 16; ++i) h.push_back(Float16{FloatToHalf(static_cast<float>(i))});
  for (float f : {0.f, 0.f, 2.f, 2.f}) r.push_back(Float16{FloatToHalf(f)});
  auto yh = Pool(Tensor::FromVector<Float16>({1, 1, 4, 4}, h), Tensor::FromVector<Float16>({1, 4}, r), {0}, "avg",
                 "output_half_pixel", 1, 2);
  ASSERT_TRUE(yh.ok());
  EXPECT_EQ(HalfToFloat(yh->data<Float16>()[0].bits), 5.0f);
}

TEST(RoiAlign, BadBatchIndexIsOutOfRange) {
  auto y = Pool(Ramp(), Tensor::FromVector<float>({1, 4}, {0, 0, 2, 2}), {1}, "avg", "half_pixel", 2, 2);
  ASSERT_TRUE(Refused(y, StatusCode::kOutOfRange, "batch_indices[0] = 1 is outside [0, 1)"));
  EXPECT_EQ(y.status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(Refused(Pool(Ramp(), Tensor::FromVector<float>({1, 3}, {0, 0, 2}), {0}, "avg", "half_pixel", 2, 2), StatusCode::kInvalidArgument, "rois must be (num_rois, 4), got [1,3]"));
  EXPECT_TRUE(Refused(Pool(Ramp(), Tensor::FromVector<float>({1, 4}, {0, 0, 2, 2}), {0}, "sum", "half_pixel", 2, 2), StatusCode::kInvalidArgument, "RoiAlign mode must be avg or max, got 'sum'"));
  // A hostile sampling_ratio (2^31: 2^62 samples per bin) is refused past the adaptive grid's bound.
  EXPECT_TRUE(Refused(Pool(Ramp(), Tensor::FromVector<float>({1, 4}, {0, 0, 2, 2}), {0}, "avg", "half_pixel", 2, int64_t{1} << 31), StatusCode::kInvalidArgument, "sampling_ratio 2147483648 is past 1024 samples per bin side"));
  EXPECT_TRUE(Pool(Ramp(), Tensor::FromVector<float>({1, 4}, {0, 0, 2, 2}), {0}, "avg", "half_pixel", 2, 1024).ok());
}

}  // namespace
}  // namespace onnxflow
