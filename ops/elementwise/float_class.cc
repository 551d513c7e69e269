// IsNaN and IsInf (detect_positive / detect_negative) over the floating types, float8 included:
// float8 values are classified from their bits (E4M3FN: S.1111.111 is NaN and there is no inf;
// the FNUZ formats: 0x80 is NaN; E5M2: an all-ones exponent is inf or NaN like IEEE).
#include <cmath>

#include "ops/elementwise/common.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

// 1 for +inf, -1 for -inf, 0 otherwise; and NaN-ness.
template <typename T>
int InfSign(T v) {
  return std::isinf(ToCompute(v)) ? (ToCompute(v) > 0 ? 1 : -1) : 0;
}
template <typename T>
bool IsNan(T v) {
  return std::isnan(ToCompute(v));
}

template <>
int InfSign(Float8E4M3FN) {
  return 0;
}
template <>
bool IsNan(Float8E4M3FN v) {
  return (v.bits & 0x7f) == 0x7f;
}
template <>
int InfSign(Float8E4M3FNUZ) {
  return 0;
}
template <>
bool IsNan(Float8E4M3FNUZ v) {
  return v.bits == 0x80;
}
template <>
int InfSign(Float8E5M2FNUZ) {
  return 0;
}
template <>
bool IsNan(Float8E5M2FNUZ v) {
  return v.bits == 0x80;
}
template <>
int InfSign(Float8E5M2 v) {
  if ((v.bits & 0x7f) != 0x7c) return 0;
  return (v.bits & 0x80) ? -1 : 1;
}
template <>
bool IsNan(Float8E5M2 v) {
  return (v.bits & 0x7c) == 0x7c && (v.bits & 0x03) != 0;
}

#define ONNXFLOW_CLASSIFIED_TYPES \
  float, double, Float16, BFloat16, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ

class IsNaNKernel : public OpKernel {
 public:
  explicit IsNaNKernel(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kBool, x->shape()));
    return DispatchType<ONNXFLOW_CLASSIFIED_TYPES>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      RunUnary<T, bool>(ctx, *x, y, 1, [](const T* in, bool* out, int64_t n) {
        for (int64_t i = 0; i < n; ++i) out[i] = IsNan(in[i]);
      });
      return Status::Ok();
    });
  }
};

class IsInfKernel : public OpKernel {
 public:
  explicit IsInfKernel(const KernelInfo& info)
      : positive_(info.GetInt("detect_positive", 1) != 0), negative_(info.GetInt("detect_negative", 1) != 0) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kBool, x->shape()));
    const bool pos = positive_, neg = negative_;
    return DispatchType<ONNXFLOW_CLASSIFIED_TYPES>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      RunUnary<T, bool>(ctx, *x, y, 1, [pos, neg](const T* in, bool* out, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          const int s = InfSign(in[i]);
          out[i] = (s > 0 && pos) || (s < 0 && neg);
        }
      });
      return Status::Ok();
    });
  }

 private:
  bool positive_;
  bool negative_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterFloatClassKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR((registry.Register(kOnnxDomain, "IsNaN", 9, kOpenEnded,
                                              WithInputTypes<ONNXFLOW_CLASSIFIED_TYPES>(0, Make<IsNaNKernel>()))));
  ONNXFLOW_RETURN_IF_ERROR((registry.Register(kOnnxDomain, "IsInf", 10, kOpenEnded,
                                              WithInputTypes<ONNXFLOW_CLASSIFIED_TYPES>(0, Make<IsInfKernel>()))));
  return Status::Ok();
}

}  // namespace onnxflow
