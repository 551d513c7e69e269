// Pad (constant / reflect / edge / wrap, negative pads crop) and CenterCropPad, which is a
// constant pad-or-crop centred on each axis.
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

Result<PadMode> ParsePadMode(const std::string& mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return PadMode::kWrap;
  return InvalidArgument("unknown pad mode '" + mode + "'");
}

// For one axis, the input index each output index reads (-1: the constant). Negative pads crop
// first; the other modes then pad the cropped range [lo, lo + n).
Result<std::vector<int64_t>> AxisMap(int64_t dim, int64_t pad_begin, int64_t pad_end, PadMode mode, int64_t axis) {
  const int64_t lo = std::max<int64_t>(0, -pad_begin);
  const int64_t n = dim - lo - std::max<int64_t>(0, -pad_end);
  const int64_t before = std::max<int64_t>(0, pad_begin);
  const int64_t out_dim = dim + pad_begin + pad_end;
  if (out_dim < 0 || n < 0) {
    return InvalidArgument("pads " + std::to_string(pad_begin) + ", " + std::to_string(pad_end) + " on axis " +
                           std::to_string(axis) + " of size " + std::to_string(dim) + " leave a negative size");
  }
  if (mode != PadMode::kConstant && n == 0 && out_dim > 0) {
    return InvalidArgument("cannot pad axis " + std::to_string(axis) + " of size 0 in a non-constant mode");
  }
  std::vector<int64_t> map(static_cast<size_t>(out_dim));
  for (int64_t o = 0; o < out_dim; ++o) {
    int64_t i = o - before;  // index into the cropped range
    if (i < 0 || i >= n) {
      switch (mode) {
        case PadMode::kConstant:
          i = -1;
          break;
        case PadMode::kEdge:
          i = i < 0 ? 0 : n - 1;
          break;
        case PadMode::kWrap:
          i = ((i % n) + n) % n;
          break;
        case PadMode::kReflect: {
          if (n == 1) {
            i = 0;
            break;
          }
          const int64_t period = 2 * (n - 1);
          i = ((i % period) + period) % period;
          if (i >= n) i = period - i;
          break;
        }
      }
    }
    map[o] = i < 0 ? -1 : lo + i;
  }
  return map;
}

// out = x padded by (begin[d], end[d]) per axis; `fill` is a one-element tensor of x's dtype.
Status PadTensor(KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& begin,
                 const std::vector<int64_t>& end, PadMode mode, const Tensor& fill) {
  const int64_t rank = x.rank();
  constexpr int64_t kMaxPad = int64_t{1} << 60;  // keeps dim + pads from overflowing int64
  Shape out_shape(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (begin[d] > kMaxPad || begin[d] < -kMaxPad || end[d] > kMaxPad || end[d] < -kMaxPad) {
      return InvalidArgument("pads on axis " + std::to_string(d) + " are out of range");
    }
    out_shape[d] = x.dim(d) + begin[d] + end[d];
    if (out_shape[d] < 0) {
      return InvalidArgument("pads " + std::to_string(begin[d]) + ", " + std::to_string(end[d]) + " on axis " +
                             std::to_string(d) + " of size " + std::to_string(x.dim(d)) + " leave a negative size");
    }
  }
  // Allocating first checks the size against the session's limits before any index map is built.
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, x.dtype(), out_shape));
  if (out->size() == 0) return Status::Ok();
  if (rank == 0) {
    return DispatchBySize(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      out->mutable_data<T>()[0] = x.data<T>()[0];
      return Status::Ok();
    });
  }
  std::vector<std::vector<int64_t>> maps(rank);
  for (int64_t d = 0; d < rank; ++d) {
    ONNXFLOW_ASSIGN_OR_RETURN(maps[d], AxisMap(x.dim(d), begin[d], end[d], mode, d));
  }
  const std::vector<int64_t> in_strides = Strides(x.shape());
  const int64_t cols = out_shape[rank - 1];
  const int64_t rows = out->size() / cols;
  const std::vector<int64_t>& last = maps[rank - 1];
  // Output columns [mid_begin, mid_end) copy the (cropped) input row contiguously.
  const int64_t mid_begin = std::min(cols, std::max<int64_t>(0, begin[rank - 1]));
  const int64_t mid_end = std::min(
      cols, mid_begin + x.dim(rank - 1) - std::max<int64_t>(0, -begin[rank - 1]) - std::max<int64_t>(0, -end[rank - 1]));
  return DispatchBySize(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = out->mutable_data<T>();
    const T value = fill.data<T>()[0];
    ParallelFor(ctx, rows, cols, [&](int64_t b, int64_t e) {
      std::vector<int64_t> idx(rank - 1);
      for (int64_t row = b; row < e; ++row) {
        int64_t rest = row;
        int64_t offset = 0;
        bool constant_row = false;
        for (int64_t d = rank - 2; d >= 0; --d) {
          const int64_t o = rest % out_shape[d];
          rest /= out_shape[d];
          const int64_t i = maps[d][o];
          if (i < 0) constant_row = true;
          offset += i * in_strides[d];
        }
        T* out_row = dst + row * cols;
        if (constant_row) {
          std::fill_n(out_row, cols, value);
          continue;
        }
        const T* in_row = src + offset;
        for (int64_t j = 0; j < mid_begin; ++j) out_row[j] = last[j] < 0 ? value : in_row[last[j]];
        if (mid_end > mid_begin) std::copy_n(in_row + last[mid_begin], mid_end - mid_begin, out_row + mid_begin);
        for (int64_t j = mid_end; j < cols; ++j) out_row[j] = last[j] < 0 ? value : in_row[last[j]];
      }
    });
    return Status::Ok();
  });
}

// A one-element tensor of `dtype` holding `v` (Pad before opset 11 gives the value as a float).
Result<Tensor> ScalarOfType(DataType dtype, double v) {
  Tensor t(dtype, {});
  if (dtype == DataType::kString) return t;
  Status s = DispatchType<ONNXFLOW_NUMERIC_TYPES, bool>(dtype, [&](auto tag) {
    using T = decltype(tag);
    t.mutable_data<T>()[0] = FromCompute<T>(static_cast<ComputeType<T>>(v));
    return Status::Ok();
  });
  if (!s.ok()) {
    if (v != 0) return s;
    return Tensor(dtype, {});  // zero is all-zero bits for every other type
  }
  return t;
}

// Pad-1 (paddings attribute), Pad-2 (pads attribute), Pad-11+ (pads/constant_value inputs),
// Pad-18+ (axes input), Pad-19+ (wrap mode).
class PadKernel : public OpKernel {
 public:
  PadKernel(int opset, PadMode mode, std::vector<int64_t> pads, float value)
      : opset_(opset), mode_(mode), pads_attribute_(std::move(pads)), value_attribute_(value) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(PadMode mode, ParsePadMode(info.GetString("mode", "constant")));
    std::vector<int64_t> pads = info.GetInts(info.opset() < 2 ? "paddings" : "pads");
    return std::unique_ptr<OpKernel>(new PadKernel(info.opset(), mode, std::move(pads), info.GetFloat("value", 0.0f)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const int64_t rank = x->rank();
    std::vector<int64_t> pads = pads_attribute_;
    Tensor fill;
    std::vector<int64_t> axes;
    if (opset_ < 11) {
      ONNXFLOW_ASSIGN_OR_RETURN(fill, ScalarOfType(x->dtype(), value_attribute_));
    } else {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* pads_t, ctx.RequireTensor(1));
      ONNXFLOW_ASSIGN_OR_RETURN(pads, ReadInt64s(*pads_t, "input 'pads'"));
      const Tensor* value_t = ctx.input_tensor(2);
      if (value_t != nullptr && value_t->size() > 0) {
        if (value_t->dtype() != x->dtype()) return InvalidArgument("input 'constant_value' must have the data's type");
        fill = *value_t;
      } else {
        fill = Tensor(x->dtype(), {});
      }
      if (opset_ >= 18) {
        ONNXFLOW_ASSIGN_OR_RETURN(axes, ReadOptionalInt64s(ctx, 3, "input 'axes'", {}));
      }
    }
    std::vector<int64_t> begin(rank, 0), end(rank, 0);
    if (axes.empty()) {
      if (static_cast<int64_t>(pads.size()) != 2 * rank) {
        return InvalidArgument("pads has " + std::to_string(pads.size()) + " entries, expected 2 * rank = " +
                               std::to_string(2 * rank));
      }
      for (int64_t d = 0; d < rank; ++d) {
        begin[d] = pads[d];
        end[d] = pads[rank + d];
      }
    } else {
      ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(axes, rank, "Pad axes"));
      const size_t n = normalized.size();
      if (pads.size() != 2 * n) {
        return InvalidArgument("pads has " + std::to_string(pads.size()) + " entries, expected 2 * " +
                               std::to_string(n) + " for the given axes");
      }
      for (size_t i = 0; i < n; ++i) {
        begin[normalized[i]] = pads[i];
        end[normalized[i]] = pads[n + i];
      }
    }
    return PadTensor(ctx, *x, begin, end, mode_, fill);
  }

 private:
  int opset_;
  PadMode mode_;
  std::vector<int64_t> pads_attribute_;
  float value_attribute_;
};

// Crops or zero-pads the chosen axes to `shape`, keeping the centre (the extra element of an odd
// difference goes to the end).
class CenterCropPadKernel : public OpKernel {
 public:
  explicit CenterCropPadKernel(const KernelInfo& info)
      : has_axes_(info.has_attribute("axes")), axes_(info.GetInts("axes")) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* shape_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadInt64s(*shape_t, "input 'shape'"));
    const int64_t rank = x->rank();
    std::vector<int64_t> axes = axes_;
    if (!has_axes_) {
      axes.resize(rank);
      for (int64_t d = 0; d < rank; ++d) axes[d] = d;
    }
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(axes, rank, "CenterCropPad axes"));
    if (shape.size() != normalized.size()) {
      return InvalidArgument("input 'shape' has " + std::to_string(shape.size()) + " entries for " +
                             std::to_string(normalized.size()) + " axes");
    }
    std::vector<int64_t> begin(rank, 0), end(rank, 0);
    for (size_t i = 0; i < normalized.size(); ++i) {
      const int64_t a = normalized[i];
      const int64_t dim = x->dim(a);
      const int64_t want = shape[i];
      if (want < 0) return InvalidArgument("input 'shape' has a negative size " + std::to_string(want));
      begin[a] = want >= dim ? (want - dim) / 2 : -((dim - want) / 2);
      end[a] = want - dim - begin[a];
    }
    return PadTensor(ctx, *x, begin, end, PadMode::kConstant, Tensor(x->dtype(), {}));
  }

 private:
  bool has_axes_;
  std::vector<int64_t> axes_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterPadKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Pad", 1, kOpenEnded, Make<PadKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "CenterCropPad", 18, kOpenEnded, Make<CenterCropPadKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
