// The fused activations on one vector, for the epilogues of every kernel that fuses one (the GEMM,
// the channel-blocked convolution). Included from other -inl.h files, once per CPU target.

#if defined(ONNXFLOW_OPS_MATH_ACTIVATE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_MATH_ACTIVATE_INL_H_
#undef ONNXFLOW_OPS_MATH_ACTIVATE_INL_H_
#else
#define ONNXFLOW_OPS_MATH_ACTIVATE_INL_H_
#endif

#include <type_traits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "ops/elementwise/vector_math-inl.h"  // ErfVec
#include "ops/math/gemm.h"  // ActivationSpec

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// max(lo, x) and min(hi, x) that keep a NaN x NaN, as ONNX Runtime's fused activations and the
// standalone Relu and Clip do: a NaN (an fp16 overflow's inf times a zero weight, a bad input)
// must not come out of a fused convolution as 0 or as the clip bound. x86's max and min return
// their second operand when either is NaN, so with x second it is one instruction; Highway's
// portable targets return the number, so there x is tested.
#if HWY_ARCH_X86 && (HWY_TARGET & (HWY_EMU128 | HWY_SCALAR)) == 0
template <class D, class V = hn::Vec<D>>
HWY_INLINE V MaxKeepNaN(D, V lo, V x) {
  return hn::Max(lo, x);
}
template <class D, class V = hn::Vec<D>>
HWY_INLINE V MinKeepNaN(D, V hi, V x) {
  return hn::Min(hi, x);
}
#else
template <class D, class V = hn::Vec<D>>
HWY_INLINE V MaxKeepNaN(D, V lo, V x) {
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Max(lo, x));
}
template <class D, class V = hn::Vec<D>>
HWY_INLINE V MinKeepNaN(D, V hi, V x) {
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Min(hi, x));
}
#endif

// 1 / (1 + e^-x) within 1e-6 relative, for Swish's epilogue, where it runs on every output of a
// convolution: cheaper than hwy's Exp (range checks, two-step scaling) and a divide. x is clamped
// to [-87, 87], where e^-x and 1 + e^-x stay finite for the reciprocal estimate; e^-x = 2^n 2^f
// with n = round(-x log2(e)) and f = -x log2(e) - n from a two-part log2(e) (so f keeps its
// accuracy when n is large), 2^f by its degree-6 Taylor polynomial on [-1/2, 1/2] (error
// 1.2e-7), 2^n put in the exponent bits; the reciprocal by an estimate and a Newton step.
// A NaN x gives about 0 (the clamp drops it); Swish's product with x keeps the NaN.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V SigmoidEstimate(D d, V x) {
  const hn::RebindToSigned<D> di;
  const V xc = hn::Min(hn::Max(x, hn::Set(d, -87.0f)), hn::Set(d, 87.0f));
  const V n = hn::Round(hn::Mul(xc, hn::Set(d, -1.44269504f)));
  V f = hn::MulAdd(xc, hn::Set(d, -1.44269502162933349609375f), hn::Neg(n));  // log2(e), float part
  f = hn::MulAdd(xc, hn::Set(d, -1.925963033500011e-08f), f);                  // and the rest
  V p = hn::Set(d, 1.5403530e-4f);  // ln(2)^k / k!, k = 6 down to 0
  p = hn::MulAdd(p, f, hn::Set(d, 1.3333558e-3f));
  p = hn::MulAdd(p, f, hn::Set(d, 9.6181291e-3f));
  p = hn::MulAdd(p, f, hn::Set(d, 5.5504109e-2f));
  p = hn::MulAdd(p, f, hn::Set(d, 2.4022651e-1f));
  p = hn::MulAdd(p, f, hn::Set(d, 6.9314718e-1f));
  p = hn::MulAdd(p, f, hn::Set(d, 1.0f));
  const V two_to_n = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, 127))));
  const V den = hn::MulAdd(p, two_to_n, hn::Set(d, 1.0f));
  const V estimate = hn::ApproximateReciprocal(den);
  return hn::Mul(estimate, hn::NegMulAdd(den, estimate, hn::Set(d, 2.0f)));
}

template <class D, class V = hn::Vec<D>>
HWY_INLINE V Activate(D d, const ActivationSpec& act, V x) {
  switch (act.kind) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return MaxKeepNaN(d, hn::Zero(d), x);
    case Activation::kLeakyRelu:
      return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(x, hn::Set(d, act.alpha)), x);
    case Activation::kClip:
      return MinKeepNaN(d, hn::Set(d, act.beta), MaxKeepNaN(d, hn::Set(d, act.alpha), x));
    case Activation::kSigmoid: {
      // 1 / (1 + e^-x); Exp overflows to inf for very negative x, which gives 0 as it should.
      const V one = hn::Set(d, 1.0f);
      const V e = hn::Exp(d, hn::Neg(x));
      return hn::Div(one, hn::Add(one, e));
    }
    case Activation::kTanh:
      return hn::Tanh(d, x);
    case Activation::kHardSigmoid: {
      const V y = hn::MulAdd(x, hn::Set(d, act.alpha), hn::Set(d, act.beta));
      return MinKeepNaN(d, hn::Set(d, 1.0f), MaxKeepNaN(d, hn::Zero(d), y));
    }
    case Activation::kHardSwish: {
      // As the HardSwish kernel computes it (ops/activation/activation_simd.cc), one rounding for
      // one: a fused convolution's output equals the unfused pair's. A NaN x stays NaN (x * ...).
      const V y = hn::MulAdd(x, hn::Set(d, 1.0f / 6.0f), hn::Set(d, 0.5f));
      return hn::Mul(x, hn::Min(hn::Max(y, hn::Zero(d)), hn::Set(d, 1.0f)));
    }
    case Activation::kSwish:
      // x * sigmoid(x). Below x = -87 the sigmoid stays at e^-87 instead of falling: x * sigmoid(x)
      // is below 1e-35 in magnitude either way, but -inf gives -inf, not NaN.
      return hn::Mul(x, SigmoidEstimate(d, x));
    case Activation::kGelu: {
      // 0.5 x (1 + erf(x / sqrt 2)): the erf the written-out form's Erf node runs.
      const V half_x = hn::Mul(x, hn::Set(d, 0.5f));
      return hn::MulAdd(half_x, ErfVec(d, hn::Mul(x, hn::Set(d, 0.70710678118654752440f))), half_x);
    }
  }
  return x;
}

// For loops that fix the activation's kind when compiling (a switch per call rather than per
// vector): none, Relu (the common one, inline), or any other through Activate's switch.
enum class EpilogueKind { kNone, kRelu, kAny };

template <EpilogueKind kKind, class D, class V = hn::Vec<D>>
HWY_INLINE V ApplyEpilogue(D d, const ActivationSpec& act, V x) {
  if constexpr (kKind == EpilogueKind::kRelu) return MaxKeepNaN(d, hn::Zero(d), x);
  if constexpr (kKind == EpilogueKind::kAny) return Activate(d, act, x);
  return x;
}

template <EpilogueKind kKind>
using EpilogueTag = std::integral_constant<EpilogueKind, kKind>;

// Calls loop(EpilogueTag<kind>{}) with the EpilogueKind of `act`; the loop reads the kind as
// decltype(tag)::value, a constant when compiling.
template <class Loop>
HWY_INLINE void WithEpilogueKind(const ActivationSpec& act, const Loop& loop) {
  switch (act.kind) {
    case Activation::kNone:
      return loop(EpilogueTag<EpilogueKind::kNone>{});
    case Activation::kRelu:
      return loop(EpilogueTag<EpilogueKind::kRelu>{});
    default:
      return loop(EpilogueTag<EpilogueKind::kAny>{});
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_MATH_ACTIVATE_INL_H_
