#include "ops/activation/activation_simd.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/activation/activation_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/elementwise/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// e^x - 1, accurate near 0; saturates to -1 below -104 and +inf above 104.
template <class D, class V>
HWY_INLINE V Expm1Vec(D d, V x) {
  const V clamped = hn::Min(hn::Max(x, hn::Set(d, -104.0f)), hn::Set(d, 104.0f));
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Expm1(d, clamped));
}

// log(1 + e^x) = max(x, 0) + log1p(e^-|x|).
template <class D, class V>
HWY_INLINE V SoftplusVec(D d, V x) {
  const V e = ExpVec(d, hn::Neg(hn::Abs(x)));
  const V r = hn::Add(hn::Max(x, hn::Zero(d)), hn::Log1p(d, e));
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

// min(max(x, lo), hi) keeping NaN (x86 max/min would return the bound for a NaN x).
template <class D, class V>
HWY_INLINE V ClampVec(D, V x, V lo, V hi) {
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Min(hn::Max(x, lo), hi));
}

void ActivationImpl(int op_int, const ActParams& p, const float* x, float* y, int64_t n) {
  const ActOp op = static_cast<ActOp>(op_int);
  const float alpha = p.alpha, beta = p.beta, gamma = p.gamma;
  switch (op) {
    case ActOp::kRelu:
      return MapUnary(x, y, n, [](auto d, auto v) { return hn::IfThenElse(hn::Lt(v, hn::Zero(d)), hn::Zero(d), v); });
    case ActOp::kLeakyRelu:
      return MapUnary(x, y, n, [alpha](auto d, auto v) {
        return hn::IfThenElse(hn::Lt(v, hn::Zero(d)), hn::Mul(v, hn::Set(d, alpha)), v);
      });
    case ActOp::kSigmoid:
      return MapUnary(x, y, n, [](auto d, auto v) { return SigmoidVec(d, v); });
    case ActOp::kHardSigmoid:
      return MapUnary(x, y, n, [alpha, beta](auto d, auto v) {
        const auto t = hn::MulAdd(v, hn::Set(d, alpha), hn::Set(d, beta));
        return ClampVec(d, t, hn::Zero(d), hn::Set(d, 1.0f));
      });
    case ActOp::kHardSwish:
      return MapUnary(x, y, n, [](auto d, auto v) {
        const auto t = hn::MulAdd(v, hn::Set(d, 1.0f / 6.0f), hn::Set(d, 0.5f));
        return hn::Mul(v, ClampVec(d, t, hn::Zero(d), hn::Set(d, 1.0f)));
      });
    case ActOp::kTanh:
      return MapUnary(x, y, n, [](auto d, auto v) { return TanhVec(d, v); });
    case ActOp::kElu:
      return MapUnary(x, y, n, [alpha](auto d, auto v) {
        return hn::IfThenElse(hn::Lt(v, hn::Zero(d)), hn::Mul(hn::Set(d, alpha), Expm1Vec(d, v)), v);
      });
    case ActOp::kSelu:
      return MapUnary(x, y, n, [alpha, gamma](auto d, auto v) {
        const auto neg = hn::Mul(hn::Set(d, gamma * alpha), Expm1Vec(d, v));
        return hn::IfThenElse(hn::Le(v, hn::Zero(d)), neg, hn::Mul(hn::Set(d, gamma), v));
      });
    case ActOp::kCelu:
      return MapUnary(x, y, n, [alpha](auto d, auto v) {
        const auto neg = hn::Mul(hn::Set(d, alpha), Expm1Vec(d, hn::Div(v, hn::Set(d, alpha))));
        return hn::IfThenElse(hn::Lt(v, hn::Zero(d)), neg, v);
      });
    case ActOp::kGelu:
      // 1 + erf(x/sqrt2) is erfc(|x|/sqrt2) for x < 0 and 2 - erfc(|x|/sqrt2) otherwise; the
      // erfc form keeps the relative precision of the small negative tail.
      return MapUnary(x, y, n, [](auto d, auto v) {
        const auto c = ErfcNonNegativeVec(d, hn::Mul(hn::Abs(v), hn::Set(d, 0.70710678118654752440f)));
        const auto one_plus_erf = hn::IfThenElse(hn::Lt(v, hn::Zero(d)), c, hn::Sub(hn::Set(d, 2.0f), c));
        return hn::Mul(hn::Mul(hn::Set(d, 0.5f), v), one_plus_erf);
      });
    case ActOp::kGeluTanh:
      return MapUnary(x, y, n, [](auto d, auto v) {
        const auto cube = hn::Mul(hn::Mul(v, v), v);
        const auto inner = hn::Mul(hn::Set(d, 0.79788456080286535588f), hn::MulAdd(cube, hn::Set(d, 0.044715f), v));
        return hn::Mul(hn::Mul(hn::Set(d, 0.5f), v), hn::Add(hn::Set(d, 1.0f), TanhVec(d, inner)));
      });
    case ActOp::kMish:
      return MapUnary(x, y, n, [](auto d, auto v) { return hn::Mul(v, TanhVec(d, SoftplusVec(d, v))); });
    case ActOp::kSoftplus:
      return MapUnary(x, y, n, [](auto d, auto v) { return SoftplusVec(d, v); });
    case ActOp::kSoftsign:
      return MapUnary(x, y, n, [](auto d, auto v) { return hn::Div(v, hn::Add(hn::Set(d, 1.0f), hn::Abs(v))); });
    case ActOp::kThresholdedRelu:
      return MapUnary(x, y, n, [alpha](auto d, auto v) { return hn::IfThenElseZero(hn::Gt(v, hn::Set(d, alpha)), v); });
    case ActOp::kShrink:
      return MapUnary(x, y, n, [alpha, beta](auto d, auto v) {
        const auto lambd = hn::Set(d, alpha);
        const auto bias = hn::Set(d, beta);
        const auto r = hn::IfThenElseZero(hn::Lt(v, hn::Neg(lambd)), hn::Add(v, bias));
        return hn::IfThenElse(hn::Gt(v, lambd), hn::Sub(v, bias), r);
      });
    case ActOp::kSwish:
      return MapUnary(x, y, n,
                      [alpha](auto d, auto v) { return hn::Mul(v, SigmoidVec(d, hn::Mul(hn::Set(d, alpha), v))); });
    case ActOp::kClip:
      return MapUnary(x, y, n,
                      [alpha, beta](auto d, auto v) { return ClampVec(d, v, hn::Set(d, alpha), hn::Set(d, beta)); });
  }
}

void SwiGluImpl(float alpha, const float* a, const float* b, float* y, int64_t n) {
  MapBinary(a, false, b, false, y, n, [alpha](auto d, auto va, auto vb) {
    return hn::Mul(hn::Mul(va, SigmoidVec(d, hn::Mul(hn::Set(d, alpha), va))), vb);
  });
}

// The select keeps x where it is not below zero, so NaN and -0 pass through as the scalar form's.
void PReluImpl(const float* x, bool x_bcast, const float* slope, bool slope_bcast, float* y, int64_t n) {
  MapBinary(x, x_bcast, slope, slope_bcast, y, n, [](auto d, auto vx, auto vs) {
    return hn::IfThenElse(hn::Lt(vx, hn::Zero(d)), hn::Mul(vx, vs), vx);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(ActivationImpl);
HWY_EXPORT(SwiGluImpl);
HWY_EXPORT(PReluImpl);

void ActivationFloat(ActOp op, const ActParams& p, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(ActivationImpl)(static_cast<int>(op), p, x, y, n);
}

void SwiGluFloat(float alpha, const float* a, const float* b, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(SwiGluImpl)(alpha, a, b, y, n);
}

void PReluFloat(const float* x, bool x_bcast, const float* slope, bool slope_bcast, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(PReluImpl)(x, x_bcast, slope, slope_bcast, y, n);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
