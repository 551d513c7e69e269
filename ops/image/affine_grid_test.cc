#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/image/register.h"

namespace onnxflow {
namespace {

Result<Tensor> Grid(const Tensor& theta, std::vector<int64_t> size, int64_t align) {
  OpTest t("AffineGrid", 20);
  t.Attr("align_corners", align);
  t.Input(theta).Input(Tensor::FromVector<int64_t>({static_cast<int64_t>(size.size())}, size));
  auto out = t.Run(RegisterImageKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

TEST(AffineGrid, IdentityTheta2d) {
  const Tensor theta = Tensor::FromVector<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  // H = 2, W = 3. align_corners=1: x in {-1, 0, 1}, y in {-1, 1}.
  auto a = Grid(theta, {1, 1, 2, 3}, 1);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 2, 3, 2}, {-1, -1, 0, -1, 1, -1, -1, 1, 0, 1, 1, 1}), *a));
  // align_corners=0: pixel centres, x in {-2/3, 0, 2/3}, y in {-1/2, 1/2}.
  auto b = Grid(theta, {1, 1, 2, 3}, 0);
  ASSERT_TRUE(b.ok());
  const float t = 2.0f / 3;
  EXPECT_TRUE(TensorsNear(
      Tensor::FromVector<float>({1, 2, 3, 2}, {-t, -0.5f, 0, -0.5f, t, -0.5f, -t, 0.5f, 0, 0.5f, t, 0.5f}), *b));
}

TEST(AffineGrid, ScaleAndTranslate3dInDouble) {
  // x' = 2x + 1, y' = y, z' = -z: one point per axis sits at the centre 0.
  const Tensor theta = Tensor::FromVector<double>({1, 3, 4}, {2, 0, 0, 1, 0, 1, 0, 0, 0, 0, -1, 0});
  auto g = Grid(theta, {1, 1, 2, 1, 2}, 1);  // D = 2, H = 1, W = 2
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  // (z, x) over {-1, 1}^2, y = 0: x' = 2x + 1, z' = -z.
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1, 2, 1, 2, 3}, {-1, 0, 1, 3, 0, 1, -1, 0, -1, 3, 0, -1}), *g));
}

TEST(AffineGrid, MismatchesAreErrors) {
  const Tensor theta = Tensor::FromVector<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  EXPECT_TRUE(Refused(Grid(theta, {2, 1, 2, 3}, 0), StatusCode::kInvalidArgument, "theta shape [1,2,3] does not match size (expected [2,2,3])"));      // batch differs
  EXPECT_TRUE(Refused(Grid(theta, {1, 1, 2, 3, 4}, 0), StatusCode::kInvalidArgument, "theta shape [1,2,3] does not match size (expected [1,3,4])"));   // 3-D size with a 2-D theta
  EXPECT_TRUE(Refused(Grid(theta, {1, 1, -2, 3}, 0), StatusCode::kInvalidArgument, "size has a negative value -2"));     // negative size
}

}  // namespace
}  // namespace onnxflow
