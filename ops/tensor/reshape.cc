// Reshape, Flatten, Squeeze, Unsqueeze: ops that only change the shape. The output shares the
// input's storage (tensors are immutable once produced), so none of them copies a byte.
#include <algorithm>
#include <string>
#include <vector>

#include "ops/framework/shape.h"
#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

// The output shape of Reshape: 0 copies the input dim (unless allowzero), -1 is inferred.
Result<Shape> ReshapeTarget(const Shape& input, const std::vector<int64_t>& requested, bool allowzero) {
  Shape out(requested.size());
  int64_t infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t d = requested[i];
    if (d == -1) {
      if (infer_at >= 0) return InvalidArgument("shape " + ShapeToString(requested) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      out[i] = 1;
      continue;
    }
    if (d == 0 && !allowzero) {
      if (i >= input.size()) {
        return InvalidArgument("shape " + ShapeToString(requested) + " copies dim " + std::to_string(i) +
                               " (0) but the input " + ShapeToString(input) + " has rank " +
                               std::to_string(input.size()));
      }
      d = input[i];
    }
    if (d < 0) return InvalidArgument("shape " + ShapeToString(requested) + " has a negative dim " + std::to_string(d));
    out[i] = d;
    if (d != 0 && known > INT64_MAX / d) return InvalidArgument("shape " + ShapeToString(requested) + " is too large");
    known *= d;
  }
  if (allowzero && infer_at >= 0 && std::find(requested.begin(), requested.end(), 0) != requested.end()) {
    return InvalidArgument("shape " + ShapeToString(requested) + " has both 0 and -1 with allowzero=1");
  }
  ONNXFLOW_ASSIGN_OR_RETURN(const int64_t total, CheckedElementCount(input));
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) {
      return InvalidArgument("cannot reshape input " + ShapeToString(input) + " to " + ShapeToString(requested));
    }
    out[infer_at] = total / known;
  } else if (known != total) {
    return InvalidArgument("cannot reshape input " + ShapeToString(input) + " (" + std::to_string(total) +
                           " elements) to " + ShapeToString(out) + " (" + std::to_string(known) + " elements)");
  }
  return out;
}

// Reshape-1 takes the shape as an attribute; Reshape-5 and later as input 1; 14 adds allowzero.
class ReshapeKernel : public OpKernel {
 public:
  explicit ReshapeKernel(const KernelInfo& info)
      : shape_from_attribute_(info.opset() < 5),
        shape_attribute_(info.GetInts("shape")),
        allowzero_(info.GetInt("allowzero", 0) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    std::vector<int64_t> requested = shape_attribute_;
    if (!shape_from_attribute_) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* shape, ctx.RequireTensor(1));
      ONNXFLOW_ASSIGN_OR_RETURN(requested, ReadInt64s(*shape, "input 'shape'"));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Shape out, ReshapeTarget(data->shape(), requested, allowzero_));
    ctx.SetOutput(0, Value(data->Reshaped(std::move(out))));
    return Status::Ok();
  }

 private:
  bool shape_from_attribute_;
  std::vector<int64_t> shape_attribute_;
  bool allowzero_;
};

class FlattenKernel : public OpKernel {
 public:
  explicit FlattenKernel(const KernelInfo& info) : axis_(info.GetInt("axis", 1)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    const int64_t rank = data->rank();
    if (axis_ < -rank || axis_ > rank) {
      return InvalidArgument("axis " + std::to_string(axis_) + " is out of range for input of rank " +
                             std::to_string(rank));
    }
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    Shape out = {SizeToDim(data->shape(), axis), SizeFromDim(data->shape(), axis)};
    ctx.SetOutput(0, Value(data->Reshaped(std::move(out))));
    return Status::Ok();
  }

 private:
  int64_t axis_;
};

// Squeeze-1/11 take axes as an attribute, Squeeze-13 and later as an optional input.
class SqueezeKernel : public OpKernel {
 public:
  explicit SqueezeKernel(const KernelInfo& info)
      : axes_from_attribute_(info.opset() < 13),
        has_axes_attribute_(info.has_attribute("axes")),
        axes_attribute_(info.GetInts("axes")) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    const Shape& in = data->shape();
    const int64_t rank = data->rank();
    bool have_axes = has_axes_attribute_;
    std::vector<int64_t> axes = axes_attribute_;
    if (!axes_from_attribute_) {
      const Tensor* axes_tensor = ctx.input_tensor(1);
      have_axes = axes_tensor != nullptr && axes_tensor->size() > 0;  // empty axes: squeeze all 1s
      if (have_axes) {
        ONNXFLOW_ASSIGN_OR_RETURN(axes, ReadInt64s(*axes_tensor, "input 'axes'"));
      }
    }
    std::vector<bool> drop(rank, false);
    if (have_axes) {
      ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(axes, rank, "Squeeze axes"));
      for (int64_t a : normalized) {
        if (in[a] != 1) {
          return InvalidArgument("cannot squeeze axis " + std::to_string(a) + " of input " + ShapeToString(in) +
                                 ": its size is not 1");
        }
        drop[a] = true;
      }
    } else {
      for (int64_t a = 0; a < rank; ++a) drop[a] = in[a] == 1;
    }
    Shape out;
    for (int64_t a = 0; a < rank; ++a) {
      if (!drop[a]) out.push_back(in[a]);
    }
    ctx.SetOutput(0, Value(data->Reshaped(std::move(out))));
    return Status::Ok();
  }

 private:
  bool axes_from_attribute_;
  bool has_axes_attribute_;
  std::vector<int64_t> axes_attribute_;
};

// Unsqueeze-1/11 take axes as an attribute, Unsqueeze-13 and later as a required input. Axes
// refer to the OUTPUT's dims.
class UnsqueezeKernel : public OpKernel {
 public:
  explicit UnsqueezeKernel(const KernelInfo& info)
      : axes_from_attribute_(info.opset() < 13), axes_attribute_(info.GetInts("axes")) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    std::vector<int64_t> axes = axes_attribute_;
    if (!axes_from_attribute_) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* axes_tensor, ctx.RequireTensor(1));
      ONNXFLOW_ASSIGN_OR_RETURN(axes, ReadInt64s(*axes_tensor, "input 'axes'"));
    }
    const int64_t out_rank = data->rank() + static_cast<int64_t>(axes.size());
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(axes, out_rank, "Unsqueeze axes"));
    std::vector<bool> inserted(out_rank, false);
    for (int64_t a : normalized) inserted[a] = true;
    Shape out(out_rank);
    size_t next = 0;
    for (int64_t a = 0; a < out_rank; ++a) out[a] = inserted[a] ? 1 : data->shape()[next++];
    ctx.SetOutput(0, Value(data->Reshaped(std::move(out))));
    return Status::Ok();
  }

 private:
  bool axes_from_attribute_;
  std::vector<int64_t> axes_attribute_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterReshapeKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Reshape", 1, kOpenEnded, Make<ReshapeKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Flatten", 1, kOpenEnded, Make<FlattenKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Squeeze", 1, kOpenEnded, Make<SqueezeKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Unsqueeze", 1, kOpenEnded, Make<UnsqueezeKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
