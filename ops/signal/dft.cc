// DFT (opsets 17 and 20): a complex FFT of any length along one axis of a tensor whose last axis
// holds [real] or [real, imag].
//   - opset 17 takes the axis as an attribute (default 1), opset 20 as an optional input (-2);
//   - dft_length truncates or zero-pads the signal; by default it is the axis length, or
//     2 * (length - 1) for the inverse one-sided transform (IRFFT);
//   - onesided forward keeps bins [0, n/2]; onesided inverse rebuilds the Hermitian spectrum from
//     them and returns the real signal (last axis 1);
//   - inverse scales by 1/n.
// Every line along the axis is transformed in double precision (fft.h); lines are split over cores.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/signal/fft.h"
#include "ops/signal/signal_kernels.h"

namespace onnxflow {
namespace signal {

Result<int64_t> ReadIntScalar(const Tensor& t, const char* name) {
  if (t.size() != 1) return InvalidArgument(std::string(name) + " must be a scalar, got shape " + ShapeToString(t.shape()));
  if (t.dtype() == DataType::kInt64) return t.data<int64_t>()[0];
  if (t.dtype() == DataType::kInt32) return static_cast<int64_t>(t.data<int32_t>()[0]);
  return InvalidArgument(std::string(name) + " must be int32 or int64, got " + DataTypeName(t.dtype()));
}

namespace {

class DftKernel final : public OpKernel {
 public:
  explicit DftKernel(const KernelInfo& info)
      : opset_(info.opset()),
        axis_attribute_(info.GetInt("axis", 1)),
        inverse_(info.GetInt("inverse", 0) != 0),
        onesided_(info.GetInt("onesided", 0) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const int64_t rank = x->rank();
    if (rank < 2) return InvalidArgument("input must have rank >= 2 ([..., 1 or 2]), got " + ShapeToString(x->shape()));
    const int64_t parts = x->dim(rank - 1);
    if (parts != 1 && parts != 2) {
      return InvalidArgument("the last axis must be 1 (real) or 2 (complex), got " + ShapeToString(x->shape()));
    }
    int64_t axis = axis_attribute_;
    if (opset_ >= 20) {
      axis = -2;
      if (const Tensor* a = ctx.input_tensor(2); a != nullptr) {
        ONNXFLOW_ASSIGN_OR_RETURN(axis, ReadIntScalar(*a, "axis"));
      }
    }
    const int64_t given_axis = axis;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank - 2) {
      return InvalidArgument("axis " + std::to_string(given_axis) + " is out of range for input shape " +
                             ShapeToString(x->shape()) + " (the last axis holds the complex parts)");
    }
    const int64_t in_len = x->dim(axis);
    const bool irfft = inverse_ && onesided_;
    int64_t n = irfft ? 2 * (in_len - 1) : in_len;
    if (const Tensor* l = ctx.input_tensor(1); l != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(n, ReadIntScalar(*l, "dft_length"));
    }
    if (n < 1) return InvalidArgument("dft_length must be >= 1, got " + std::to_string(n));
    const int64_t out_len = (onesided_ && !inverse_) ? n / 2 + 1 : n;
    Shape out_shape = x->shape();
    out_shape[axis] = out_len;
    out_shape[rank - 1] = irfft ? 1 : 2;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), out_shape));
    if (y->size() == 0) return Status::Ok();

    const int64_t outer = SizeToDim(x->shape(), axis);
    const int64_t inner = SizeFromDim(x->shape(), axis + 1) / parts;  // elements between the axis and the parts
    if (n > kMaxFftLength) {
      return ResourceExhausted("a transform of " + std::to_string(n) + " points exceeds the limit of " +
                               std::to_string(kMaxFftLength));
    }
    const FftPlan plan(n);
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = y->mutable_data<T>();
      const int64_t out_parts = irfft ? 1 : 2;
      const double scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
      const int64_t log_n = static_cast<int64_t>(std::log2(static_cast<double>(n)) + 1);
      ParallelFor(ctx, outer * inner, n * log_n * 8, [&](int64_t begin, int64_t end) {
        std::vector<Complex> line(static_cast<size_t>(n)), scratch;
        for (int64_t item = begin; item < end; ++item) {
          const int64_t o = item / inner, i = item % inner;
          const T* in = src + (o * in_len * inner + i) * parts;
          auto sample = [&](int64_t k) {
            const T* p = in + k * inner * parts;
            return Complex(ToCompute(p[0]), parts == 2 ? static_cast<double>(ToCompute(p[1])) : 0.0);
          };
          if (irfft) {
            // Rebuild the full Hermitian spectrum from bins [0, n/2]; DC and Nyquist are real.
            const int64_t half = n / 2 + 1;
            for (int64_t k = 0; k < half; ++k) line[k] = k < in_len ? sample(k) : Complex(0, 0);
            line[0].imag(0);
            if (n % 2 == 0) line[n / 2].imag(0);
            for (int64_t k = half; k < n; ++k) line[k] = std::conj(line[n - k]);
          } else {
            const int64_t used = std::min(in_len, n);
            for (int64_t k = 0; k < used; ++k) line[k] = sample(k);
            for (int64_t k = used; k < n; ++k) line[k] = Complex(0, 0);
          }
          plan.Transform(line.data(), inverse_, &scratch);
          T* out = dst + (o * out_len * inner + i) * out_parts;
          for (int64_t k = 0; k < out_len; ++k) {
            T* q = out + k * inner * out_parts;
            q[0] = FromCompute<T>(static_cast<ComputeType<T>>(line[k].real() * scale));
            if (!irfft) q[1] = FromCompute<T>(static_cast<ComputeType<T>>(line[k].imag() * scale));
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  int opset_;
  int64_t axis_attribute_;
  bool inverse_;
  bool onesided_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDft(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "DFT", 17, kOpenEnded, Make<DftKernel>());
}

}  // namespace signal
}  // namespace onnxflow
