// The LSTM cell and its walk over one direction, shared by LSTM (lstm.cc) and com.microsoft
// DynamicQuantizeLSTM (dynamic_quantize_lstm.cc): the two differ only in how they compute the
// products W x and R h, which the walk takes as callbacks. Gates in the order i (input),
// o (output), f (forget), c (cell); peepholes P in the order i, o, f:
//   i = f(X_t Wi^T + H Ri^T + Pi . C + Wbi + Rbi)
//   f = f(X_t Wf^T + H Rf^T + Pf . C + Wbf + Rbf)       (1 - i when input_forget = 1)
//   c = g(X_t Wc^T + H Rc^T + Wbc + Rbc)
//   C = f . C + i . c
//   o = f(X_t Wo^T + H Ro^T + Po . C + Wbo + Rbo)       (the new C)
//   H = o . h(C)                                          (defaults f = Sigmoid, g = h = Tanh)
// clip bounds every gate's pre-activation.
#pragma once

#include <algorithm>
#include <vector>

#include "ops/rnn/recurrent.h"

namespace onnxflow {
namespace rnn {

// Y, Y_h and Y_c in the compute type, in the layout `in` says; Y rows past a batch row's length
// stay zero.
template <typename C>
struct LstmOutputs {
  RunBuffer<C> y, y_h, y_c;

  explicit LstmOutputs(const RecurrentData<C>& in)
      : y(in.seq * in.dirs * in.batch * in.hidden, true),
        y_h(in.dirs * in.batch * in.hidden, true),
        y_c(in.dirs * in.batch * in.hidden, true) {}

  Status Write(KernelContext& ctx, DataType dtype, const RecurrentData<C>& in) const {
    ONNXFLOW_RETURN_IF_ERROR(WriteOutput(ctx, 0, dtype, in.YShape(), y));
    ONNXFLOW_RETURN_IF_ERROR(WriteOutput(ctx, 1, dtype, in.StateShape(), y_h));
    return WriteOutput(ctx, 2, dtype, in.StateShape(), y_c);
  }
};

// One batch row's step without peepholes, each function over a whole gate at once (ApplyInPlace):
// the gates' sums in place of the projected inputs `x`, then C and H. `tmp` holds h(C).
inline void VectorCell(const RecurrentAttributes& attrs, bool input_forget, const Activation& f, const Activation& g,
                       const Activation& hact, int64_t hs, const float* rec, const float* bias, float* x, float* c,
                       float* h, float* tmp) {
  const int64_t gh = 4 * hs;
  for (int64_t k = 0; k < gh; ++k) x[k] = x[k] + rec[k] + bias[k];  // the scalar cell's order
  if (attrs.has_clip) {
    for (int64_t k = 0; k < gh; ++k) x[k] = Clip(x[k], attrs);
  }
  float* i = x;
  float* o = x + hs;
  float* fg = x + 2 * hs;
  float* cg = x + 3 * hs;
  ApplyInPlace(f, x, input_forget ? 2 * hs : 3 * hs);  // i, o (and f)
  if (input_forget) {
    for (int64_t k = 0; k < hs; ++k) fg[k] = 1.0f - i[k];
  }
  ApplyInPlace(g, cg, hs);
  for (int64_t k = 0; k < hs; ++k) tmp[k] = c[k] = fg[k] * c[k] + i[k] * cg[k];
  ApplyInPlace(hact, tmp, hs);
  for (int64_t k = 0; k < hs; ++k) h[k] = o[k] * tmp[k];
}

// Runs direction d over every batch row of `in` (its W and R are the callbacks' business; B, P,
// the initial states and sequence_lens are read from `in`):
//   project(s0, s1, xw): W x for steps [s0, s1), batch row b's step s at xw + ((s - s0) * batch + b)
//     * 4 * hidden, for at least the rows still running at s (TimeIndex says which X row that is);
//   recur(s, h, gr): R h at step s, batch row b's at gr + b * 4 * hidden, for at least the rows
//     still running at s; h is [batch, hidden] (a finished row holds its last state).
// Float steps without peepholes run VectorCell, whose functions round differently from the scalar
// ones in the last bit.
template <typename C, typename Project, typename Recur>
void RunLstmDirection(const RecurrentData<C>& in, const RecurrentAttributes& attrs, bool input_forget, int64_t d,
                      Project&& project, Recur&& recur, LstmOutputs<C>* out) {
  const int64_t hs = in.hidden, batch = in.batch, gh = 4 * hs;
  const int64_t steps = MaxLen(in), chunk = std::min(steps, ChunkSteps(batch, gh));
  std::vector<C> h, c;
  RunBuffer<C> xw(chunk * batch * gh, false), gr(batch * gh, true);
  std::vector<C> bias(gh), peep(3 * hs), cell(hs);
  const bool backward = attrs.Backward(d);
  const Activation& f = attrs.activations[d * 3];
  const Activation& g = attrs.activations[d * 3 + 1];
  const Activation& hact = attrs.activations[d * 3 + 2];
  for (int64_t k = 0; k < gh; ++k) {
    bias[k] = in.b != nullptr ? in.b[d * 2 * gh + k] + in.b[d * 2 * gh + gh + k] : C(0);
  }
  for (int64_t k = 0; k < 3 * hs; ++k) peep[k] = in.p != nullptr ? in.p[d * 3 * hs + k] : C(0);
  const C* p_i = peep.data();
  const C* p_o = peep.data() + hs;
  const C* p_f = peep.data() + 2 * hs;
  InitialState(in, in.h0, d, h);
  InitialState(in, in.c0, d, c);
  for (int64_t s0 = 0; s0 < steps; s0 += chunk) {
    const int64_t s1 = std::min(steps, s0 + chunk);
    project(s0, s1, xw.data());
    for (int64_t s = s0; s < s1; ++s) {
      recur(s, static_cast<const C*>(h.data()), gr.data());
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= in.lens[b]) continue;
        C* x = xw.data() + ((s - s0) * batch + b) * gh;
        const C* rec = gr.data() + b * gh;
        C* hb = h.data() + b * hs;
        C* cb = c.data() + b * hs;
        if constexpr (std::is_same_v<C, float>) {
          if (in.p == nullptr) {
            VectorCell(attrs, input_forget, f, g, hact, hs, rec, bias.data(), x, cb, hb, cell.data());
            std::copy(hb, hb + hs, out->y.begin() + in.YOffset(TimeIndex(in, backward, b, s), d, b));
            continue;
          }
        }
        for (int64_t k = 0; k < hs; ++k) {
          const C pre_i = x[k] + rec[k] + bias[k];
          const C pre_o = x[hs + k] + rec[hs + k] + bias[hs + k];
          const C pre_f = x[2 * hs + k] + rec[2 * hs + k] + bias[2 * hs + k];
          const C pre_c = x[3 * hs + k] + rec[3 * hs + k] + bias[3 * hs + k];
          const C ig = f(Clip(pre_i + p_i[k] * cb[k], attrs));
          const C fg = input_forget ? C(1) - ig : f(Clip(pre_f + p_f[k] * cb[k], attrs));
          const C cg = g(Clip(pre_c, attrs));
          cb[k] = fg * cb[k] + ig * cg;
          const C og = f(Clip(pre_o + p_o[k] * cb[k], attrs));
          hb[k] = og * hact(cb[k]);
        }
        std::copy(hb, hb + hs, out->y.begin() + in.YOffset(TimeIndex(in, backward, b, s), d, b));
      }
    }
  }
  StoreState(in, h, d, out->y_h);
  StoreState(in, c, d, out->y_c);
}

}  // namespace rnn
}  // namespace onnxflow
