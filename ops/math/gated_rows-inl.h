// SIMD part of GatedActivation (gated_activation.h): y = act(gate) * up over one row, compiled
// once per CPU target through hwy/foreach_target.h (gated_activation.cc).

#if defined(ONNXFLOW_OPS_MATH_GATED_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_MATH_GATED_ROWS_INL_H_
#undef ONNXFLOW_OPS_MATH_GATED_ROWS_INL_H_
#else
#define ONNXFLOW_OPS_MATH_GATED_ROWS_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "ops/elementwise/vector_math-inl.h"  // SigmoidVec, TanhVec, ErfVec
#include "ops/math/activate-inl.h"            // SigmoidEstimate, MaxKeepNaN
#include "ops/math/gated_activation.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The gate's activation on one vector: Swish as the product epilogue FuseSwish makes
// (SigmoidEstimate, 1e-6 relative), GELU's erf form as FuseGelu's epilogue (ErfVec), its tanh form
// through the same sigmoid.
template <ActOp kOp, class D, class V = hn::Vec<D>>
HWY_INLINE V Gate(D d, V alpha, V x) {
  if constexpr (kOp == ActOp::kSwish) {
    return hn::Mul(x, SigmoidEstimate(d, hn::Mul(alpha, x)));
  } else if constexpr (kOp == ActOp::kGelu) {
    const V half_x = hn::Mul(x, hn::Set(d, 0.5f));
    return hn::MulAdd(half_x, ErfVec(d, hn::Mul(x, hn::Set(d, 0.70710678118654752440f))), half_x);
  } else if constexpr (kOp == ActOp::kGeluTanh) {
    // 0.5 x (1 + tanh(z)) = x sigmoid(2 z), z = sqrt(2/pi) (x + 0.044715 x^3): the epilogue's
    // sigmoid (one exp polynomial and a reciprocal estimate) instead of Highway's Tanh.
    const V cube = hn::Mul(hn::Mul(x, x), x);
    const V two_z = hn::Mul(hn::Set(d, 2.0f * 0.79788456080286535588f), hn::MulAdd(cube, hn::Set(d, 0.044715f), x));
    return hn::Mul(x, SigmoidEstimate(d, two_z));
  } else if constexpr (kOp == ActOp::kSigmoid) {
    return SigmoidVec(d, x);
  } else if constexpr (kOp == ActOp::kRelu) {
    return MaxKeepNaN(d, hn::Zero(d), x);
  } else {
    return TanhVec(d, x);
  }
}

template <ActOp kOp>
HWY_NOINLINE void GatedRow(float alpha_value, const float* HWY_RESTRICT gate, const float* HWY_RESTRICT up,
                           float* HWY_RESTRICT y, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto alpha = hn::Set(d, alpha_value);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::Mul(Gate<kOp>(d, alpha, hn::LoadU(d, gate + i)), hn::LoadU(d, up + i)), d, y + i);
  }
  if (i < n) {
    // The tail through zero-padded stack vectors: nothing read or written past the row.
    HWY_ALIGN float g[hn::MaxLanes(d)] = {}, u[hn::MaxLanes(d)] = {};
    const size_t bytes = static_cast<size_t>(n - i) * sizeof(float);
    std::memcpy(g, gate + i, bytes);
    std::memcpy(u, up + i, bytes);
    hn::Store(hn::Mul(Gate<kOp>(d, alpha, hn::Load(d, g)), hn::Load(d, u)), d, g);
    std::memcpy(y + i, g, bytes);
  }
}

void GatedRowsImpl(int op, float alpha, const float* gate, const float* up, float* y, int64_t n) {
  switch (static_cast<ActOp>(op)) {
    case ActOp::kSwish: return GatedRow<ActOp::kSwish>(alpha, gate, up, y, n);
    case ActOp::kGelu: return GatedRow<ActOp::kGelu>(alpha, gate, up, y, n);
    case ActOp::kGeluTanh: return GatedRow<ActOp::kGeluTanh>(alpha, gate, up, y, n);
    case ActOp::kSigmoid: return GatedRow<ActOp::kSigmoid>(alpha, gate, up, y, n);
    case ActOp::kRelu: return GatedRow<ActOp::kRelu>(alpha, gate, up, y, n);
    default: return GatedRow<ActOp::kTanh>(alpha, gate, up, y, n);  // the last of Supported()
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_MATH_GATED_ROWS_INL_H_
