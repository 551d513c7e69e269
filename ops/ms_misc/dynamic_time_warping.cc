// com.microsoft DynamicTimeWarping (version 1): the alignment path through a cost matrix, what
// Whisper's word timestamps read off its cross-attention. Input float [rows, cols] (or [1, rows,
// cols]); output int32 [2, L]: the path's row indices, then its column indices, from (0, 0) to
// (rows - 1, cols - 1) wherever the trace reaches row or column 0 first.
//
// As ONNX Runtime 1.30's CPU kernel: the accumulated cost D[i][j] = min-step + input[i-1][j-1],
// filled column by column, with its tie rule: the diagonal wins only when strictly smaller than
// both others, up only when strictly smaller than both others, else left, even where left is the
// larger (diagonal and up tied below it); NaNs go left. The cost is kept two columns at a time
// (the same sums in the same order); the trace, one byte a cell, is checked against the run's
// one-tensor limit before it is made.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

enum Step : uint8_t { kDiagonal = 0, kUp = 1, kLeft = 2 };

class DynamicTimeWarpingKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.input_count() != 1) {
      return InvalidArgument("DynamicTimeWarping: takes 1 input, got " + std::to_string(info.input_count()));
    }
    const DataType t = info.input_type(0);
    if (t != DataType::kUndefined && t != DataType::kFloat) {
      return InvalidArgument(std::string("DynamicTimeWarping: input 'input' must be float, got ") + DataTypeName(t));
    }
    return std::unique_ptr<OpKernel>(new DynamicTimeWarpingKernel());
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat) {
      return InvalidArgument(std::string("DynamicTimeWarping: input 'input' must be float, got ") +
                             DataTypeName(x->dtype()));
    }
    if (!(x->rank() == 2 || (x->rank() == 3 && x->dim(0) == 1))) {
      return InvalidArgument("DynamicTimeWarping: input 'input' must be [rows, cols] or [1, rows, cols], got " +
                             ShapeToString(x->shape()));
    }
    const int64_t rows = x->dim(x->rank() - 2), cols = x->dim(x->rank() - 1);
    // ONNX Runtime walks the path with int indices; the output is int32.
    if (rows > std::numeric_limits<int32_t>::max() || cols > std::numeric_limits<int32_t>::max()) {
      return InvalidArgument("DynamicTimeWarping: input 'input' " + ShapeToString(x->shape()) +
                             " has more rows or columns than int32 indices reach");
    }
    ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({rows, cols}, 1, "DynamicTimeWarping: the trace matrix"));
    const float* cost = x->data<float>();
    std::vector<uint8_t> trace(static_cast<size_t>(rows * cols));
    const float inf = std::numeric_limits<float>::infinity();
    // Column j - 1 and column j of the accumulated cost, row 0 included.
    std::vector<float> prev(static_cast<size_t>(rows + 1), inf), cur(static_cast<size_t>(rows + 1), inf);
    prev[0] = 0.0f;
    for (int64_t j = 1; j <= cols; ++j) {
      cur[0] = inf;
      for (int64_t i = 1; i <= rows; ++i) {
        const float c0 = prev[i - 1], c1 = cur[i - 1], c2 = prev[i];
        float best;
        Step step;
        if (c0 < c1 && c0 < c2) {
          best = c0, step = kDiagonal;
        } else if (c1 < c0 && c1 < c2) {
          best = c1, step = kUp;
        } else {
          best = c2, step = kLeft;
        }
        cur[i] = best + cost[(i - 1) * cols + (j - 1)];
        trace[(i - 1) * cols + (j - 1)] = step;
      }
      std::swap(prev, cur);
    }
    // Back from (rows, cols) until a row or column 0 is reached.
    std::vector<int32_t> path_i, path_j;
    for (int64_t i = rows, j = cols; i > 0 && j > 0;) {
      path_i.push_back(static_cast<int32_t>(i - 1));
      path_j.push_back(static_cast<int32_t>(j - 1));
      switch (trace[(i - 1) * cols + (j - 1)]) {
        case kDiagonal:
          --i, --j;
          break;
        case kUp:
          --i;
          break;
        default:
          --j;
          break;
      }
    }
    const int64_t length = static_cast<int64_t>(path_i.size());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kInt32, {2, length}));
    int32_t* out = y->mutable_data<int32_t>();
    for (int64_t k = 0; k < length; ++k) {
      out[k] = path_i[length - 1 - k];
      out[length + k] = path_j[length - 1 - k];
    }
    return Status::Ok();
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDynamicTimeWarping(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "DynamicTimeWarping", 1, kOpenEnded, Make<DynamicTimeWarpingKernel>());
}

}  // namespace onnxflow
