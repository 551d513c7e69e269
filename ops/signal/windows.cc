// HannWindow, HammingWindow, BlackmanWindow (opset 17): a window of `size` points in the type
// output_datatype names (float by default). periodic=1 (the default) uses N = size in the
// formulas, as for a window that repeats; periodic=0 uses N = size - 1, a symmetric window.
//   Hann:     sin^2(pi n / N)
//   Hamming:  25/46 - 21/46 cos(2 pi n / N)
//   Blackman: 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
// Values are computed in double and converted (integer outputs truncate, as the reference does).
// A symmetric window of one point is [1] (N = 0 would divide by zero).
#include <cmath>
#include <string>

#include "ops/framework/dispatch.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/numeric.h"
#include "ops/framework/registry.h"
#include "ops/signal/signal_kernels.h"

namespace onnxflow {
namespace signal {
namespace {

constexpr double kPi = 3.14159265358979323846;

enum class WindowKind { kHann, kHamming, kBlackman };

double WindowValue(WindowKind kind, double n, double big_n) {
  switch (kind) {
    case WindowKind::kHann: {
      const double s = std::sin(kPi * n / big_n);
      return s * s;
    }
    case WindowKind::kHamming:
      return 25.0 / 46.0 - 21.0 / 46.0 * std::cos(2 * kPi * n / big_n);
    case WindowKind::kBlackman:
      return 0.42 - 0.5 * std::cos(2 * kPi * n / big_n) + 0.08 * std::cos(4 * kPi * n / big_n);
  }
  return 0;
}

class WindowKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, WindowKind kind) {
    auto k = std::make_unique<WindowKernel>();
    k->kind_ = kind;
    k->periodic_ = info.GetInt("periodic", 1) != 0;
    const int64_t dt = info.GetInt("output_datatype", 1);
    k->dtype_ = static_cast<DataType>(dt);
    if (!IsValidDataType(static_cast<int32_t>(dt)) ||
        !IsOneOf<ONNXFLOW_NUMERIC_TYPES>(k->dtype_)) {
      return InvalidArgument("output_datatype " + std::to_string(dt) + " is not a numeric type");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* size_t_, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t size, ReadIntScalar(*size_t_, "size"));
    if (size < 0) return InvalidArgument("window size must be >= 0, got " + std::to_string(size));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, dtype_, {size}));
    const double big_n = static_cast<double>(periodic_ ? size : size - 1);
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(dtype_, [&](auto tag) {
      using T = decltype(tag);
      T* out = y->mutable_data<T>();
      for (int64_t i = 0; i < size; ++i) {
        const double v = big_n == 0 ? 1.0 : WindowValue(kind_, static_cast<double>(i), big_n);
        out[i] = FromCompute<T>(static_cast<ComputeType<T>>(v));
      }
      return Status::Ok();
    });
  }

 private:
  WindowKind kind_ = WindowKind::kHann;
  bool periodic_ = true;
  DataType dtype_ = DataType::kFloat;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterWindows(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "HannWindow", 17, kOpenEnded, Make<WindowKernel>(WindowKind::kHann)));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "HammingWindow", 17, kOpenEnded, Make<WindowKernel>(WindowKind::kHamming)));
  return registry.Register(kOnnxDomain, "BlackmanWindow", 17, kOpenEnded, Make<WindowKernel>(WindowKind::kBlackman));
}

}  // namespace signal
}  // namespace onnxflow
