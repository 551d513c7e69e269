// Vector math for float32 elementwise kernels, compiled once per Highway target (include it from a
// file that goes through hwy/foreach_target.h). Highway's contrib math functions have limited
// valid ranges (Exp: x <= 104, Log: x > 0); the wrappers here give the IEEE answers outside them
// (inf, 0, NaN) so kernels match std:: on every input.
//
// Also the loop shapes every float kernel uses: MapUnary (y = f(x)) and MapBinary (out = f(a, b)
// with either operand repeated). Tails go through a padded stack vector so the last partial
// vector computes exactly like the others.

#if defined(ONNXFLOW_ELEMENTWISE_VECTOR_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_ELEMENTWISE_VECTOR_MATH_INL_H_
#undef ONNXFLOW_ELEMENTWISE_VECTOR_MATH_INL_H_
#else
#define ONNXFLOW_ELEMENTWISE_VECTOR_MATH_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// e^x; x <= 104 is Highway's valid range, beyond it (and at +inf) the answer is +inf anyway.
template <class D, class V>
HWY_INLINE V ExpVec(D d, V x) {
  const V clamped = hn::Min(hn::Max(x, hn::Set(d, -104.0f)), hn::Set(d, 104.0f));
  const V r = hn::Exp(d, clamped);
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

// ln x, with ln 0 = -inf, ln(negative) = NaN, ln inf = inf.
template <class D, class V>
HWY_INLINE V LogVec(D d, V x) {
  const V zero = hn::Zero(d);
  const V inf = hn::Set(d, HUGE_VALF);
  // Evaluate on a safe argument, then patch the special lanes.
  const auto ordinary = hn::And(hn::Gt(x, zero), hn::Lt(x, inf));
  const V r = hn::Log(d, hn::IfThenElse(ordinary, x, hn::Set(d, 1.0f)));
  V out = hn::IfThenElse(ordinary, r, hn::Set(d, NAN));
  out = hn::IfThenElse(hn::Eq(x, zero), hn::Neg(inf), out);
  out = hn::IfThenElse(hn::Eq(x, inf), inf, out);
  return out;
}

// erf(x) as a rational function of x^2 on [-4, 4] (max error about 4e-7); |erf| rounds to 1
// in float beyond 4.
template <class D, class V>
HWY_INLINE V ErfVec(D d, V x) {
  const V c = hn::Min(hn::Max(x, hn::Set(d, -4.0f)), hn::Set(d, 4.0f));
  const V x2 = hn::Mul(c, c);
  V p = hn::Set(d, -2.72614225801306e-10f);
  p = hn::MulAdd(p, x2, hn::Set(d, 2.77068142495902e-08f));
  p = hn::MulAdd(p, x2, hn::Set(d, -2.10102402082508e-06f));
  p = hn::MulAdd(p, x2, hn::Set(d, -5.69250639462346e-05f));
  p = hn::MulAdd(p, x2, hn::Set(d, -7.34990630326855e-04f));
  p = hn::MulAdd(p, x2, hn::Set(d, -2.95459980854025e-03f));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.60960333262415e-02f));
  p = hn::Mul(p, c);
  V q = hn::Set(d, -1.45660718464996e-05f);
  q = hn::MulAdd(q, x2, hn::Set(d, -2.13374055278905e-04f));
  q = hn::MulAdd(q, x2, hn::Set(d, -1.68282697438203e-03f));
  q = hn::MulAdd(q, x2, hn::Set(d, -7.37332916720468e-03f));
  q = hn::MulAdd(q, x2, hn::Set(d, -1.42647390514189e-02f));
  const V r = hn::Div(p, q);
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

// erfc(z) for z >= 0 with small relative error (about 1e-6 for z < 4, 4e-6 up to 9, where
// erfc underflows): t * exp(-z^2 + P(t)), t = 1 / (1 + z/2), a Chebyshev fit (Numerical Recipes'
// erfcc). Unlike 1 - erf(z) it keeps its precision in the tail, which Gelu needs for x < 0. z^2 is
// split into hi + lo (exact with FMA) so the exponent's rounding does not dominate.
template <class D, class V>
HWY_INLINE V ErfcNonNegativeVec(D d, V z) {
  const auto underflow = hn::Ge(z, hn::Set(d, 10.0f));  // erfc(10) is 0 in float
  z = hn::Min(z, hn::Set(d, 10.0f));                    // keeps inf out of the arithmetic
  const V t = hn::Div(hn::Set(d, 1.0f), hn::MulAdd(z, hn::Set(d, 0.5f), hn::Set(d, 1.0f)));
  V p = hn::Set(d, 0.17087277f);
  p = hn::MulAdd(p, t, hn::Set(d, -0.82215223f));
  p = hn::MulAdd(p, t, hn::Set(d, 1.48851587f));
  p = hn::MulAdd(p, t, hn::Set(d, -1.13520398f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.27886807f));
  p = hn::MulAdd(p, t, hn::Set(d, -0.18628806f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.09678418f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.37409196f));
  p = hn::MulAdd(p, t, hn::Set(d, 1.00002368f));
  p = hn::MulAdd(p, t, hn::Set(d, -1.26551223f));
  const V hi = hn::Mul(z, z);
  const V lo = hn::MulSub(z, z, hi);
  const V r = hn::Mul(t, ExpVec(d, hn::Sub(p, hi)));
  return hn::IfThenZeroElse(underflow, hn::NegMulAdd(r, lo, r));  // r * (1 - lo)
}

// 1 / (1 + e^-x), from e = e^-|x| so nothing overflows and tiny results keep their precision:
// x >= 0: 1 / (1 + e); x < 0: e / (1 + e).
template <class D, class V>
HWY_INLINE V SigmoidVec(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = ExpVec(d, hn::Neg(hn::Abs(x)));
  const V denom = hn::Add(one, e);
  const V num = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), e, one);
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Div(num, denom));
}

template <class D, class V>
HWY_INLINE V TanhVec(D d, V x) {
  const V r = hn::Tanh(d, x);
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

// y[i] = f(d, x[i]) for n floats.
template <class F>
HWY_INLINE void MapUnary(const float* x, float* y, int64_t n, const F& f) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    // Zero the unused lanes too: garbage there could be denormals, which are slow.
    constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
    HWY_ALIGN float buf[kMaxLanes];
    std::memcpy(buf, x + i, (n - i) * sizeof(float));
    std::memset(buf + (n - i), 0, (kMaxLanes - (n - i)) * sizeof(float));
    hn::Store(f(d, hn::Load(d, buf)), d, buf);
    std::memcpy(y + i, buf, (n - i) * sizeof(float));
  }
}

// out[i] = f(d, a[i], b[i]) for n floats; a (or b) repeats its first element when a_bcast (b_bcast).
template <class F>
HWY_INLINE void MapBinary(const float* a, bool a_bcast, const float* b, bool b_bcast, float* out, int64_t n,
                          const F& f) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN float ta[kMaxLanes];
  HWY_ALIGN float tb[kMaxLanes];
  if (a_bcast && b_bcast) {  // one value repeated: compute it once
    const float v = hn::GetLane(f(d, hn::Set(d, a[0]), hn::Set(d, b[0])));
    for (int64_t j = 0; j < n; ++j) out[j] = v;
    return;
  }
  int64_t i = 0;
  if (!a_bcast && !b_bcast) {
    for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  } else if (a_bcast && !b_bcast) {
    const auto va = hn::Set(d, a[0]);
    for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, va, hn::LoadU(d, b + i)), d, out + i);
  } else if (!a_bcast) {
    const auto vb = hn::Set(d, b[0]);
    for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, a + i), vb), d, out + i);
  }
  if (i < n) {
    const int64_t m = n - i;
    for (int64_t j = 0; j < kMaxLanes; ++j) {  // unused lanes zeroed (no slow denormals)
      ta[j] = j >= m ? 0.0f : a_bcast ? a[0] : a[i + j];
      tb[j] = j >= m ? 0.0f : b_bcast ? b[0] : b[i + j];
    }
    hn::Store(f(d, hn::Load(d, ta), hn::Load(d, tb)), d, ta);
    std::memcpy(out + i, ta, m * sizeof(float));
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
