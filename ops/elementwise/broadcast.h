// The broadcasting engine behind every elementwise kernel with more than one input.
//
// A BroadcastPlan maps K inputs (numpy-broadcastable to one output shape) onto the output as a
// sequence of contiguous runs: adjacent dims in which every input either advances or repeats are
// merged once per call, so `[N,C,H,W] + [1,C,1,1]` becomes N*C runs of H*W elements where the
// second input repeats one element. Inside a run each input is either contiguous (reads advance
// with the output) or "broadcast" (one element repeated), which is exactly the shape of work a
// SIMD loop wants: vector-vector, vector-scalar or scalar-vector. Same-shape inputs collapse to a
// single run and a scalar operand is a broadcast input, so those fast paths need no special case.
//
// RunBinary / RunTernary split the output over cores with ParallelFor and call a `span` functor
// per run piece; span functors are plain loops (or SIMD array functions) and never see threads.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/cast/half_simd.h"
#include "ops/framework/kernel.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"

namespace onnxflow {

inline constexpr int kMaxBroadcastInputs = 4;

class BroadcastPlan {
 public:
  // Each input must broadcast to `output` (right-aligned; each dim equal to the output's or 1).
  static Result<BroadcastPlan> Make(const std::vector<const Shape*>& inputs, const Shape& output);

  int64_t total() const { return total_; }
  int64_t inner() const { return inner_; }
  // True when input i repeats one element across each run.
  bool inner_broadcast(int i) const { return inner_broadcast_[i]; }

  // Calls f(const int64_t* input_offsets, int64_t out_offset, int64_t n) for each contiguous
  // piece of output elements [begin, end). input_offsets[i] is where input i's piece starts (its
  // element is repeated n times when inner_broadcast(i)).
  template <typename F>
  void ForEachRun(int64_t begin, int64_t end, F&& f) const;

 private:
  int inputs_ = 0;
  int64_t total_ = 0;
  int64_t inner_ = 1;
  std::array<bool, kMaxBroadcastInputs> inner_broadcast_{};
  Shape outer_dims_;                                               // merged dims outside the run
  std::array<std::vector<int64_t>, kMaxBroadcastInputs> strides_;  // per input, per outer dim
};

template <typename F>
void BroadcastPlan::ForEachRun(int64_t begin, int64_t end, F&& f) const {
  if (begin >= end) return;
  const int rank = static_cast<int>(outer_dims_.size());
  int64_t run = begin / inner_;
  int64_t pos = begin - run * inner_;
  // Mixed-radix counter over the outer dims, and each input's offset at the start of the run.
  std::vector<int64_t> counter(rank, 0);
  std::array<int64_t, kMaxBroadcastInputs> base{};
  for (int d = rank - 1; d >= 0 && run > 0; --d) {
    counter[d] = run % outer_dims_[d];
    run /= outer_dims_[d];
    for (int i = 0; i < inputs_; ++i) base[i] += counter[d] * strides_[i][d];
  }
  std::array<int64_t, kMaxBroadcastInputs> offsets{};
  while (begin < end) {
    const int64_t n = std::min(inner_ - pos, end - begin);
    for (int i = 0; i < inputs_; ++i) offsets[i] = base[i] + (inner_broadcast_[i] ? 0 : pos);
    f(offsets.data(), begin, n);
    begin += n;
    pos = 0;
    for (int d = rank - 1; d >= 0; --d) {
      for (int i = 0; i < inputs_; ++i) base[i] += strides_[i][d];
      if (++counter[d] < outer_dims_[d]) break;
      for (int i = 0; i < inputs_; ++i) base[i] -= strides_[i][d] * outer_dims_[d];
      counter[d] = 0;
    }
  }
}

// When `row` broadcasts against `output` along one range of middle dims only, and `full` has the
// output's shape: out[o][m][i] = op(full[o][m][i], row[o][i]), with `outer`, `middle` and `width`
// the sizes of o, m and i (width > 1, middle > 1). A squeeze-and-excitation block's Mul of
// [N, C/16, H, W, 16] by [N, C/16, 1, 1, 16] is such a product; the plan would cut it into runs of
// 16 elements, each its own call. False for every other pair of shapes.
bool MiddleBroadcast(const Shape& full, const Shape& row, const Shape& output, int64_t* outer, int64_t* middle,
                     int64_t* width);

// out[i] = op(a[i], b[i]) over one run piece, for a functor with a scalar call operator. The
// three loop shapes are written out so the compiler can vectorize each.
template <typename TA, typename TB, typename TO, typename Op>
inline void BinarySpan(const TA* a, bool a_bcast, const TB* b, bool b_bcast, TO* out, int64_t n, const Op& op) {
  if (!a_bcast && !b_bcast) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
  } else if (a_bcast && !b_bcast) {
    const TA x = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = op(x, b[i]);
  } else if (!a_bcast) {
    const TB y = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], y);
  } else {
    const TO v = op(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }
}

// n 16-bit floats as floats, and back: the SIMD array conversions (F16C where the CPU has it).
// Element by element, a float16 Add of a [1, 64, 512, 512] map took 20x the float Add's time.
inline void WidenSpan(const Float16* in, float* out, int64_t n) {
  HalfToFloatArray(reinterpret_cast<const uint16_t*>(in), out, n);
}
inline void WidenSpan(const BFloat16* in, float* out, int64_t n) {
  BFloat16ToFloatArray(reinterpret_cast<const uint16_t*>(in), out, n);
}
inline void NarrowSpan(const float* in, Float16* out, int64_t n) {
  FloatToHalfArray(in, reinterpret_cast<uint16_t*>(out), n);
}
inline void NarrowSpan(const float* in, BFloat16* out, int64_t n) {
  FloatToBFloat16Array(in, reinterpret_cast<uint16_t*>(out), n);
}

// Like BinarySpan for 16-bit float storage types: converts blocks to float, runs
// `float_span(const float*, bool, const float*, bool, float*, n)`, converts back.
template <typename T, typename FloatSpan>
inline void BinarySpanViaFloat(const T* a, bool a_bcast, const T* b, bool b_bcast, T* out, int64_t n,
                               const FloatSpan& float_span) {
  constexpr int64_t kBlock = 256;
  float fa[kBlock], fb[kBlock], fo[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    WidenSpan(a + (a_bcast ? 0 : start), fa, a_bcast ? 1 : m);
    WidenSpan(b + (b_bcast ? 0 : start), fb, b_bcast ? 1 : m);
    float_span(fa, a_bcast, fb, b_bcast, fo, m);
    NarrowSpan(fo, out + start, m);
  }
}

// Runs span(const TA* a, bool a_bcast, const TB* b, bool b_bcast, TO* out, int64_t n) over every
// run of `out` (already allocated with the broadcast shape of a and b), split over cores.
// `cost` is a rough count of simple operations per element.
template <typename TA, typename TB, typename TO, typename Span>
Status RunBinary(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor* out, int64_t cost,
                 const Span& span) {
  ONNXFLOW_ASSIGN_OR_RETURN(BroadcastPlan plan, BroadcastPlan::Make({&a.shape(), &b.shape()}, out->shape()));
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TO* po = out->mutable_data<TO>();
  const bool a_bcast = plan.inner_broadcast(0);
  const bool b_bcast = plan.inner_broadcast(1);
  ParallelFor(ctx, plan.total(), cost, [&](int64_t begin, int64_t end) {
    plan.ForEachRun(begin, end, [&](const int64_t* off, int64_t out_off, int64_t n) {
      span(pa + off[0], a_bcast, pb + off[1], b_bcast, po + out_off, n);
    });
  });
  return Status::Ok();
}

// Elementwise over three broadcast inputs with a scalar functor: out = op(a, b, c).
template <typename TA, typename TB, typename TC, typename TO, typename Op>
Status RunTernary(const KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor& c, Tensor* out,
                  int64_t cost, const Op& op) {
  ONNXFLOW_ASSIGN_OR_RETURN(BroadcastPlan plan,
                            BroadcastPlan::Make({&a.shape(), &b.shape(), &c.shape()}, out->shape()));
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  const TC* pc = c.data<TC>();
  TO* po = out->mutable_data<TO>();
  const int64_t sa = plan.inner_broadcast(0) ? 0 : 1;
  const int64_t sb = plan.inner_broadcast(1) ? 0 : 1;
  const int64_t sc = plan.inner_broadcast(2) ? 0 : 1;
  ParallelFor(ctx, plan.total(), cost, [&](int64_t begin, int64_t end) {
    plan.ForEachRun(begin, end, [&](const int64_t* off, int64_t out_off, int64_t n) {
      const TA* x = pa + off[0];
      const TB* y = pb + off[1];
      const TC* z = pc + off[2];
      TO* o = po + out_off;
      for (int64_t i = 0; i < n; ++i) o[i] = op(x[i * sa], y[i * sb], z[i * sc]);
    });
  });
  return Status::Ok();
}

// Runs span(const TI* x, TO* y, int64_t n) over all elements of x, split over cores.
template <typename TI, typename TO, typename Span>
void RunUnary(const KernelContext& ctx, const Tensor& x, Tensor* y, int64_t cost, const Span& span) {
  const TI* px = x.data<TI>();
  TO* py = y->mutable_data<TO>();
  ParallelFor(ctx, x.size(), cost, [&](int64_t begin, int64_t end) { span(px + begin, py + begin, end - begin); });
}

// Unary span for 16-bit float storage types through a float span(const float*, float*, n).
template <typename T, typename FloatSpan>
inline void UnarySpanViaFloat(const T* x, T* y, int64_t n, const FloatSpan& float_span) {
  constexpr int64_t kBlock = 256;
  float fx[kBlock], fy[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    for (int64_t i = 0; i < m; ++i) fx[i] = ToCompute(x[start + i]);
    float_span(fx, fy, m);
    for (int64_t i = 0; i < m; ++i) y[start + i] = FromCompute<T>(fy[i]);
  }
}

// Before opset 7 binary ops broadcast only with attribute broadcast=1, aligning B at `axis` of A
// (default: B's dims are A's trailing dims). Returns B reshaped so numpy broadcasting gives the
// same result.
Result<Tensor> LegacyBroadcastOperand(const Tensor& a, const Tensor& b, bool broadcast, bool has_axis, int64_t axis);

}  // namespace onnxflow
