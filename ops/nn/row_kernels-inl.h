// Highway bodies of the row kernels (row_kernels.h), compiled once per CPU target by
// row_kernels.cc through hwy/foreach_target.h.
//
// Loops run whole vectors, then finish the tail through a small stack buffer: a partial vector
// load could run past the row (and the page), and masked loads are emulated on SSE4. The lanes
// beyond the tail are padded with the reduction's identity or masked out before summing.
#if defined(ONNXFLOW_OPS_NN_ROW_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_NN_ROW_KERNELS_INL_H_
#undef ONNXFLOW_OPS_NN_ROW_KERNELS_INL_H_
#else
#define ONNXFLOW_OPS_NN_ROW_KERNELS_INL_H_
#endif

#include <cstdint>
#include <cstring>
#include <limits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// The last `rem` (< lanes) floats as a full vector padded with `pad`, and the store of a vector's
// first `rem` lanes. AVX2 and AVX-512 mask the lanes in one instruction that never touches the
// masked memory; other targets copy through a stack buffer. (Through the buffer, a 197-key
// attention row's tail cost as much as its twelve full vectors of exp: attention_benchmark.)
inline VF LoadTail(DF d, const float* x, size_t rem, float pad) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  const auto m = hn::FirstN(d, rem);
  return hn::IfThenElse(m, hn::MaskedLoad(m, d, x), hn::Set(d, pad));
#else
  HWY_ALIGN float buf[hn::MaxLanes(DF())];
  for (size_t i = 0; i < hn::Lanes(d); ++i) buf[i] = i < rem ? x[i] : pad;
  return hn::Load(d, buf);
#endif
}
inline void StoreTail(DF d, VF v, float* y, size_t rem) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  hn::BlendedStore(v, hn::FirstN(d, rem), d, y);
#else
  HWY_ALIGN float buf[hn::MaxLanes(DF())];
  hn::Store(v, d, buf);
  std::memcpy(y, buf, rem * sizeof(float));
#endif
}

inline float RowMaxImpl(const float* x, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  VF m0 = hn::Set(d, -std::numeric_limits<float>::infinity());
  VF m1 = m0;
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    m0 = hn::Max(m0, hn::LoadU(d, x + i));
    m1 = hn::Max(m1, hn::LoadU(d, x + i + lanes));
  }
  for (; i + lanes <= n; i += lanes) m0 = hn::Max(m0, hn::LoadU(d, x + i));
  if (i < n) m1 = hn::Max(m1, LoadTail(d, x + i, n - i, -std::numeric_limits<float>::infinity()));
  return hn::GetLane(hn::MaxOfLanes(d, hn::Max(m0, m1)));
}

// max (or min) of x[0..n) with NaN propagated: NaNs are noted in a mask of their own, so the
// running lanes stay one Max per vector; any NaN makes the result NaN (ReduceMax/ReduceMin, numpy).
inline float RowExtremeImpl(const float* x, int64_t n64, bool max) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  const float identity = max ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  VF m0 = hn::Set(d, identity), m1 = m0;
  auto nan = hn::IsNaN(m0);  // all false
  size_t i = 0;
  if (max) {
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      const VF a = hn::LoadU(d, x + i), b = hn::LoadU(d, x + i + lanes);
      nan = hn::Or(nan, hn::Or(hn::IsNaN(a), hn::IsNaN(b)));
      m0 = hn::Max(m0, a);
      m1 = hn::Max(m1, b);
    }
  } else {
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      const VF a = hn::LoadU(d, x + i), b = hn::LoadU(d, x + i + lanes);
      nan = hn::Or(nan, hn::Or(hn::IsNaN(a), hn::IsNaN(b)));
      m0 = hn::Min(m0, a);
      m1 = hn::Min(m1, b);
    }
  }
  for (; i < n; i += lanes) {
    const VF a = i + lanes <= n ? hn::LoadU(d, x + i) : LoadTail(d, x + i, n - i, identity);
    nan = hn::Or(nan, hn::IsNaN(a));
    m0 = max ? hn::Max(m0, a) : hn::Min(m0, a);
  }
  if (!hn::AllFalse(d, nan)) return std::numeric_limits<float>::quiet_NaN();
  return max ? hn::GetLane(hn::MaxOfLanes(d, hn::Max(m0, m1))) : hn::GetLane(hn::MinOfLanes(d, hn::Min(m0, m1)));
}

// The first (or, with `last`, the last) i with x[i] == v, or -1: a vector compare per step, the
// lanes of the vector that matched scanned one by one.
inline int64_t RowFindImpl(const float* x, int64_t n, float v, bool last) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const VF vv = hn::Set(d, v);
  if (!last) {
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      if (!hn::AllFalse(d, hn::Eq(hn::LoadU(d, x + i), vv))) break;
    }
    for (; i < n; ++i) {
      if (x[i] == v) return i;
    }
    return -1;
  }
  int64_t end = n;  // x[end..n) holds no match
  for (; end - lanes >= 0; end -= lanes) {
    if (!hn::AllFalse(d, hn::Eq(hn::LoadU(d, x + end - lanes), vv))) break;
  }
  for (int64_t i = end - 1; i >= 0; --i) {
    if (x[i] == v) return i;
  }
  return -1;
}

// exp(x) for a softmax's shifted scores (x <= 0, but any x up to 88 works): Cody-Waite reduction
// to r in [-ln2/2, ln2/2], Cephes' degree-6 polynomial for exp(r), and 2^n written straight into
// the exponent bits. Within 2 ulp of exp where exp is a normal float; x < -87.3 (a weight below
// 1e-38 next to the row's maximum of 1) gives 0, so no denormal is ever made. NaN stays NaN.
// About half the instructions of hwy's Exp, which handles the whole range: the attention core's
// softmax spent 19% of its time in it (ViT-S shape, 1 thread; attention_benchmark).
HWY_INLINE VF SoftmaxExp(DF d, VF x) {
  const hn::RebindToSigned<DF> di;
  const VF hi = hn::Set(d, 88.0f);  // n <= 127; a NaN fails the test and stays
  const VF xc = hn::IfThenElse(hn::Gt(x, hi), hi, x);
  const VF n = hn::Round(hn::Mul(xc, hn::Set(d, 1.44269504088896341f)));
  VF r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), xc);  // ln 2 in two parts: n * hi is exact
  r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
  VF p = hn::Set(d, 1.9875691500e-4f);
  p = hn::MulAdd(p, r, hn::Set(d, 1.3981999507e-3f));
  p = hn::MulAdd(p, r, hn::Set(d, 8.3334519073e-3f));
  p = hn::MulAdd(p, r, hn::Set(d, 4.1665795894e-2f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.6666665459e-1f));
  p = hn::MulAdd(p, r, hn::Set(d, 5.0000001201e-1f));
  p = hn::MulAdd(p, hn::Mul(r, r), hn::Add(r, hn::Set(d, 1.0f)));
  const auto bits = hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, 127)));
  return hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, -87.33654f)), hn::Mul(p, hn::BitCast(d, bits)));
}

inline float ExpShiftSumImpl(const float* x, float scale, float shift, float* y, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  const VF a = hn::Set(d, scale), s = hn::Set(d, shift);
  VF sum0 = hn::Zero(d), sum1 = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const VF e0 = SoftmaxExp(d, hn::MulSub(hn::LoadU(d, x + i), a, s));
    const VF e1 = SoftmaxExp(d, hn::MulSub(hn::LoadU(d, x + i + lanes), a, s));
    hn::StoreU(e0, d, y + i);
    hn::StoreU(e1, d, y + i + lanes);
    sum0 = hn::Add(sum0, e0);
    sum1 = hn::Add(sum1, e1);
  }
  for (; i + lanes <= n; i += lanes) {
    const VF e = SoftmaxExp(d, hn::MulSub(hn::LoadU(d, x + i), a, s));
    hn::StoreU(e, d, y + i);
    sum0 = hn::Add(sum0, e);
  }
  if (i < n) {
    const VF e = hn::IfThenElseZero(hn::FirstN(d, n - i), SoftmaxExp(d, hn::MulSub(LoadTail(d, x + i, n - i, 0.0f), a, s)));
    StoreTail(d, e, y + i, n - i);
    sum1 = hn::Add(sum1, e);
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(sum0, sum1)));
}

inline void AffineRowImpl(const float* x, float a, float b, float* y, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  const VF va = hn::Set(d, a), vb = hn::Set(d, b);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Add(hn::Mul(hn::LoadU(d, x + i), va), vb), d, y + i);
  if (i < n) StoreTail(d, hn::Add(hn::Mul(LoadTail(d, x + i, n - i, 0.0f), va), vb), y + i, n - i);
}

// Four float accumulators per lane keep the rounding error of long rows small; the lanes are
// added in double at the end.
inline double RowSumImpl(const float* x, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  VF s0 = hn::Zero(d), s1 = s0, s2 = s0, s3 = s0;
  size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    s0 = hn::Add(s0, hn::LoadU(d, x + i));
    s1 = hn::Add(s1, hn::LoadU(d, x + i + lanes));
    s2 = hn::Add(s2, hn::LoadU(d, x + i + 2 * lanes));
    s3 = hn::Add(s3, hn::LoadU(d, x + i + 3 * lanes));
  }
  for (; i + lanes <= n; i += lanes) s0 = hn::Add(s0, hn::LoadU(d, x + i));
  if (i < n) s1 = hn::Add(s1, LoadTail(d, x + i, n - i, 0.0f));
  HWY_ALIGN float buf[hn::MaxLanes(DF())];
  hn::Store(hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)), d, buf);
  double total = 0.0;
  for (size_t k = 0; k < lanes; ++k) total += buf[k];
  return total;
}

// sum(x), or sum(x^2) with `squares`, accumulated in double: each float is widened as it is loaded
// (one conversion per half vector), so the fold runs at the rate of the loads where a scalar double
// loop ran at one add per element.
template <bool kSquares>
inline double RowSumWideOf(const float* x, size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> dh;  // half a float vector: one double per lane
  using VD = hn::Vec<decltype(dd)>;
  const size_t lanes = hn::Lanes(dd);
  const auto term = [&](size_t i) {
    const VD v = hn::PromoteTo(dd, hn::LoadU(dh, x + i));
    return kSquares ? hn::Mul(v, v) : v;
  };
  VD s0 = hn::Zero(dd), s1 = s0, s2 = s0, s3 = s0;
  size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    s0 = hn::Add(s0, term(i));
    s1 = hn::Add(s1, term(i + lanes));
    s2 = hn::Add(s2, term(i + 2 * lanes));
    s3 = hn::Add(s3, term(i + 3 * lanes));
  }
  for (; i + lanes <= n; i += lanes) s0 = hn::Add(s0, term(i));
  double total = hn::GetLane(hn::SumOfLanes(dd, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
  for (; i < n; ++i) total += kSquares ? static_cast<double>(x[i]) * x[i] : static_cast<double>(x[i]);
  return total;
}
inline double RowSumWideImpl(const float* x, int64_t n, bool squares) {
  return squares ? RowSumWideOf<true>(x, static_cast<size_t>(n)) : RowSumWideOf<false>(x, static_cast<size_t>(n));
}

inline double RowSumSquaredDiffImpl(const float* x, float c, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  const VF vc = hn::Set(d, c);
  VF s0 = hn::Zero(d), s1 = s0;
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const VF a = hn::Sub(hn::LoadU(d, x + i), vc);
    const VF b = hn::Sub(hn::LoadU(d, x + i + lanes), vc);
    s0 = hn::MulAdd(a, a, s0);
    s1 = hn::MulAdd(b, b, s1);
  }
  for (; i + lanes <= n; i += lanes) {
    const VF a = hn::Sub(hn::LoadU(d, x + i), vc);
    s0 = hn::MulAdd(a, a, s0);
  }
  if (i < n) {
    const VF a = hn::Sub(LoadTail(d, x + i, n - i, c), vc);  // padded lanes give 0
    s1 = hn::MulAdd(a, a, s1);
  }
  HWY_ALIGN float buf[hn::MaxLanes(DF())];
  hn::Store(hn::Add(s0, s1), d, buf);
  double total = 0.0;
  for (size_t k = 0; k < lanes; ++k) total += buf[k];
  return total;
}

inline void NormalizeRowImpl(const float* x, float mean, float inv_std, const float* scale, const float* bias,
                             float* y, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  const VF vm = hn::Set(d, mean), vi = hn::Set(d, inv_std);
  auto one = [&](VF v, size_t i, size_t count) {
    VF r = hn::Mul(hn::Sub(v, vm), vi);
    if (scale != nullptr) r = hn::Mul(r, count == lanes ? hn::LoadU(d, scale + i) : LoadTail(d, scale + i, count, 0.0f));
    if (bias != nullptr) r = hn::Add(r, count == lanes ? hn::LoadU(d, bias + i) : LoadTail(d, bias + i, count, 0.0f));
    return r;
  };
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(one(hn::LoadU(d, x + i), i, lanes), d, y + i);
  if (i < n) StoreTail(d, one(LoadTail(d, x + i, n - i, 0.0f), i, n - i), y + i, n - i);
}

inline void MaxIntoImpl(const float* x, float* m, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Max(hn::LoadU(d, m + i), hn::LoadU(d, x + i)), d, m + i);
  for (; i < n; ++i) m[i] = x[i] > m[i] ? x[i] : m[i];
}

inline void ExpSubAccumulateImpl(const float* x, const float* m, float* y, float* s, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  auto one = [&](VF xv, VF mv) { return SoftmaxExp(d, hn::Sub(xv, mv)); };
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF e = one(hn::LoadU(d, x + i), hn::LoadU(d, m + i));
    hn::StoreU(e, d, y + i);
    hn::StoreU(hn::Add(hn::LoadU(d, s + i), e), d, s + i);
  }
  if (i < n) {
    const size_t rem = n - i;
    const VF e = one(LoadTail(d, x + i, rem, 0.0f), LoadTail(d, m + i, rem, 0.0f));
    StoreTail(d, e, y + i, rem);
    StoreTail(d, hn::Add(LoadTail(d, s + i, rem, 0.0f), e), s + i, rem);
  }
}

inline void DivideIntoImpl(float* y, const float* s, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Div(hn::LoadU(d, y + i), hn::LoadU(d, s + i)), d, y + i);
  for (; i < n; ++i) y[i] /= s[i];
}

inline void SubtractLogIntoImpl(const float* x, const float* m, const float* s, float* y, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  auto one = [&](VF xv, VF mv, VF sv) { return hn::Sub(hn::Sub(xv, mv), hn::Log(d, sv)); };
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(one(hn::LoadU(d, x + i), hn::LoadU(d, m + i), hn::LoadU(d, s + i)), d, y + i);
  }
  if (i < n) {
    const size_t rem = n - i;
    StoreTail(d, one(LoadTail(d, x + i, rem, 0.0f), LoadTail(d, m + i, rem, 0.0f), LoadTail(d, s + i, rem, 1.0f)),
              y + i, rem);
  }
}

inline void AddSquaresImpl(const float* x, float* acc, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF v = hn::LoadU(d, x + i);
    hn::StoreU(hn::MulAdd(v, v, hn::LoadU(d, acc + i)), d, acc + i);
  }
  for (; i < n; ++i) acc[i] += x[i] * x[i];
}

// base^exponent as exp(exponent * log(base)).
inline void ScaleByPowerImpl(const float* x, const float* s, float bias, float coef, float exponent, float* y,
                             int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  const VF vb = hn::Set(d, bias), vc = hn::Set(d, coef), ve = hn::Set(d, exponent);
  auto one = [&](VF xv, VF sv) {
    const VF base = hn::MulAdd(vc, sv, vb);
    return hn::Mul(xv, hn::Exp(d, hn::Mul(ve, hn::Log(d, base))));
  };
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(one(hn::LoadU(d, x + i), hn::LoadU(d, s + i)), d, y + i);
  if (i < n) StoreTail(d, one(LoadTail(d, x + i, n - i, 0.0f), LoadTail(d, s + i, n - i, 0.0f)), y + i, n - i);
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
