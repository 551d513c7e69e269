// Highway bodies of DotRowsF32 / AccumulateRowsF32, compiled once per CPU target through
// hwy/foreach_target.h (see vec_ops.cc).
#if defined(ONNXFLOW_OPS_ATTENTION_VEC_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_ATTENTION_VEC_OPS_INL_H_
#undef ONNXFLOW_OPS_ATTENTION_VEC_OPS_INL_H_
#else
#define ONNXFLOW_OPS_ATTENTION_VEC_OPS_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace vec {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Two independent accumulators hide the FMA latency (4 cycles, 2 ports) on short rows.
inline float DotOne(const float* a, const float* b, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto sum0 = hn::Zero(d);
  auto sum1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    sum0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), sum0);
    sum1 = hn::MulAdd(hn::LoadU(d, a + i + lanes), hn::LoadU(d, b + i + lanes), sum1);
  }
  for (; i + lanes <= n; i += lanes) sum0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), sum0);
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(sum0, sum1)));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// Four rows at a time share each load of x and keep four FMA chains in flight.
inline void DotRowsImpl(const float* x, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* m0 = m + r * m_stride;
    const float* m1 = m0 + m_stride;
    const float* m2 = m1 + m_stride;
    const float* m3 = m2 + m_stride;
    auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      const auto vx = hn::LoadU(d, x + i);
      s0 = hn::MulAdd(vx, hn::LoadU(d, m0 + i), s0);
      s1 = hn::MulAdd(vx, hn::LoadU(d, m1 + i), s1);
      s2 = hn::MulAdd(vx, hn::LoadU(d, m2 + i), s2);
      s3 = hn::MulAdd(vx, hn::LoadU(d, m3 + i), s3);
    }
    float t0 = hn::GetLane(hn::SumOfLanes(d, s0)), t1 = hn::GetLane(hn::SumOfLanes(d, s1));
    float t2 = hn::GetLane(hn::SumOfLanes(d, s2)), t3 = hn::GetLane(hn::SumOfLanes(d, s3));
    for (; i < n; ++i) {
      t0 += x[i] * m0[i];
      t1 += x[i] * m1[i];
      t2 += x[i] * m2[i];
      t3 += x[i] * m3[i];
    }
    out[r] = t0;
    out[r + 1] = t1;
    out[r + 2] = t2;
    out[r + 3] = t3;
  }
  for (; r < rows; ++r) out[r] = DotOne(x, m + r * m_stride, n);
}

// out += w[r] * row r, for every row; the output row stays in L1 while the rows stream by.
inline void AccumulateRowsImpl(const float* w, const float* m, int64_t m_stride, int64_t rows, int64_t n,
                               float* out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r) {
    const float wr = w[r];
    if (wr == 0.0f) continue;
    const float* row = m + r * m_stride;
    const auto vw = hn::Set(d, wr);
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      hn::StoreU(hn::MulAdd(vw, hn::LoadU(d, row + i), hn::LoadU(d, out + i)), d, out + i);
    }
    for (; i < n; ++i) out[i] += wr * row[i];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace vec
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
