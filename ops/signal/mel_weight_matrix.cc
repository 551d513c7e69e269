// MelWeightMatrix (opset 17): a [dft_length / 2 + 1, num_mel_bins] matrix of triangular filters
// evenly spaced on the mel scale, mel(f) = 2595 log10(1 + f / 700), between lower_edge_hertz and
// upper_edge_hertz; each triangle peaks at 1. The band edges follow the ONNX reference exactly:
// num_mel_bins + 2 edges spaced (high_mel - low_mel) / (num_mel_bins + 2) apart, each mapped to
// the spectrogram bin floor((dft_length + 1) * hz / sample_rate). The mel edges are computed in the
// precision of the edge inputs (float for float), the rest in double.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/numeric.h"
#include "ops/framework/registry.h"
#include "ops/signal/signal_kernels.h"

namespace onnxflow {
namespace signal {
namespace {

class MelWeightMatrixKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<MelWeightMatrixKernel>();
    const int64_t dt = info.GetInt("output_datatype", 1);
    k->dtype_ = static_cast<DataType>(dt);
    if (!IsValidDataType(static_cast<int32_t>(dt)) || !IsOneOf<ONNXFLOW_NUMERIC_TYPES>(k->dtype_)) {
      return InvalidArgument("output_datatype " + std::to_string(dt) + " is not a numeric type");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    int64_t ints[3];
    const char* names[3] = {"num_mel_bins", "dft_length", "sample_rate"};
    for (int i = 0; i < 3; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
      ONNXFLOW_ASSIGN_OR_RETURN(ints[i], ReadIntScalar(*t, names[i]));
      if (ints[i] < 1) return InvalidArgument(std::string(names[i]) + " must be >= 1, got " + std::to_string(ints[i]));
    }
    const int64_t mel_bins = ints[0], dft_length = ints[1], sample_rate = ints[2];
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* low_t, ctx.RequireTensor(3));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* high_t, ctx.RequireTensor(4));
    if (low_t->size() != 1 || high_t->size() != 1 || low_t->dtype() != high_t->dtype()) {
      return InvalidArgument("lower_edge_hertz and upper_edge_hertz must be scalars of one float type");
    }
    double low_mel = 0, mel_step = 0;
    ONNXFLOW_RETURN_IF_ERROR(DispatchType<float, double, Float16, BFloat16>(low_t->dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeType<T>;
      const C low = ToCompute(low_t->data<T>()[0]), high = ToCompute(high_t->data<T>()[0]);
      const C lm = C(2595) * std::log10(C(1) + low / C(700));
      const C hm = C(2595) * std::log10(C(1) + high / C(700));
      low_mel = lm;
      mel_step = static_cast<C>((hm - lm) / static_cast<C>(mel_bins + 2));
      return Status::Ok();
    }));
    const int64_t spectrogram_bins = dft_length / 2 + 1;
    std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double mel = static_cast<double>(i) * mel_step + low_mel;
      const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
      const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
      if (!std::isfinite(bin) || std::abs(bin) > 4e18) {
        return InvalidArgument("the mel band edges are not finite (check lower_edge_hertz / upper_edge_hertz)");
      }
      edge[i] = static_cast<int64_t>(bin);
    }
    std::vector<double> m(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
    // Edges past the spectrogram (an upper edge above the Nyquist frequency) are left out.
    auto set = [&](int64_t row, int64_t col, double v) {
      if (row >= 0 && row < spectrogram_bins) m[row * mel_bins + col] = v;
    };
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
      if (center == left) {
        set(center, i, 1.0);
      } else {
        for (int64_t j = left; j <= center; ++j) {
          set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
        }
      }
      if (right > center) {
        for (int64_t j = center; j < right; ++j) {
          set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
        }
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, dtype_, {spectrogram_bins, mel_bins}));
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(dtype_, [&](auto tag) {
      using T = decltype(tag);
      T* out = y->mutable_data<T>();
      for (size_t i = 0; i < m.size(); ++i) out[i] = FromCompute<T>(static_cast<ComputeType<T>>(m[i]));
      return Status::Ok();
    });
  }

 private:
  DataType dtype_ = DataType::kFloat;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMelWeightMatrix(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "MelWeightMatrix", 17, kOpenEnded,
                           Make<MelWeightMatrixKernel>());
}

}  // namespace signal
}  // namespace onnxflow
