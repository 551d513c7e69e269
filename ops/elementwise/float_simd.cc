#include "ops/elementwise/float_simd.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/elementwise/float_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/elementwise/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Calls f(vector_op) with the vector function of `op`, so the loops around it see one op.
template <class F>
void WithFloatBinaryOp(int op, const F& f) {
  switch (static_cast<FloatBinaryOp>(op)) {
    case FloatBinaryOp::kAdd:
      return f([](auto, auto x, auto y) { return hn::Add(x, y); });
    case FloatBinaryOp::kSub:
      return f([](auto, auto x, auto y) { return hn::Sub(x, y); });
    case FloatBinaryOp::kMul:
      return f([](auto, auto x, auto y) { return hn::Mul(x, y); });
    case FloatBinaryOp::kDiv:
      return f([](auto, auto x, auto y) { return hn::Div(x, y); });
    case FloatBinaryOp::kMax:
      // Highway leaves Max of a NaN unspecified: x86 returns the second operand, the portable
      // target the number. ONNX wants the NaN of either operand.
      return f([](auto, auto x, auto y) {
        return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::IsNaN(y), y, hn::Max(x, y)));
      });
    case FloatBinaryOp::kMin:
      return f([](auto, auto x, auto y) {
        return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::IsNaN(y), y, hn::Min(x, y)));
      });
  }
}

void FloatBinaryImpl(int op, const float* a, bool a_bcast, const float* b, bool b_bcast, float* out, int64_t n) {
  WithFloatBinaryOp(op, [&](auto vector_op) { MapBinary(a, a_bcast, b, b_bcast, out, n, vector_op); });
}

void FloatBinaryRowsImpl(int op, const float* full, const float* row, bool row_first, float* out, int64_t rows,
                         int64_t width) {
  WithFloatBinaryOp(op, [&](auto vector_op) {
    for (int64_t r = 0; r < rows; ++r) {
      if (row_first) {
        MapBinary(row, false, full + r * width, false, out + r * width, width, vector_op);
      } else {
        MapBinary(full + r * width, false, row, false, out + r * width, width, vector_op);
      }
    }
  });
}

void FloatUnaryImpl(int op, const float* x, float* y, int64_t n) {
  switch (static_cast<FloatUnaryOp>(op)) {
    case FloatUnaryOp::kAbs:
      return MapUnary(x, y, n, [](auto, auto v) { return hn::Abs(v); });
    case FloatUnaryOp::kNeg:
      return MapUnary(x, y, n, [](auto, auto v) { return hn::Neg(v); });
    case FloatUnaryOp::kSqrt:
      return MapUnary(x, y, n, [](auto, auto v) { return hn::Sqrt(v); });
    case FloatUnaryOp::kReciprocal:
      return MapUnary(x, y, n, [](auto d, auto v) { return hn::Div(hn::Set(d, 1.0f), v); });
    case FloatUnaryOp::kExp:
      return MapUnary(x, y, n, [](auto d, auto v) { return ExpVec(d, v); });
    case FloatUnaryOp::kLog:
      return MapUnary(x, y, n, [](auto d, auto v) { return LogVec(d, v); });
    case FloatUnaryOp::kErf:
      return MapUnary(x, y, n, [](auto d, auto v) { return ErfVec(d, v); });
    case FloatUnaryOp::kTanh:
      return MapUnary(x, y, n, [](auto d, auto v) { return TanhVec(d, v); });
    case FloatUnaryOp::kSigmoid:
      return MapUnary(x, y, n, [](auto d, auto v) { return SigmoidVec(d, v); });
    case FloatUnaryOp::kCeil:
      return MapUnary(x, y, n, [](auto, auto v) { return hn::Ceil(v); });
    case FloatUnaryOp::kFloor:
      return MapUnary(x, y, n, [](auto, auto v) { return hn::Floor(v); });
    case FloatUnaryOp::kRound:
      return MapUnary(x, y, n, [](auto, auto v) { return hn::Round(v); });
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(FloatBinaryImpl);
HWY_EXPORT(FloatBinaryRowsImpl);
HWY_EXPORT(FloatUnaryImpl);

namespace {

float ScalarBinary(FloatBinaryOp op, float x, float y) {
  switch (op) {
    case FloatBinaryOp::kAdd:
      return x + y;
    case FloatBinaryOp::kSub:
      return x - y;
    case FloatBinaryOp::kMul:
      return x * y;
    case FloatBinaryOp::kDiv:
      return x / y;
    case FloatBinaryOp::kMax:
      return x != x ? x : (y != y ? y : (x < y ? y : x));
    case FloatBinaryOp::kMin:
      return x != x ? x : (y != y ? y : (y < x ? y : x));
  }
  return 0.0f;
}

}  // namespace

void FloatBinary(FloatBinaryOp op, const float* a, bool a_bcast, const float* b, bool b_bcast, float* out, int64_t n) {
  if (n <= 0) return;
  // Short runs (a [M,3] + [3] broadcast walks runs of 3) cost more in dispatch and tail handling
  // than in arithmetic: do them inline.
  if (n < 8) {
    for (int64_t i = 0; i < n; ++i) out[i] = ScalarBinary(op, a[a_bcast ? 0 : i], b[b_bcast ? 0 : i]);
    return;
  }
  HWY_DYNAMIC_DISPATCH(FloatBinaryImpl)(static_cast<int>(op), a, a_bcast, b, b_bcast, out, n);
}

void FloatBinaryRows(FloatBinaryOp op, const float* full, const float* row, bool row_first, float* out, int64_t rows,
                     int64_t width) {
  if (rows <= 0 || width <= 0) return;
  HWY_DYNAMIC_DISPATCH(FloatBinaryRowsImpl)(static_cast<int>(op), full, row, row_first, out, rows, width);
}

void FloatUnary(FloatUnaryOp op, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(FloatUnaryImpl)(static_cast<int>(op), x, y, n);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
