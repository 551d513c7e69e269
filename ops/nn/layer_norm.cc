// LayerNormalization (17) and RMSNormalization (23).
//
// Both normalize each row x[i0, ..., i(axis-1), :] (everything from `axis` on, default -1):
//   LayerNormalization: y = (x - mean) / sqrt(var + epsilon) * scale + B (B optional), with the
//     optional outputs Mean and InvStdDev of shape x.shape[:axis] + [1, ...];
//   RMSNormalization:   y = x / sqrt(mean(x^2) + epsilon) * scale.
// scale and B are broadcast to the row shape x.shape[axis:]. Statistics are computed in float
// (stash_type 1, the default) or double for double input; the rows run through the SIMD kernels.
// Types as the spec constrains them: Mean and InvStdDev are stash_type's (float or bfloat16);
// RMSNormalization's Y is scale's type (V), which may differ from X's (T).
#include "ops/nn/register.h"

#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/float_tensor.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/norm_util.h"

namespace onnxflow {
namespace {

// `param` broadcast to `row_shape`, flattened.
template <typename C>
Result<std::vector<C>> ExpandToRow(const Tensor& param, const std::string& name, const Shape& row_shape) {
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<C> v, ParamVector<C>(param, name));
  const int64_t n = ElementCount(row_shape);
  if (static_cast<int64_t>(v.size()) == n) return v;
  auto shape = BroadcastShapes(param.shape(), row_shape);
  if (!shape.ok() || *shape != row_shape) {
    return InvalidArgument("input '" + name + "' of shape " + ShapeToString(param.shape()) +
                           " does not broadcast to the normalized shape " + ShapeToString(row_shape));
  }
  const std::vector<int64_t> strides = BroadcastStrides(param.shape(), row_shape);
  std::vector<C> out(n);
  const int64_t rank = static_cast<int64_t>(row_shape.size());
  std::vector<int64_t> coord(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) off += coord[d] * strides[d];
    out[i] = v[off];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coord[d] < row_shape[d]) break;
      coord[d] = 0;
    }
  }
  return out;
}

class RowNormKernel : public OpKernel {
 public:
  RowNormKernel(const KernelInfo& info, bool rms)
      : rms_(rms),
        axis_(info.GetInt("axis", -1)),
        epsilon_(info.GetFloat("epsilon", 1e-5f)),
        stat_type_(info.GetInt("stash_type", 1) == static_cast<int64_t>(DataType::kBFloat16) ? DataType::kBFloat16
                                                                                         : DataType::kFloat) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    return DispatchNormType(x->dtype(), [&](auto tag) { return Run<decltype(tag)>(ctx, *x); });
  }

 private:
  template <typename T>
  Status Run(KernelContext& ctx, const Tensor& x) const {
    using C = NormCompute<T>;
    const int64_t rank = x.rank();
    if (rank == 0) return InvalidArgument("input 'X' must have rank >= 1");
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank));
    const Shape row_shape(x.shape().begin() + axis, x.shape().end());
    const int64_t rows = SizeToDim(x.shape(), axis), n = SizeFromDim(x.shape(), axis);
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<C> scale, ExpandToRow<C>(*scale_t, "scale", row_shape));
    std::vector<C> bias;
    if (!rms_ && ctx.input_tensor(2) != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(bias, ExpandToRow<C>(*ctx.input_tensor(2), "B", row_shape));
    }

    const DataType y_type = rms_ ? scale_t->dtype() : x.dtype();
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, y_type, x.shape()));
    Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
    stat_shape.resize(rank, 1);
    const DataType stat_type = stat_type_;
    Tensor* mean_out = nullptr;
    Tensor* inv_out = nullptr;
    if (!rms_ && ctx.has_output(1)) { ONNXFLOW_ASSIGN_OR_RETURN(mean_out, ctx.Allocate(1, stat_type, stat_shape)); }
    if (!rms_ && ctx.has_output(2)) { ONNXFLOW_ASSIGN_OR_RETURN(inv_out, ctx.Allocate(2, stat_type, stat_shape)); }
    std::vector<C> mean_stats(mean_out ? rows : 0), inv_stats(inv_out ? rows : 0);

    std::vector<C> in_storage, out_storage;
    const C* in = ComputeView<C>(x.data<T>(), x.size(), in_storage);
    // Y in X's type is written in place (or through StoreBack); in another type, converted after.
    const bool y_as_x = y_type == x.dtype();
    C* out = y_as_x ? ComputeOut<C>(y->mutable_data<T>(), y->size(), out_storage) : nullptr;
    if (!y_as_x) {
      out_storage.resize(y->size());
      out = out_storage.data();
    }
    const C* bias_ptr = bias.empty() ? nullptr : bias.data();
    ParallelFor(ctx, rows, n * 4, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const C* src = in + r * n;
        double mean = 0, var;
        if (rms_) {
          var = n > 0 ? Rows<C>::SumSquaredDiff(src, C(0), n) / n : 0.0;
        } else {
          const Moments moments = MeanAndVariance(src, n);
          mean = moments.mean;
          var = moments.var;
        }
        const double inv = 1.0 / std::sqrt(var + epsilon_);
        Rows<C>::Normalize(src, static_cast<C>(mean), static_cast<C>(inv), scale.data(), bias_ptr, out + r * n, n);
        if (!mean_stats.empty()) mean_stats[r] = static_cast<C>(mean);
        if (!inv_stats.empty()) inv_stats[r] = static_cast<C>(inv);
      }
    });
    if (y_as_x) {
      StoreBack<C>(out, y->mutable_data<T>(), y->size());
    } else {
      ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor(out, y->size(), y));
    }
    if (mean_out != nullptr) ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor(mean_stats.data(), rows, mean_out));
    if (inv_out != nullptr) ONNXFLOW_RETURN_IF_ERROR(WriteFloatTensor(inv_stats.data(), rows, inv_out));
    return Status::Ok();
  }

  bool rms_;
  int64_t axis_;
  float epsilon_;
  DataType stat_type_;  // U, of Mean and InvStdDev
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterLayerNorm(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "LayerNormalization", 17, kOpenEnded, Make<RowNormKernel>(/*rms=*/false)));
  return registry.Register(kOnnxDomain, "RMSNormalization", 23, kOpenEnded, Make<RowNormKernel>(/*rms=*/true));
}

}  // namespace onnxflow
