// Unary math: Abs, Neg, Sign, Ceil, Floor, Round, Reciprocal, Sqrt, Exp, Log, Erf and the
// trigonometric / hyperbolic functions.
//
// float32 uses the Highway array functions where one exists (Abs, Neg, Sqrt, Reciprocal, Exp,
// Log, Erf, Ceil, Floor, Round); float16/bfloat16 go through float blocks; everything else is a
// plain loop over std:: functions in the compute type. Round is half to even.
#include <cmath>

#include "ops/elementwise/common.h"
#include "ops/elementwise/float_simd.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

enum class Math {
  kAbs,
  kNeg,
  kSign,
  kCeil,
  kFloor,
  kRound,
  kReciprocal,
  kSqrt,
  kExp,
  kLog,
  kErf,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
};

// The vectorized float32 version of `op`, when there is one.
constexpr bool HasSimd(Math op) {
  return op == Math::kAbs || op == Math::kNeg || op == Math::kSqrt || op == Math::kReciprocal || op == Math::kExp ||
         op == Math::kLog || op == Math::kErf || op == Math::kCeil || op == Math::kFloor || op == Math::kRound;
}

constexpr FloatUnaryOp SimdOp(Math op) {
  switch (op) {
    case Math::kAbs:
      return FloatUnaryOp::kAbs;
    case Math::kNeg:
      return FloatUnaryOp::kNeg;
    case Math::kSqrt:
      return FloatUnaryOp::kSqrt;
    case Math::kReciprocal:
      return FloatUnaryOp::kReciprocal;
    case Math::kExp:
      return FloatUnaryOp::kExp;
    case Math::kLog:
      return FloatUnaryOp::kLog;
    case Math::kErf:
      return FloatUnaryOp::kErf;
    case Math::kCeil:
      return FloatUnaryOp::kCeil;
    case Math::kFloor:
      return FloatUnaryOp::kFloor;
    default:
      return FloatUnaryOp::kRound;
  }
}

// The scalar definition of each op, in C (the compute type: float, double or an integer type).
template <Math op, typename C>
C Apply(C x) {
  if constexpr (op == Math::kAbs) {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (std::is_integral_v<C>)
      return x < 0 ? WrapNeg(x) : x;
    else
      return std::fabs(x);
  } else if constexpr (op == Math::kNeg) {
    return WrapNeg(x);
  } else if constexpr (op == Math::kSign) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return x;
    }
    return static_cast<C>((x > C{0}) - (x < C{0}));
  } else if constexpr (op == Math::kErf) {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(std::erf(static_cast<double>(x)));
    else
      return std::erf(x);
  } else if constexpr (op == Math::kCeil) {
    return std::ceil(x);
  } else if constexpr (op == Math::kFloor) {
    return std::floor(x);
  } else if constexpr (op == Math::kRound) {
    return std::nearbyint(x);
  } else if constexpr (op == Math::kReciprocal) {
    return C{1} / x;
  } else if constexpr (op == Math::kSqrt) {
    return std::sqrt(x);
  } else if constexpr (op == Math::kExp) {
    return std::exp(x);
  } else if constexpr (op == Math::kLog) {
    return std::log(x);
  } else if constexpr (op == Math::kSin) {
    return std::sin(x);
  } else if constexpr (op == Math::kCos) {
    return std::cos(x);
  } else if constexpr (op == Math::kTan) {
    return std::tan(x);
  } else if constexpr (op == Math::kAsin) {
    return std::asin(x);
  } else if constexpr (op == Math::kAcos) {
    return std::acos(x);
  } else if constexpr (op == Math::kAtan) {
    return std::atan(x);
  } else if constexpr (op == Math::kSinh) {
    return std::sinh(x);
  } else if constexpr (op == Math::kCosh) {
    return std::cosh(x);
  } else if constexpr (op == Math::kAsinh) {
    return std::asinh(x);
  } else if constexpr (op == Math::kAcosh) {
    return std::acosh(x);
  } else {
    static_assert(op == Math::kAtanh);
    return std::atanh(x);
  }
}

template <Math op, typename T>
void ScalarLoop(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = FromCompute<T>(Apply<op>(ToCompute(x[i])));
}

// Per-element cost for ParallelFor: transcendental functions are about 20 simple operations.
constexpr int64_t Cost(Math op) {
  return op == Math::kAbs || op == Math::kNeg || op == Math::kSign || op == Math::kCeil || op == Math::kFloor ||
                 op == Math::kRound
             ? 1
             : 20;
}

template <Math op>
class UnaryMathKernel : public OpKernel {
 public:
  explicit UnaryMathKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), x->shape()));
    auto body = [&](auto tag) {
      using T = decltype(tag);
      if constexpr (HasSimd(op) && std::is_same_v<T, float>) {
        RunUnary<float, float>(ctx, *x, y, Cost(op),
                               [](const float* in, float* out, int64_t n) { FloatUnary(SimdOp(op), in, out, n); });
      } else if constexpr (HasSimd(op) && (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)) {
        RunUnary<T, T>(ctx, *x, y, Cost(op) + 4, [](const T* in, T* out, int64_t n) {
          UnarySpanViaFloat(in, out, n, [](const float* p, float* q, int64_t m) { FloatUnary(SimdOp(op), p, q, m); });
        });
      } else {
        RunUnary<T, T>(ctx, *x, y, Cost(op), [](const T* in, T* out, int64_t n) { ScalarLoop<op, T>(in, out, n); });
      }
      return Status::Ok();
    };
    if constexpr (op == Math::kAbs || op == Math::kNeg || op == Math::kSign || op == Math::kErf) {
      return DispatchType<ONNXFLOW_NUMERIC_TYPES>(x->dtype(), body);
    } else {
      return DispatchType<ONNXFLOW_FLOAT_TYPES>(x->dtype(), body);
    }
  }
};

template <Math op>
ONNXFLOW_REGISTRAR Status Add(KernelRegistry& registry, const char* name, int since) {
  KernelFactory make = Make<UnaryMathKernel<op>>();
  if constexpr (op == Math::kAbs || op == Math::kNeg || op == Math::kSign || op == Math::kErf) {
    make = WithInputTypes<ONNXFLOW_NUMERIC_TYPES>(0, make);
  } else {
    make = WithInputTypes<ONNXFLOW_FLOAT_TYPES>(0, make);
  }
  return registry.Register(kOnnxDomain, name, since, kOpenEnded, make);
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterUnaryMathKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kAbs>(registry, "Abs", 1));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kNeg>(registry, "Neg", 1));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kSign>(registry, "Sign", 9));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kCeil>(registry, "Ceil", 1));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kFloor>(registry, "Floor", 1));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kRound>(registry, "Round", 11));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kReciprocal>(registry, "Reciprocal", 1));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kSqrt>(registry, "Sqrt", 1));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kExp>(registry, "Exp", 1));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kLog>(registry, "Log", 1));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kErf>(registry, "Erf", 9));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kSin>(registry, "Sin", 7));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kCos>(registry, "Cos", 7));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kTan>(registry, "Tan", 7));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kAsin>(registry, "Asin", 7));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kAcos>(registry, "Acos", 7));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kAtan>(registry, "Atan", 7));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kSinh>(registry, "Sinh", 9));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kCosh>(registry, "Cosh", 9));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kAsinh>(registry, "Asinh", 9));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kAcosh>(registry, "Acosh", 9));
  ONNXFLOW_RETURN_IF_ERROR(Add<Math::kAtanh>(registry, "Atanh", 9));
  return Status::Ok();
}

}  // namespace onnxflow
