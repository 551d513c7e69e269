// Pow: base^exponent with numpy broadcasting. Base and exponent may have different types
// (Pow-12+: base int32/int64/float types, exponent any numeric type); the output has the base's
// type. Integer base with integer exponent multiplies exactly (wrapping); any float involved goes
// through std::pow in float (float32 pairs) or double (mixed pairs), then converts to the base type.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/elementwise/common.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

// Exact integer power by squaring (wrapping). A negative exponent truncates the real result:
// only bases 1 and -1 give nonzero answers.
template <typename T, typename E>
T IntegerPow(T base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if constexpr (std::is_signed_v<T>) {
        if (base == -1) return (exponent % 2 == 0) ? 1 : -1;
      }
      return 0;
    }
  }
  T result = 1;
  T b = base;
  auto e = static_cast<std::make_unsigned_t<E>>(exponent);
  while (e != 0) {
    if (e & 1) result = WrapMul(result, b);
    e >>= 1;
    if (e != 0) b = WrapMul(b, b);
  }
  return result;
}

// double -> integer like x86 does for values that do not fit (the "integer indefinite" value).
template <typename T>
T DoubleToInteger(double v) {
  const double upper = std::ldexp(1.0, std::numeric_limits<T>::digits);  // 2^31 for int32
  if (!(v >= static_cast<double>(std::numeric_limits<T>::min()) && v < upper)) {
    return std::numeric_limits<T>::min();
  }
  return static_cast<T>(v);
}

template <typename T, typename E>
T PowOne(T base, E exponent) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    return IntegerPow(base, exponent);
  } else if constexpr (std::is_integral_v<T>) {
    return DoubleToInteger<T>(std::pow(static_cast<double>(base), static_cast<double>(ToCompute(exponent))));
  } else if constexpr (std::is_same_v<ComputeType<T>, float> && std::is_same_v<ComputeType<E>, float>) {
    return FromCompute<T>(std::pow(ToCompute(base), ToCompute(exponent)));
  } else {
    return FromCompute<T>(static_cast<ComputeType<T>>(
        std::pow(static_cast<double>(ToCompute(base)), static_cast<double>(ToCompute(exponent)))));
  }
}

template <typename T, typename E>
Status PowTyped(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor* y) {
  // x^2 (variance, L2 norms) is the common case: one multiply, exactly what pow gives.
  if constexpr (std::is_same_v<T, float>) {
    if (b.size() == 1 && a.shape() == y->shape() && static_cast<double>(ToCompute(b.data<E>()[0])) == 2.0) {
      RunUnary<float, float>(ctx, a, y, 1, [](const float* x, float* out, int64_t n) {
        for (int64_t i = 0; i < n; ++i) out[i] = x[i] * x[i];
      });
      return Status::Ok();
    }
  }
  return RunBinary<T, E, T>(ctx, a, b, y, 20, [](const T* x, bool xb, const E* z, bool zb, T* out, int64_t n) {
    BinarySpan(x, xb, z, zb, out, n, [](T p, E q) { return PowOne<T, E>(p, q); });
  });
}

// The exponent widened, keeping every value, to int64 (signed integers), uint64 (unsigned), float
// (float, float16, bfloat16: float is their compute type) or double. PowOne's result depends on the
// exponent's value and on those four kinds only, so 12 bases x 4 exponent types are compiled
// instead of 12 x 12: pow.cc took 40 s of CPU to compile and 110 s under ASan, the ASan build's
// second-longest action. Exponents are scalars or small; the copy is not measurable.
Status WidenExponent(const Tensor& b, Tensor* widened) {
  return DispatchType<ONNXFLOW_NUMERIC_TYPES>(b.dtype(), [&](auto tag) {
    using E = decltype(tag);
    using W = std::conditional_t<std::is_same_v<E, double>, double,
                                 std::conditional_t<!std::is_integral_v<E>, float,
                                                    std::conditional_t<std::is_signed_v<E>, int64_t, uint64_t>>>;
    if constexpr (std::is_same_v<E, W>) {
      *widened = b;
    } else {
      *widened = Tensor::Uninitialized(DataTypeOf<W>::value, b.shape());
      const E* from = b.data<E>();
      W* to = widened->mutable_data<W>();
      for (int64_t i = 0; i < b.size(); ++i) to[i] = static_cast<W>(ToCompute(from[i]));
    }
    return Status::Ok();
  });
}

class PowKernel : public OpKernel {
 public:
  explicit PowKernel(const KernelInfo& info) : legacy_(info) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b_in, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor b_given, legacy_.Apply(*a, *b_in));
    Tensor b;
    ONNXFLOW_RETURN_IF_ERROR(WidenExponent(b_given, &b));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape(), b.shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, a->dtype(), shape));
    return DispatchType<float, double, Float16, BFloat16, int32_t, int64_t, int8_t, int16_t, uint8_t, uint16_t,
                        uint32_t, uint64_t>(a->dtype(), [&](auto base_tag) {
      using T = decltype(base_tag);
      return DispatchType<int64_t, uint64_t, float, double>(
          b.dtype(), [&](auto exp_tag) { return PowTyped<T, decltype(exp_tag)>(ctx, *a, b, y); });
    });
  }

 private:
  LegacyBroadcast legacy_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterPowKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Pow", 1, kOpenEnded,
                           WithInputTypes<float, double, Float16, BFloat16, int32_t, int64_t, int8_t, int16_t, uint8_t,
                                          uint16_t, uint32_t, uint64_t>(0, Make<PowKernel>()));
}

}  // namespace onnxflow
