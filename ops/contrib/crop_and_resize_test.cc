// com.microsoft CropAndResize: samples of images whose values are known functions of (y, x), so
// each expected value follows by hand; boxes partly outside, flipped, of one sample; refusals.
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/register_all.h"

namespace onnxflow {
namespace {

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

struct Crop {
  Tensor rois;
  std::vector<int32_t> batch_indices;
  int32_t height, width;
  std::string mode;        // "" for the default (bilinear)
  float extrapolation = 0;  // set as the attribute when not 0
};

Result<Tensor> CropAndResize(const Tensor& x, const Crop& c) {
  OpTest t("CropAndResize", 1, kMsDomain);
  t.Input(x)
      .Input(c.rois)
      .Input(Tensor::FromVector<int32_t>({static_cast<int64_t>(c.batch_indices.size())}, c.batch_indices))
      .Input(Tensor::FromVector<int32_t>({2}, {c.height, c.width}));
  if (!c.mode.empty()) t.Attr("mode", c.mode);
  if (c.extrapolation != 0) t.Attr("extrapolation_value", c.extrapolation);
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> out, t.Run(RegisterAllKernels));
  return out[0].tensor();
}

// A 3 x 3 image whose pixel (y, x) is 3y + x: bilinear sampling of a linear function is exact.
const Tensor kRamp = F({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});

TEST(CropAndResize, BilinearBoxes) {
  // The whole image at its own size: itself. Flipped corners: the image upside down and mirrored.
  auto whole = CropAndResize(kRamp, {F({2, 4}, {0, 0, 1, 1, 1, 1, 0, 0}), {0, 0}, 3, 3});
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({2, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 0}), *whole));
  // The top-left quarter [0, 0.5]: pixels 0 and 1 of each axis. The middle half [0.25, 0.75]:
  // samples at 0.5 and 1.5, between pixels: 3 * 0.5 + 0.5 = 2, ...
  auto parts = CropAndResize(kRamp, {F({2, 4}, {0, 0, 0.5f, 0.5f, 0.25f, 0.25f, 0.75f, 0.75f}), {0, 0}, 2, 2});
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({2, 1, 2, 2}, {0, 1, 3, 4, 2, 3, 5, 6}), *parts));
  // One sample: the box's centre, (0.5 * (0 + 1) * 2, 0.5 * (0.5 + 1) * 2) = (1, 1.5).
  auto centre = CropAndResize(kRamp, {F({1, 4}, {0, 0.5f, 1, 1}), {0}, 1, 1});
  ASSERT_TRUE(centre.ok()) << centre.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({1, 1, 1, 1}, {4.5f}), *centre));
}

TEST(CropAndResize, BilinearBetweenPixels) {
  // [[0, 1], [4, 9]] sampled at 0, 0.5, 1 on each axis: the centre is the mean of the four.
  auto y = CropAndResize(F({1, 1, 2, 2}, {0, 1, 4, 9}), {F({1, 4}, {0, 0, 1, 1}), {0}, 3, 3});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({1, 1, 3, 3}, {0, 0.5f, 1, 2, 3.5f, 5, 4, 6.5f, 9}), *y));
}

TEST(CropAndResize, Nearest) {
  // Samples at 0.5 and 1.5 round away from zero, to pixels 1 and 2.
  auto y = CropAndResize(kRamp, {F({1, 4}, {0.25f, 0.25f, 0.75f, 0.75f}), {0}, 2, 2, "NEAREST"});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({1, 1, 2, 2}, {4, 5, 7, 8}), *y));
}

TEST(CropAndResize, ExtrapolatesOutsideTheImage) {
  // Rows at y = -1, 0, 1 (the first is outside), columns at x = 0 and 2.5 (outside): -7 there.
  auto y = CropAndResize(kRamp, {F({1, 4}, {-0.5f, 0, 0.5f, 1.25f}), {0}, 3, 2, "", -7});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({1, 1, 3, 2}, {-7, -7, 0, -7, 3, -7}), *y));
  // A NaN edge samples nothing on its row (the last row is at y2 alone: y = 2).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto n = CropAndResize(kRamp, {F({1, 4}, {nan, 0, 1, 1}), {0}, 2, 2, "nearest", 5});
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({1, 1, 2, 2}, {5, 5, 6, 8}), *n));
}

TEST(CropAndResize, ChannelsAndBatchIndices) {
  // Image n, channel c: 100n + 10c + 3y + x. Box 0 reads image 1, box 1 image 0.
  std::vector<float> v;
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 2; ++c) {
      for (int i = 0; i < 9; ++i) v.push_back(100.0f * n + 10.0f * c + static_cast<float>(i));
    }
  }
  auto y = CropAndResize(F({2, 2, 3, 3}, v), {F({2, 4}, {0, 0, 1, 1, 0.5f, 0.5f, 1, 1}), {1, 0}, 2, 2});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({2, 2, 2, 2}, {100, 102, 106, 108, 110, 112, 116, 118,  // box 0
                                            4, 5, 7, 8, 14, 15, 17, 18}),          // box 1
                           *y));
  // No boxes: an empty output.
  auto none = CropAndResize(kRamp, {F({0, 4}, {}), {}, 2, 2});
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->shape(), (Shape{0, 1, 2, 2}));
}

TEST(CropAndResize, Refusals) {
  const Tensor box = F({1, 4}, {0, 0, 1, 1});
  EXPECT_TRUE(Refused(CropAndResize(kRamp, {box, {0}, 2, 2, "bicubic"}), StatusCode::kInvalidArgument,
                      "mode must be 'bilinear' or 'nearest', not 'bicubic'"));
  EXPECT_TRUE(Refused(CropAndResize(F({3, 3}, std::vector<float>(9)), {box, {0}, 2, 2}), StatusCode::kInvalidArgument,
                      "X must be 4-D"));
  EXPECT_TRUE(Refused(CropAndResize(kRamp, {F({1, 3}, {0, 0, 1}), {0}, 2, 2}), StatusCode::kInvalidArgument,
                      "rois must be [num_rois, 4], got shape [1,3]"));
  EXPECT_TRUE(Refused(CropAndResize(kRamp, {box, {0, 0}, 2, 2}), StatusCode::kInvalidArgument,
                      "batch_indices must be int32 [1] (one per roi)"));
  EXPECT_TRUE(Refused(CropAndResize(kRamp, {box, {1}, 2, 2}), StatusCode::kOutOfRange,
                      "batch_indices[0] = 1 is out of range [0, 1)"));
  EXPECT_TRUE(Refused(CropAndResize(kRamp, {box, {-1}, 2, 2}), StatusCode::kOutOfRange, "is out of range"));
  EXPECT_TRUE(Refused(CropAndResize(kRamp, {box, {0}, 0, 2}), StatusCode::kInvalidArgument,
                      "crop_size must be positive, got [0, 2]"));
  EXPECT_TRUE(Refused(CropAndResize(kRamp, {box, {0}, 2, -3}), StatusCode::kInvalidArgument, "must be positive"));
  // crop_size of the wrong length or type, and a double image.
  OpTest three("CropAndResize", 1, kMsDomain);
  three.Input(kRamp).Input(box).Input(Tensor::FromVector<int32_t>({1}, {0}));
  three.Input(Tensor::FromVector<int32_t>({3}, {2, 2, 2}));
  EXPECT_TRUE(Refused(three.Run(RegisterAllKernels), StatusCode::kInvalidArgument, "crop_size must be int32 [2]"));
  OpTest wide("CropAndResize", 1, kMsDomain);
  wide.Input(kRamp).Input(box).Input(Tensor::FromVector<int32_t>({1}, {0}));
  wide.Input(Tensor::FromVector<int64_t>({2}, {2, 2}));
  EXPECT_TRUE(Refused(wide.Run(RegisterAllKernels), StatusCode::kInvalidArgument, "got int64 [2]"));
  OpTest dbl("CropAndResize", 1, kMsDomain);
  dbl.Input(Tensor::FromVector<double>({1, 1, 1, 1}, {0}))
      .Input(box)
      .Input(Tensor::FromVector<int32_t>({1}, {0}))
      .Input(Tensor::FromVector<int32_t>({2}, {2, 2}));
  EXPECT_TRUE(Refused(dbl.Run(RegisterAllKernels), StatusCode::kInvalidArgument,
                      "X and rois must be float, got float64 and float32"));
  // A crop whose output no memory holds is refused before anything is written.
  EXPECT_TRUE(Refused(CropAndResize(kRamp, {box, {0}, 2147483647, 2147483647}), StatusCode::kResourceExhausted,
                      "max_tensor_bytes"));
}

}  // namespace
}  // namespace onnxflow
