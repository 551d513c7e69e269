// NonMaxSuppression (opsets 10, 11): per batch and class, greedily keeps the highest-scoring boxes
// whose IoU with every box already kept is at most iou_threshold, up to
// max_output_boxes_per_class, after dropping boxes with score <= score_threshold (when given).
// Output rows are [batch, class, box], batch-major, then class, then selection order. Ties in
// score go to the lower box index. Box arithmetic is in float, as the reference does it, so IoUs
// exactly at the threshold come out the same.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/image/register.h"

namespace onnxflow {
namespace image {
namespace {

struct Box {
  float x_min, y_min, x_max, y_max;
};

Box Corners(const float* b, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    const float hw = b[2] / 2, hh = b[3] / 2;
    return {b[0] - hw, b[1] - hh, b[0] + hw, b[1] + hh};
  }
  // [y1, x1, y2, x2], any diagonal pair of corners
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2])};
}

// True when the IoU of a and b is strictly above the threshold.
bool Suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float uni = area_a + area_b - inter;
  if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

Result<float> OptionalScalar(const KernelContext& ctx, int i, const char* name, float fallback, bool* given) {
  *given = false;
  const Tensor* t = ctx.input_tensor(i);
  if (t == nullptr || t->size() == 0) return fallback;
  if (t->dtype() != DataType::kFloat) return InvalidArgument(std::string(name) + " must be float");
  *given = true;
  return t->data<float>()[0];
}

class NonMaxSuppressionKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const int64_t c = info.GetInt("center_point_box", 0);
    if (c != 0 && c != 1) return InvalidArgument("center_point_box must be 0 or 1, got " + std::to_string(c));
    auto k = std::make_unique<NonMaxSuppressionKernel>();
    k->center_point_ = c == 1;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* boxes, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scores, ctx.RequireTensor(1));
    if (boxes->dtype() != DataType::kFloat || scores->dtype() != DataType::kFloat) {
      return InvalidArgument("boxes and scores must be float");
    }
    if (boxes->rank() != 3 || boxes->dim(2) != 4) {
      return InvalidArgument("boxes must be [num_batches, spatial_dimension, 4], got " + ShapeToString(boxes->shape()));
    }
    if (scores->rank() != 3 || scores->dim(0) != boxes->dim(0) || scores->dim(2) != boxes->dim(1)) {
      return InvalidArgument("scores shape " + ShapeToString(scores->shape()) + " does not match boxes " +
                             ShapeToString(boxes->shape()) + " (expected [num_batches, num_classes, spatial_dimension])");
    }
    int64_t max_per_class = 0;
    if (const Tensor* m = ctx.input_tensor(2); m != nullptr && m->size() > 0) {
      if (m->dtype() != DataType::kInt64) return InvalidArgument("max_output_boxes_per_class must be int64");
      max_per_class = std::max<int64_t>(m->data<int64_t>()[0], 0);
    }
    bool has_iou = false, has_score = false;
    ONNXFLOW_ASSIGN_OR_RETURN(const float iou_threshold, OptionalScalar(ctx, 3, "iou_threshold", 0.0f, &has_iou));
    ONNXFLOW_ASSIGN_OR_RETURN(const float score_threshold,
                              OptionalScalar(ctx, 4, "score_threshold", 0.0f, &has_score));
    if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f)) {
      return InvalidArgument("iou_threshold must be in [0, 1], got " + std::to_string(iou_threshold));
    }

    const int64_t batches = boxes->dim(0), classes = scores->dim(1), count = boxes->dim(1);
    std::vector<std::vector<int64_t>> kept(static_cast<size_t>(batches * classes));
    if (max_per_class > 0 && count > 0) {
      const float* box_data = boxes->data<float>();
      const float* score_data = scores->data<float>();
      ParallelFor(ctx, batches * classes, count * 8, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> order;
        std::vector<Box> chosen;
        for (int64_t bc = begin; bc < end; ++bc) {
          const int64_t b = bc / classes;
          const float* s = score_data + bc * count;
          order.clear();
          for (int64_t i = 0; i < count; ++i) {
            if (!has_score || s[i] > score_threshold) order.push_back(i);
          }
          std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) { return s[l] > s[r]; });
          chosen.clear();
          auto& out = kept[bc];
          for (int64_t i : order) {
            if (static_cast<int64_t>(out.size()) >= max_per_class) break;
            const Box box = Corners(box_data + (b * count + i) * 4, center_point_);
            bool keep = true;
            for (const Box& c : chosen) {
              if (Suppresses(box, c, iou_threshold)) {
                keep = false;
                break;
              }
            }
            if (keep) {
              chosen.push_back(box);
              out.push_back(i);
            }
          }
        }
      });
    }
    int64_t total = 0;
    for (const auto& k : kept) total += static_cast<int64_t>(k.size());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kInt64, {total, 3}));
    int64_t* o = y->mutable_data<int64_t>();
    for (int64_t bc = 0; bc < batches * classes; ++bc) {
      for (int64_t i : kept[bc]) {
        *o++ = bc / classes;
        *o++ = bc % classes;
        *o++ = i;
      }
    }
    return Status::Ok();
  }

 private:
  bool center_point_ = false;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterNonMaxSuppression(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "NonMaxSuppression", 10, kOpenEnded,
                           Make<NonMaxSuppressionKernel>());
}

}  // namespace image
}  // namespace onnxflow
