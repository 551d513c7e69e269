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

// Copies the last `rem` (< lanes) floats into a full vector padded with `pad`.
inline VF LoadTail(DF d, const float* x, size_t rem, float pad) {
  HWY_ALIGN float buf[hn::MaxLanes(DF())];
  for (size_t i = 0; i < hn::Lanes(d); ++i) buf[i] = i < rem ? x[i] : pad;
  return hn::Load(d, buf);
}
inline void StoreTail(DF d, VF v, float* y, size_t rem) {
  HWY_ALIGN float buf[hn::MaxLanes(DF())];
  hn::Store(v, d, buf);
  std::memcpy(y, buf, rem * sizeof(float));
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

inline float ExpShiftSumImpl(const float* x, float shift, float* y, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  const VF s = hn::Set(d, shift);
  VF sum = hn::Zero(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF e = hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), s));
    hn::StoreU(e, d, y + i);
    sum = hn::Add(sum, e);
  }
  if (i < n) {
    const VF e = hn::IfThenElseZero(hn::FirstN(d, n - i), hn::Exp(d, hn::Sub(LoadTail(d, x + i, n - i, shift), s)));
    StoreTail(d, e, y + i, n - i);
    sum = hn::Add(sum, e);
  }
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

inline void AffineRowImpl(const float* x, float a, float b, float* y, int64_t n64) {
  const DF d;
  const size_t n = static_cast<size_t>(n64), lanes = hn::Lanes(d);
  const VF va = hn::Set(d, a), vb = hn::Set(d, b);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::MulAdd(hn::LoadU(d, x + i), va, vb), d, y + i);
  if (i < n) StoreTail(d, hn::MulAdd(LoadTail(d, x + i, n - i, 0.0f), va, vb), y + i, n - i);
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
  auto one = [&](VF xv, VF mv) { return hn::Exp(d, hn::Sub(xv, mv)); };
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
