#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/image/register.h"

namespace onnxflow {
namespace {

Tensor F32(Shape shape, std::vector<float> v) { return Tensor::FromVector<float>(std::move(shape), v); }

Result<Tensor> Sample(const Tensor& x, const Tensor& grid, const std::string& mode, const std::string& padding,
                      int64_t align, int opset = 22) {
  OpTest t("GridSample", opset);
  t.Attr("mode", mode).Attr("padding_mode", padding).Attr("align_corners", align);
  t.Input(x).Input(grid);
  auto out = t.Run(RegisterImageKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

// 3x3 image 0..8; with align_corners=1 the normalized grid -1, 0, 1 hits pixel centres 0, 1, 2.
const Tensor kImage = F32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});

Tensor IdentityGrid3x3() {
  std::vector<float> g;
  for (float y : {-1.f, 0.f, 1.f}) {
    for (float x : {-1.f, 0.f, 1.f}) g.insert(g.end(), {x, y});
  }
  return F32({1, 3, 3, 2}, g);
}

TEST(GridSample, IdentityGridReturnsTheImageInEveryMode) {
  for (const char* mode : {"linear", "nearest", "cubic"}) {
    auto y = Sample(kImage, IdentityGrid3x3(), mode, "zeros", 1);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsNear(kImage, *y, 1e-5, 1e-5)) << mode;
  }
  // Opset 16 spells the modes bilinear / bicubic.
  for (const char* mode : {"bilinear", "bicubic"}) {
    auto y = Sample(kImage, IdentityGrid3x3(), mode, "zeros", 1, 16);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsNear(kImage, *y, 1e-5, 1e-5)) << mode;
  }
}

TEST(GridSample, BilinearHandValues) {
  // align_corners=0 on a 2x2 image: (0, 0) is the image centre, x = y = 0.5 -> the mean.
  const Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  auto y = Sample(x, F32({1, 1, 2, 2}, {0, 0, 0.5f, -0.5f}), "linear", "zeros", 0);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  // (0.5, -0.5) -> x = 1.0, y = 0.0: pixel (row 0, col 1) = 2.
  EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 2}, {2.5f, 2.0f}), *y));
}

TEST(GridSample, PaddingModesOutsideTheImage) {
  // x = 2 normalized with align_corners=1 on width 3 -> x = 3, one past the last pixel.
  const Tensor x = F32({1, 1, 1, 3}, {10, 20, 30});
  const Tensor grid = F32({1, 1, 2, 2}, {2.0f, 0, -2.0f, 0});
  auto zeros = Sample(x, grid, "linear", "zeros", 1);
  auto border = Sample(x, grid, "linear", "border", 1);
  auto reflection = Sample(x, grid, "linear", "reflection", 1);
  ASSERT_TRUE(zeros.ok() && border.ok() && reflection.ok());
  EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 2}, {0, 0}), *zeros));
  EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 2}, {30, 10}), *border));
  // Reflected about the border pixels: x = 3 -> 1, x = -1 -> 1.
  EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 2}, {20, 20}), *reflection));
}

TEST(GridSample, NearestRoundsHalfToEven) {
  // align_corners=1, width 5: normalized -0.75 -> x = 0.5 -> 0; -0.25 -> 1.5 -> 2.
  const Tensor x = F32({1, 1, 1, 5}, {0, 1, 2, 3, 4});
  auto y = Sample(x, F32({1, 1, 2, 2}, {-0.75f, 0, -0.25f, 0}), "nearest", "zeros", 1);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(F32({1, 1, 1, 2}, {0, 2}), *y));
}

TEST(GridSample, VolumetricTrilinearCentreIsTheMean) {
  const Tensor x = F32({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto y = Sample(x, F32({1, 1, 1, 1, 3}, {0, 0, 0}), "linear", "zeros", 0);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 1, 1}, {4.5f}), *y));
}

TEST(GridSample, TypesAndChannels) {
  const Tensor grid = F32({1, 1, 1, 2}, {0, 0});
  {
    auto y = Sample(Tensor::FromVector<double>({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40}), grid, "linear", "zeros", 0);
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1, 2, 1, 1}, {2.5, 25}), *y));
  }
  {
    std::vector<Float16> v;
    for (float f : {1.f, 2.f, 3.f, 4.f}) v.push_back(Float16{FloatToHalf(f)});
    auto y = Sample(Tensor::FromVector<Float16>({1, 1, 2, 2}, v), grid, "linear", "zeros", 0);
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(HalfToFloat(y->data<Float16>()[0].bits), 2.5f);
  }
  {
    // Integers interpolate in floating point and truncate: 2.5 -> 2.
    auto y = Sample(Tensor::FromVector<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4}), grid, "linear", "zeros", 0);
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({1, 1, 1, 1}, {2}), *y));
  }
  {
    std::vector<double> g = {0.0, 0.0};
    auto y = Sample(kImage, Tensor::FromVector<double>({1, 1, 1, 2}, g), "linear", "zeros", 1);
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 1}, {4}), *y));
  }
}

TEST(GridSample, NearestPicksStringsAndBools) {
  const Tensor grid = F32({1, 1, 2, 2}, {-1, -1, 5, 5});  // the top-left pixel, then far outside
  auto s = Sample(Tensor::FromVector<std::string>({1, 1, 2, 2}, {"a", "b", "c", "d"}), grid, "nearest", "zeros", 1);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<std::string>({1, 1, 1, 2}, {"a", ""}), *s));
  auto b = Sample(Tensor::FromVector<bool>({1, 1, 2, 2}, {true, false, false, true}), grid, "nearest", "border", 1);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<bool>({1, 1, 1, 2}, {true, true}), *b));
  EXPECT_TRUE(Refused(Sample(Tensor::FromVector<bool>({1, 1, 2, 2}, {true, false, false, true}), grid, "linear", "zeros", 1), StatusCode::kUnimplemented, "GridSample of bool supports mode nearest only"));
}

TEST(GridSample, NanGridReadsZeroNotMemory) {
  auto y = Sample(kImage, F32({1, 1, 1, 2}, {NAN, NAN}), "cubic", "zeros", 0);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->data<float>()[0], 0.0f);
  auto b = Sample(kImage, F32({1, 1, 1, 2}, {NAN, 1e30f}), "linear", "reflection", 0);
  ASSERT_TRUE(b.ok());
}

TEST(GridSample, BadShapesAreErrors) {
  EXPECT_TRUE(Refused(Sample(kImage, F32({1, 3, 3, 3}, std::vector<float>(27)), "linear", "zeros", 0), StatusCode::kInvalidArgument, "grid shape [1,3,3,3] does not fit X shape [1,1,3,3] (expected (N, D1_out.., 2))"));
  EXPECT_TRUE(Refused(Sample(kImage, F32({2, 3, 3, 2}, std::vector<float>(36)), "linear", "zeros", 0), StatusCode::kInvalidArgument, "grid shape [2,3,3,2] does not fit X shape [1,1,3,3] (expected (N, D1_out.., 2))"));
  const Tensor x5 = F32({1, 1, 2, 2, 2}, std::vector<float>(8));
  EXPECT_TRUE(Refused(Sample(x5, F32({1, 1, 1, 1, 3}, {0, 0, 0}), "bilinear", "zeros", 0, 16), StatusCode::kInvalidArgument, "GridSample-16 takes 4-D X, got [1,1,2,2,2]"));
  EXPECT_TRUE(Refused(Sample(kImage, IdentityGrid3x3(), "area", "zeros", 0), StatusCode::kInvalidArgument, "unknown GridSample mode 'area'"));
}

}  // namespace
}  // namespace onnxflow
