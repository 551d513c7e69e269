// STFT (opset 17): frames of a [batch, length, 1 or 2] signal, frame_step apart, each multiplied
// by the window and transformed with a DFT of frame_length points. Output
// [batch, frames, bins, 2] with frames = 1 + (length - frame_length) / frame_step (floor) and
// bins = frame_length / 2 + 1 when onesided (the default), else frame_length.
// frame_length defaults to the window's length, or to the signal length without a window; a frame
// reads window-length samples (zero past the signal's end), zero-padded or cut to frame_length.
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
namespace {

class StftKernel final : public OpKernel {
 public:
  explicit StftKernel(const KernelInfo& info) : onesided_(info.GetInt("onesided", 1) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* step_t, ctx.RequireTensor(1));
    if (x->rank() != 3 || (x->dim(2) != 1 && x->dim(2) != 2)) {
      return InvalidArgument("signal must be [batch, length, 1 or 2], got " + ShapeToString(x->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t step, ReadIntScalar(*step_t, "frame_step"));
    if (step < 1) return InvalidArgument("frame_step must be >= 1, got " + std::to_string(step));
    const Tensor* window = ctx.input_tensor(2);
    if (window != nullptr) {
      if (window->rank() != 1) return InvalidArgument("window must be 1-D, got " + ShapeToString(window->shape()));
      if (window->dtype() != x->dtype()) return InvalidArgument("window must have the signal's type");
    }
    const int64_t batch = x->dim(0), length = x->dim(1), parts = x->dim(2);
    int64_t frame_length = window != nullptr ? window->dim(0) : length;
    if (const Tensor* fl = ctx.input_tensor(3); fl != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(frame_length, ReadIntScalar(*fl, "frame_length"));
    }
    if (frame_length < 1) return InvalidArgument("frame_length must be >= 1, got " + std::to_string(frame_length));
    const int64_t frame_samples = window != nullptr ? window->dim(0) : frame_length;
    // Python's floor division: a signal shorter than one frame has no frames.
    const int64_t diff = length - frame_length;
    const int64_t frames = diff < 0 ? 0 : 1 + diff / step;
    const int64_t bins = onesided_ ? frame_length / 2 + 1 : frame_length;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), {batch, frames, bins, 2}));
    if (y->size() == 0) return Status::Ok();

    if (frame_length > kMaxFftLength) {
      return ResourceExhausted("a transform of " + std::to_string(frame_length) + " points exceeds the limit of " +
                               std::to_string(kMaxFftLength));
    }
    const FftPlan plan(frame_length);
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      const T* win = window != nullptr ? window->data<T>() : nullptr;
      T* dst = y->mutable_data<T>();
      const int64_t log_n = static_cast<int64_t>(std::log2(static_cast<double>(frame_length)) + 1);
      ParallelFor(ctx, batch * frames, frame_length * log_n * 8, [&](int64_t begin, int64_t end) {
        std::vector<Complex> line(static_cast<size_t>(frame_length)), scratch;
        for (int64_t item = begin; item < end; ++item) {
          const int64_t b = item / frames, f = item % frames;
          std::fill(line.begin(), line.end(), Complex(0, 0));
          const int64_t used = std::min(frame_samples, frame_length);
          for (int64_t k = 0; k < used; ++k) {
            const int64_t t = f * step + k;
            if (t >= length) break;
            const T* p = src + (b * length + t) * parts;
            const double w = win != nullptr ? static_cast<double>(ToCompute(win[k])) : 1.0;
            line[k] = Complex(static_cast<double>(ToCompute(p[0])) * w,
                              parts == 2 ? static_cast<double>(ToCompute(p[1])) * w : 0.0);
          }
          plan.Transform(line.data(), false, &scratch);
          T* out = dst + item * bins * 2;
          for (int64_t k = 0; k < bins; ++k) {
            out[2 * k] = FromCompute<T>(static_cast<ComputeType<T>>(line[k].real()));
            out[2 * k + 1] = FromCompute<T>(static_cast<ComputeType<T>>(line[k].imag()));
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  bool onesided_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterStft(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "STFT", 17, kOpenEnded, Make<StftKernel>());
}

}  // namespace signal
}  // namespace onnxflow
