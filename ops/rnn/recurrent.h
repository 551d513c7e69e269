// What RNN, GRU and LSTM share: the attributes (direction, hidden_size, layout, clip,
// activations), reading X/W/R/B/sequence_lens/initial_h(/initial_c/P) in the compute type with
// their shapes checked, where each output row lives for either layout, and writing the outputs.
//
// The kernels run one direction at a time, all batch rows together, so each weight matrix is
// streamed once per step (not once per batch row): ProjectInputs computes W x for a chunk of steps
// up front, and MultiplyRows computes R h for every running batch row, split over row blocks of R.
// With sequence_lens, batch row b runs steps [0, len_b) (forward) or len_b-1 down to 0 (reverse);
// the Y rows past len_b stay zero and Y_h / Y_c hold the state after the last step run (the
// initial state when len_b is 0).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/math/gemm.h"
#include "ops/vec/vec_ops.h"
#include "ops/rnn/activation.h"

namespace onnxflow {
namespace rnn {


enum CommonInput { kX = 0, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kP };

struct RecurrentAttributes {
  int num_directions = 1;
  bool reverse = false;     // direction == "reverse"
  int64_t hidden_size = 0;  // 0: taken from R
  int64_t layout = 0;
  bool has_clip = false;
  float clip = 0.0f;
  std::vector<Activation> activations;  // per_direction * num_directions

  // Direction d runs backwards in time: the reverse direction, or the second of bidirectional.
  bool Backward(int64_t d) const { return reverse || d == 1; }
};

// `typed_inputs`: how many leading inputs must be of a recurrent type T (X, W and R; only X for an
// op whose weights are integers).
Result<RecurrentAttributes> ParseRecurrentAttributes(const KernelInfo& info, const std::vector<ActivationKind>& defaults,
                                                     int typed_inputs = 3);

// The element types the recurrent ops accept (T), and the type they compute in.
inline bool IsRecurrentType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

template <typename C>
struct RecurrentData {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1, layout = 0;
  const C* x = nullptr;
  const C* w = nullptr;   // [dirs, gates * hidden, input]
  const C* r = nullptr;   // [dirs, gates * hidden, hidden]
  const C* b = nullptr;   // [dirs, 2 * gates * hidden] or nullptr
  const C* h0 = nullptr;  // state layout, or nullptr
  const C* c0 = nullptr;  // LSTM only
  const C* p = nullptr;   // LSTM peepholes [dirs, 3 * hidden], or nullptr
  std::vector<int64_t> lens;
  std::vector<C> store[8];

  const C* X(int64_t t, int64_t b_) const { return x + (layout == 0 ? t * batch + b_ : b_ * seq + t) * input; }
  // Offset of Y[t, d, b, :] (layout 0: [seq, dirs, batch, hidden]; 1: [batch, seq, dirs, hidden]).
  int64_t YOffset(int64_t t, int64_t d, int64_t b_) const {
    return (layout == 0 ? (t * dirs + d) * batch + b_ : (b_ * seq + t) * dirs + d) * hidden;
  }
  // Offset of a state row (initial_h, Y_h, ...): layout 0 [dirs, batch, hidden]; 1 [batch, dirs, hidden].
  int64_t StateOffset(int64_t d, int64_t b_) const { return (layout == 0 ? d * batch + b_ : b_ * dirs + d) * hidden; }
  Shape YShape() const { return layout == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden}; }
  Shape StateShape() const { return layout == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden}; }
};

namespace internal {


template <typename C>
Result<const C*> ReadAs(const Tensor& t, DataType want, std::vector<C>& storage, const char* name) {
  if (t.dtype() != want) {
    return InvalidArgument(std::string(name) + " must have X's type " + DataTypeName(want) + ", got " +
                           DataTypeName(t.dtype()));
  }
  const C* out = nullptr;
  Status s = DispatchType<float, double, Float16, BFloat16>(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, C>) {
      out = t.data<C>();
    } else {
      storage.resize(static_cast<size_t>(t.size()));
      const T* src = t.data<T>();
      for (int64_t i = 0; i < t.size(); ++i) storage[i] = static_cast<C>(ToCompute<T>(src[i]));
      out = storage.data();
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return out;
}

inline Status CheckShape(const Tensor& t, const Shape& want, const char* name) {
  if (t.shape() == want) return Status::Ok();
  return InvalidArgument(std::string(name) + " has shape " + ShapeToString(t.shape()) + ", expected " +
                         ShapeToString(want));
}

}  // namespace internal

// The sizes and layout from the attributes, X and the hidden size (no input is read).
template <typename C>
void SetRecurrentSizes(const RecurrentAttributes& a, const Tensor& x, int64_t gates, int64_t hidden,
                       RecurrentData<C>* d) {
  d->layout = a.layout;
  d->gates = gates;
  d->dirs = a.num_directions;
  d->seq = a.layout == 0 ? x.dim(0) : x.dim(1);
  d->batch = a.layout == 0 ? x.dim(1) : x.dim(0);
  d->input = x.dim(2);
  d->hidden = hidden;
}

// After SetRecurrentSizes: checks that the outputs and the gate buffer fit the run's limits, then
// reads X, B, sequence_lens and initial_h (LSTM: also initial_c and P) in the compute type, their
// shapes checked. W and R are the caller's (their layout and type differ between the ops).
template <typename C>
Status LoadRecurrentInputs(const KernelContext& ctx, const Tensor& x, bool lstm, RecurrentData<C>* d) {
  using internal::CheckShape;
  using internal::ReadAs;
  const int64_t gh = d->gates * d->hidden;
  const DataType t = x.dtype();
  // Y and the per-direction states are buffers of these sizes (X may be empty with huge dims).
  ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch(d->YShape(), sizeof(C), "Y"));
  ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({d->dirs, d->batch, gh}, sizeof(C), "the gate buffer"));
  ONNXFLOW_ASSIGN_OR_RETURN(d->x, ReadAs<C>(x, t, d->store[0], "X"));
  if (const Tensor* b = ctx.input_tensor(kB)) {
    ONNXFLOW_RETURN_IF_ERROR(CheckShape(*b, {d->dirs, 2 * gh}, "B"));
    ONNXFLOW_ASSIGN_OR_RETURN(d->b, ReadAs<C>(*b, t, d->store[3], "B"));
  }
  d->lens.assign(static_cast<size_t>(d->batch), d->seq);
  if (const Tensor* lens = ctx.input_tensor(kSequenceLens)) {
    if (lens->shape() != Shape{d->batch}) {
      return InvalidArgument("sequence_lens has shape " + ShapeToString(lens->shape()) + ", expected [" +
                             std::to_string(d->batch) + "]");
    }
    Status s = DispatchType<int32_t, int64_t>(lens->dtype(), [&](auto tag) {
      using I = decltype(tag);
      for (int64_t i = 0; i < d->batch; ++i) {
        const int64_t len = static_cast<int64_t>(lens->data<I>()[i]);
        if (len < 0 || len > d->seq) {
          return OutOfRange("sequence_lens[" + std::to_string(i) + "] = " + std::to_string(len) +
                            " is outside [0, " + std::to_string(d->seq) + "]");
        }
        d->lens[i] = len;
      }
      return Status::Ok();
    });
    ONNXFLOW_RETURN_IF_ERROR(s);
  }
  const Shape state_shape = d->StateShape();
  if (const Tensor* h0 = ctx.input_tensor(kInitialH)) {
    ONNXFLOW_RETURN_IF_ERROR(CheckShape(*h0, state_shape, "initial_h"));
    ONNXFLOW_ASSIGN_OR_RETURN(d->h0, ReadAs<C>(*h0, t, d->store[4], "initial_h"));
  }
  if (lstm) {
    if (const Tensor* c0 = ctx.input_tensor(kInitialC)) {
      ONNXFLOW_RETURN_IF_ERROR(CheckShape(*c0, state_shape, "initial_c"));
      ONNXFLOW_ASSIGN_OR_RETURN(d->c0, ReadAs<C>(*c0, t, d->store[5], "initial_c"));
    }
    if (const Tensor* p = ctx.input_tensor(kP)) {
      ONNXFLOW_RETURN_IF_ERROR(CheckShape(*p, {d->dirs, 3 * d->hidden}, "P"));
      ONNXFLOW_ASSIGN_OR_RETURN(d->p, ReadAs<C>(*p, t, d->store[6], "P"));
    }
  }
  return Status::Ok();
}

// Reads and checks the inputs of RNN, GRU and LSTM. `gates` is 1 (RNN), 3 (GRU) or 4 (LSTM); LSTM
// also reads initial_c and P.
template <typename C>
Status LoadRecurrentData(const KernelContext& ctx, const RecurrentAttributes& a, int64_t gates, bool lstm,
                         RecurrentData<C>* d) {
  using internal::CheckShape;
  using internal::ReadAs;
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(kX));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(kW));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* r, ctx.RequireTensor(kR));
  if (x->rank() != 3) return InvalidArgument("X must be 3D, got shape " + ShapeToString(x->shape()));
  if (w->rank() != 3 || r->rank() != 3) {
    return InvalidArgument("W and R must be 3D, got " + ShapeToString(w->shape()) + " and " + ShapeToString(r->shape()));
  }
  SetRecurrentSizes(a, *x, gates, a.hidden_size > 0 ? a.hidden_size : r->dim(2), d);
  const int64_t gh = gates * d->hidden;
  ONNXFLOW_RETURN_IF_ERROR(CheckShape(*w, {d->dirs, gh, d->input}, "W"));
  ONNXFLOW_RETURN_IF_ERROR(CheckShape(*r, {d->dirs, gh, d->hidden}, "R"));
  ONNXFLOW_RETURN_IF_ERROR(LoadRecurrentInputs(ctx, *x, lstm, d));
  ONNXFLOW_ASSIGN_OR_RETURN(d->w, ReadAs<C>(*w, x->dtype(), d->store[1], "W"));
  ONNXFLOW_ASSIGN_OR_RETURN(d->r, ReadAs<C>(*r, x->dtype(), d->store[2], "R"));
  return Status::Ok();
}

// A run's buffer of n numbers of C from the tensor pool (tensor.h). A std::vector of a few hundred
// KB (an LSTM's projected inputs, its Y) is a fresh mmap at every run whose pages fault in again,
// 10-30 us each on this VM: a hidden-256 bidirectional LSTM over 100 steps spent 19% of its time
// in the page faults of those zero fills. Pooled storage comes back mapped.
template <typename C>
class RunBuffer {
 public:
  explicit RunBuffer(int64_t n, bool zero)
      : t_(zero ? Tensor(DataTypeOf<C>::value, {n}) : Tensor::Uninitialized(DataTypeOf<C>::value, {n})) {}
  C* data() { return t_.mutable_data<C>(); }
  const C* data() const { return t_.data<C>(); }
  C* begin() { return data(); }
  const C* begin() const { return data(); }
  C& operator[](int64_t i) { return data()[i]; }
  const C& operator[](int64_t i) const { return data()[i]; }

 private:
  Tensor t_;
};

// Stores a C buffer into output i (any of the accepted element types), when the model reads it.
template <typename Values>
Status WriteOutput(KernelContext& ctx, int i, DataType dtype, const Shape& shape, const Values& values) {
  if (!ctx.has_output(i)) return Status::Ok();
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(i, dtype, shape));
  return DispatchType<float, double, Float16, BFloat16>(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* dst = out->mutable_data<T>();
    const int64_t n = out->size();  // not in the loop's test: it is a product over the shape
    for (int64_t k = 0; k < n; ++k) dst[k] = FromCompute<T>(static_cast<ComputeType<T>>(values[k]));
    return Status::Ok();
  });
}

template <typename C>
C Clip(C v, const RecurrentAttributes& a) {
  if (!a.has_clip) return v;
  const C c = static_cast<C>(a.clip);
  return v < -c ? -c : (v > c ? c : v);
}

// The time index batch row b reads at step s of a direction.
template <typename C>
int64_t TimeIndex(const RecurrentData<C>& in, bool backward, int64_t b, int64_t s) {
  return backward ? in.lens[b] - 1 - s : s;
}

// Steps per ProjectInputs chunk: about 1M numbers of projected inputs at a time.
inline int64_t ChunkSteps(int64_t batch, int64_t gate_rows) {
  return std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(1, batch * gate_rows));
}

// Rows of a weight matrix per block: about 64 KB of weights, so a block stays in L2 while every
// batch row's vector passes over it.
inline int64_t RowBlock(int64_t n) { return std::max<int64_t>(8, (int64_t{1} << 14) / std::max<int64_t>(1, n)); }

// out[(s - s0) * batch + b] = W_d X(t_b(s), b) for steps [s0, s1) and the batch rows still
// running at each step; W_d is [gate_rows, input]. With W_d packed (packed_rows.h), each batch row's
// steps are one GEMM over its X rows, which lie a fixed stride apart in either layout; a backward
// direction's rows run in time order into `scratch` and are copied to their steps.
template <typename C>
void ProjectInputs(int threads, const RecurrentData<C>& in, const C* w_d, int64_t gate_rows, bool backward,
                   int64_t s0, int64_t s1, C* out, const PackedB* packed = nullptr) {
  if constexpr (std::is_same_v<C, float>) {
    if (packed != nullptr) {
      const int64_t time_stride = (in.layout == 0 ? in.batch : 1) * in.input;
      std::optional<RunBuffer<float>> scratch;
      for (int64_t b = 0; b < in.batch; ++b) {
        const int64_t n = std::min(s1, in.lens[b]) - s0;  // steps row b runs in the chunk
        if (n <= 0) continue;
        GemmInputA a{nullptr, in.X(backward ? in.lens[b] - s0 - n : s0, b), time_stride};
        GemmInputB wb;
        wb.packed = packed;
        if (!backward) {
          Sgemm(n, gate_rows, in.input, a, wb, out + b * gate_rows, in.batch * gate_rows, GemmEpilogue{}, threads);
          continue;
        }
        if (!scratch) scratch.emplace((s1 - s0) * gate_rows, false);
        float* rows = scratch->data();
        Sgemm(n, gate_rows, in.input, a, wb, rows, gate_rows, GemmEpilogue{}, threads);
        for (int64_t i = 0; i < n; ++i) {  // row i is time lens - s0 - n + i, step s0 + n - 1 - i
          std::copy(rows + i * gate_rows, rows + (i + 1) * gate_rows, out + ((n - 1 - i) * in.batch + b) * gate_rows);
        }
      }
      return;
    }
  }
  const int64_t block = RowBlock(in.input);
  const int64_t blocks = (gate_rows + block - 1) / block;
  ParallelFor(threads, blocks, (s1 - s0) * in.batch * block * in.input, [&](int64_t begin, int64_t end) {
    for (int64_t blk = begin; blk < end; ++blk) {
      const int64_t r0 = blk * block, rows = std::min(block, gate_rows - r0);
      for (int64_t s = s0; s < s1; ++s) {
        for (int64_t b = 0; b < in.batch; ++b) {
          if (s >= in.lens[b]) continue;
          vec::DotRows(in.X(TimeIndex(in, backward, b, s), b), w_d + r0 * in.input, in.input, rows, in.input,
                  out + ((s - s0) * in.batch + b) * gate_rows + r0);
        }
      }
    }
  });
}

// out[b * out_stride + r] = dot(M row r, v[b * v_stride ...]) for r in [0, rows) and every running
// batch row b (lens[b] > s); M is `rows` rows of n numbers.
// With M packed (packed_rows.h), one GEMM over every batch row (finished ones too: their results
// go unread).
template <typename C>
void MultiplyRows(int threads, const RecurrentData<C>& in, int64_t s, const C* m, int64_t rows, int64_t n,
                  const C* v, int64_t v_stride, C* out, int64_t out_stride, const PackedB* packed = nullptr) {
  if constexpr (std::is_same_v<C, float>) {
    if (packed != nullptr) {
      GemmInputB mb;
      mb.packed = packed;
      Sgemm(in.batch, rows, n, GemmInputA{nullptr, v, v_stride}, mb, out, out_stride, GemmEpilogue{}, threads);
      return;
    }
  }
  const int64_t block = RowBlock(n);
  const int64_t blocks = (rows + block - 1) / block;
  ParallelFor(threads, blocks, in.batch * block * n, [&](int64_t begin, int64_t end) {
    for (int64_t blk = begin; blk < end; ++blk) {
      const int64_t r0 = blk * block, count = std::min(block, rows - r0);
      for (int64_t b = 0; b < in.batch; ++b) {
        if (s >= in.lens[b]) continue;
        vec::DotRows(v + b * v_stride, m + r0 * n, n, count, n, out + b * out_stride + r0);
      }
    }
  });
}

// Runs body(d, threads) for each of `dirs` directions. A bidirectional op on two or more cores runs
// its directions side by side, each on half the cores: a direction is a chain of steps, and one
// step's product (a hidden-256 LSTM's R h: 262K multiply-adds) split over two cores paid the split
// and the join at every step instead (hidden 256, 200 steps, 2 layers: 12.7 ms on two cores
// against 13.0 on one; ONNX Runtime 11.5). Each body owns its direction's buffers and writes only
// its direction's outputs.
template <typename F>
void ForEachDirection(int threads, int64_t dirs, F&& body) {
  if (threads >= 2 && dirs == 2) {
    ParallelChunks(2, 1, [&](int64_t d0, int64_t d1) {
      for (int64_t d = d0; d < d1; ++d) body(d, threads / 2);
    });
    return;
  }
  for (int64_t d = 0; d < dirs; ++d) body(d, threads);
}

// The longest sequence in the batch: the number of steps a direction runs.
template <typename C>
int64_t MaxLen(const RecurrentData<C>& in) {
  int64_t m = 0;
  for (int64_t l : in.lens) m = std::max(m, l);
  return m;
}

// Copies the initial state of direction d (or zeros) into state[batch, hidden].
template <typename C>
void InitialState(const RecurrentData<C>& in, const C* init, int64_t d, std::vector<C>& state) {
  state.assign(static_cast<size_t>(in.batch * in.hidden), C(0));
  if (init == nullptr) return;
  for (int64_t b = 0; b < in.batch; ++b) {
    std::copy(init + in.StateOffset(d, b), init + in.StateOffset(d, b) + in.hidden, state.begin() + b * in.hidden);
  }
}

// Copies state[batch, hidden] of direction d into an output in the state layout.
template <typename C, typename Out>
void StoreState(const RecurrentData<C>& in, const std::vector<C>& state, int64_t d, Out& out) {
  for (int64_t b = 0; b < in.batch; ++b) {
    std::copy(state.begin() + b * in.hidden, state.begin() + (b + 1) * in.hidden, out.begin() + in.StateOffset(d, b));
  }
}

}  // namespace rnn
}  // namespace onnxflow
