// com.microsoft UnfoldTensor (version 1): the windows of `size` elements, `step` apart, along axis
// `dim` (default -1), as a new last axis: X [d0 .. dn] -> Y [d0 .. (d_dim - size) / step + 1 .. dn,
// size], torch.Tensor.unfold. Every type ONNX Runtime's CPU provider registers for it (its
// AllTensorTypes: the numeric types, bool and string). ONNX Runtime 1.30 registers them all but
// computes only float, double, int32 and int64 (the others fail at run); here every registered
// type runs, as the element is only moved. As ONNX Runtime: size must be positive (its shape
// inference refuses 0), step positive, both within int32, and size at most the axis's length.
#include <climits>
#include <cstring>
#include <string>

#include "ops/framework/dispatch.h"
#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

class UnfoldTensorKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.input_count() != 1) {
      return InvalidArgument("UnfoldTensor: takes 1 input, got " + std::to_string(info.input_count()));
    }
    auto k = std::make_unique<UnfoldTensorKernel>();
    k->dim_ = info.GetInt("dim", -1);
    k->step_ = info.GetInt("step", 1);
    if (!info.has_attribute("size")) return InvalidArgument("UnfoldTensor: attribute 'size' is required");
    k->size_ = info.GetInt("size", 0);
    // ONNX Runtime holds all three as int (SafeInt<int>).
    if (k->dim_ < INT_MIN || k->dim_ > INT_MAX) {
      return InvalidArgument("UnfoldTensor: attribute 'dim' " + std::to_string(k->dim_) + " is outside int32");
    }
    if (k->step_ < 1 || k->step_ > INT_MAX) {
      return InvalidArgument("UnfoldTensor: attribute 'step' must be in [1, 2^31), got " + std::to_string(k->step_));
    }
    if (k->size_ < 1 || k->size_ > INT_MAX) {
      return InvalidArgument("UnfoldTensor: attribute 'size' must be in [1, 2^31), got " + std::to_string(k->size_));
    }
    const DataType t = info.input_type(0);
    if (t != DataType::kUndefined && !Supported(t)) {
      return InvalidArgument(std::string("UnfoldTensor: input 'input' of type ") + DataTypeName(t) +
                             " is not one ONNX Runtime registers (numeric, bool or string)");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (!Supported(x->dtype())) {
      return InvalidArgument(std::string("UnfoldTensor: input 'input' of type ") + DataTypeName(x->dtype()) +
                             " is not one ONNX Runtime registers (numeric, bool or string)");
    }
    const int64_t rank = x->rank();
    if (dim_ < -rank || dim_ >= rank) {
      return InvalidArgument("UnfoldTensor: attribute 'dim' " + std::to_string(dim_) + " is outside the rank " +
                             std::to_string(rank) + " of input 'input' " + ShapeToString(x->shape()));
    }
    const int64_t axis = dim_ < 0 ? dim_ + rank : dim_;
    const Shape& in = x->shape();
    const int64_t length = in[axis];
    if (length < size_) {
      return InvalidArgument("UnfoldTensor: attribute 'size' " + std::to_string(size_) + " is longer than axis " +
                             std::to_string(axis) + " of input 'input' " + ShapeToString(in));
    }
    const int64_t windows = (length - size_) / step_ + 1;
    Shape out = in;
    out[axis] = windows;
    out.push_back(size_);
    // Windows overlap when step < size: the output can be up to `size` times the input.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), out));
    if (y->size() == 0) return Status::Ok();
    const int64_t outer = SizeToDim(in, axis), inner = SizeFromDim(in, axis + 1);
    if (x->dtype() == DataType::kString) {
      Copy(x->data<std::string>(), y->mutable_data<std::string>(), outer, length, inner, windows, ctx);
      return Status::Ok();
    }
    // Every other registered type is moved as bytes of its width.
    switch (ElementSize(x->dtype())) {
      case 1:
        Copy(x->data<uint8_t>(), y->mutable_data<uint8_t>(), outer, length, inner, windows, ctx);
        break;
      case 2:
        Copy(x->data<uint16_t>(), y->mutable_data<uint16_t>(), outer, length, inner, windows, ctx);
        break;
      case 4:
        Copy(x->data<uint32_t>(), y->mutable_data<uint32_t>(), outer, length, inner, windows, ctx);
        break;
      case 8:
        Copy(x->data<uint64_t>(), y->mutable_data<uint64_t>(), outer, length, inner, windows, ctx);
        break;
      default:
        return Internal("UnfoldTensor: unexpected element size");
    }
    return Status::Ok();
  }

 private:
  static bool Supported(DataType t) {
    return IsOneOf<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                   uint64_t, bool, std::string>(t);
  }

  // Y[o, w, i, j] = X[o, w * step + j, i]: one task per (outer, window) row of the output.
  template <typename T>
  void Copy(const T* x, T* y, int64_t outer, int64_t length, int64_t inner, int64_t windows,
            const KernelContext& ctx) const {
    const int64_t size = size_, step = step_;
    ParallelFor(ctx.threads(), outer * windows, inner * size, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t o = r / windows, w = r % windows;
        const T* src = x + (o * length + w * step) * inner;
        T* dst = y + r * inner * size;
        for (int64_t i = 0; i < inner; ++i) {
          for (int64_t j = 0; j < size; ++j) dst[i * size + j] = src[j * inner + i];
        }
      }
    });
  }

  int64_t dim_ = -1, size_ = 1, step_ = 1;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterUnfoldTensor(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "UnfoldTensor", 1, kOpenEnded, Make<UnfoldTensorKernel>());
}

}  // namespace onnxflow
