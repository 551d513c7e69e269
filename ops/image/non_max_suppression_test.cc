#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/image/register.h"

namespace onnxflow {
namespace {

Result<Tensor> Nms(const Tensor& boxes, const Tensor& scores, int64_t max_out, float iou, float score,
                   int64_t center = 0) {
  OpTest t("NonMaxSuppression", 11);
  t.Attr("center_point_box", center);
  t.Input(boxes).Input(scores).Input(Tensor::Scalar<int64_t>(max_out)).Input(Tensor::Scalar<float>(iou));
  t.Input(Tensor::Scalar<float>(score));
  auto out = t.Run(RegisterImageKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

// Six boxes [y1, x1, y2, x2]: three stacked near the origin, three near y = 10, one far away.
const Tensor kBoxes = Tensor::FromVector<float>(
    {1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
const Tensor kScores = Tensor::FromVector<float>({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});

TEST(NonMaxSuppression, SuppressesOverlapsInScoreOrder) {
  auto y = Nms(kBoxes, kScores, 3, 0.5f, 0.0f);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({3, 3}, {0, 0, 3, 0, 0, 0, 0, 0, 5}), *y));
}

TEST(NonMaxSuppression, ScoreThresholdAndLimit) {
  auto y = Nms(kBoxes, kScores, 10, 0.5f, 0.4f);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2, 3}, {0, 0, 3, 0, 0, 0}), *y));
  auto one = Nms(kBoxes, kScores, 1, 0.5f, 0.0f);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({1, 3}, {0, 0, 3}), *one));
  auto none = Nms(kBoxes, kScores, 0, 0.5f, 0.0f);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->shape(), (Shape{0, 3}));
}

TEST(NonMaxSuppression, IouExactlyAtTheThresholdIsKept) {
  // Two unit squares overlapping by half: IoU = 0.5 / 1.5 = 1/3 exactly representable? Use 0.5:
  // [0,0,1,1] and [0,0,1,0.5]: intersection 0.5, union 1 -> IoU 0.5.
  const Tensor boxes = Tensor::FromVector<float>({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 0.5f});
  const Tensor scores = Tensor::FromVector<float>({1, 1, 2}, {0.9f, 0.8f});
  auto kept = Nms(boxes, scores, 5, 0.5f, 0.0f);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->dim(0), 2);
  auto dropped = Nms(boxes, scores, 5, 0.49f, 0.0f);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(dropped->dim(0), 1);
}

TEST(NonMaxSuppression, CenterPointFormatAndTies) {
  // [x_c, y_c, w, h]; equal scores keep the lower index first.
  const Tensor boxes = Tensor::FromVector<float>({1, 3, 4}, {0.5f, 0.5f, 1, 1, 5, 5, 1, 1, 0.5f, 0.6f, 1, 1});
  const Tensor scores = Tensor::FromVector<float>({1, 1, 3}, {0.5f, 0.5f, 0.5f});
  auto y = Nms(boxes, scores, 5, 0.5f, 0.0f, 1);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2, 3}, {0, 0, 0, 0, 0, 1}), *y));
}

TEST(NonMaxSuppression, BadInputsAreErrors) {
  EXPECT_TRUE(Refused(Nms(kBoxes, Tensor::FromVector<float>({1, 1, 5}, std::vector<float>(5)), 3, 0.5f, 0), StatusCode::kInvalidArgument, "scores shape [1,1,5] does not match boxes [1,6,4] (expected [num_batches, num_classes,"));
  EXPECT_TRUE(Refused(Nms(kBoxes, kScores, 3, 1.5f, 0), StatusCode::kInvalidArgument, "iou_threshold must be in [0, 1], got 1.500000"));
  OpTest t("NonMaxSuppression", 11);
  t.Attr("center_point_box", int64_t{2}).Input(kBoxes).Input(kScores);
  EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "center_point_box must be 0 or 1, got 2"));
}

}  // namespace
}  // namespace onnxflow
