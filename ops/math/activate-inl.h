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
#include "ops/math/gemm.h"  // ActivationSpec

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V = hn::Vec<D>>
HWY_INLINE V Activate(D d, const ActivationSpec& act, V x) {
  switch (act.kind) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return hn::Max(x, hn::Zero(d));
    case Activation::kLeakyRelu:
      return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(x, hn::Set(d, act.alpha)), x);
    case Activation::kClip:
      return hn::Min(hn::Max(x, hn::Set(d, act.alpha)), hn::Set(d, act.beta));
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
      return hn::Min(hn::Max(y, hn::Zero(d)), hn::Set(d, 1.0f));
    }
    case Activation::kSwish: {
      // x * 1 / (1 + e^-x), the reciprocal by an estimate and one Newton step (a 512-bit divide
      // costs more than the rest of the epilogue): within 2 ulp. -x is capped at 80 so that the
      // denominator stays finite (its estimate of a reciprocal of inf would give NaN): x * sigmoid(x)
      // there is below 1e-33 in magnitude either way, though -inf gives -inf rather than NaN.
      const V den = hn::Add(hn::Set(d, 1.0f), hn::Exp(d, hn::Min(hn::Neg(x), hn::Set(d, 80.0f))));
      const V estimate = hn::ApproximateReciprocal(den);
      return hn::Mul(x, hn::Mul(estimate, hn::NegMulAdd(den, estimate, hn::Set(d, 2.0f))));
    }
  }
  return x;
}

// For loops that fix the activation's kind when compiling (a switch per call rather than per
// vector): none, Relu (the common one, inline), or any other through Activate's switch.
enum class EpilogueKind { kNone, kRelu, kAny };

template <EpilogueKind kKind, class D, class V = hn::Vec<D>>
HWY_INLINE V ApplyEpilogue(D d, const ActivationSpec& act, V x) {
  if constexpr (kKind == EpilogueKind::kRelu) return hn::Max(x, hn::Zero(d));
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
