// LSTM (opsets 1, 7, 14, 22), gates in the order i (input), o (output), f (forget), c (cell);
// peepholes P in the order i, o, f:
//   i = f(X_t Wi^T + H Ri^T + Pi . C + Wbi + Rbi)
//   f = f(X_t Wf^T + H Rf^T + Pf . C + Wbf + Rbf)       (1 - i when input_forget = 1)
//   c = g(X_t Wc^T + H Rc^T + Wbc + Rbc)
//   C = f . C + i . c
//   o = f(X_t Wo^T + H Ro^T + Po . C + Wbo + Rbo)       (the new C)
//   H = o . h(C)                                          (defaults f = Sigmoid, g = h = Tanh)
// clip bounds every gate's pre-activation.
#include <algorithm>
#include <memory>
#include <vector>

#include "ops/rnn/register.h"
#include "ops/rnn/recurrent.h"
#include "ops/vec/vec_ops.h"

namespace onnxflow {
namespace rnn {
namespace {

class LstmKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<LstmKernel>();
    ONNXFLOW_ASSIGN_OR_RETURN(
        k->attrs_, ParseRecurrentAttributes(info, {ActivationKind::kSigmoid, ActivationKind::kTanh, ActivationKind::kTanh}));
    k->input_forget_ = info.GetInt("input_forget", 0) != 0;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(kX));
    if (!IsRecurrentType(x->dtype())) {
      return InvalidArgument(std::string("LSTM does not support type ") + DataTypeName(x->dtype()));
    }
    return x->dtype() == DataType::kDouble ? Run<double>(ctx, x->dtype()) : Run<float>(ctx, x->dtype());
  }

 private:
  template <typename C>
  Status Run(KernelContext& ctx, DataType dtype) const;

  RecurrentAttributes attrs_;
  bool input_forget_ = false;
};

template <typename C>
Status LstmKernel::Run(KernelContext& ctx, DataType dtype) const {
  RecurrentData<C> in;
  ONNXFLOW_RETURN_IF_ERROR(LoadRecurrentData(ctx, attrs_, 4, true, &in));
  const int64_t hs = in.hidden, is = in.input, batch = in.batch, gh = 4 * hs;
  std::vector<C> y(static_cast<size_t>(in.seq * in.dirs * batch * hs));
  std::vector<C> y_h(static_cast<size_t>(in.dirs * batch * hs));
  std::vector<C> y_c(y_h.size());
  const int64_t steps = MaxLen(in), chunk = std::min(steps, ChunkSteps(batch, gh));
  std::vector<C> h, c, xw(static_cast<size_t>(chunk * batch * gh)), gr(static_cast<size_t>(batch * gh));
  std::vector<C> bias(gh), peep(3 * hs);

  for (int64_t d = 0; d < in.dirs; ++d) {
    const bool backward = attrs_.Backward(d);
    const Activation& f = attrs_.activations[d * 3];
    const Activation& g = attrs_.activations[d * 3 + 1];
    const Activation& hact = attrs_.activations[d * 3 + 2];
    const C* w = in.w + d * gh * is;
    const C* r = in.r + d * gh * hs;
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
      ProjectInputs(ctx, in, w, gh, backward, s0, s1, xw.data());
      for (int64_t s = s0; s < s1; ++s) {
        MultiplyRows(ctx, in, s, r, gh, hs, h.data(), hs, gr.data(), gh);
        for (int64_t b = 0; b < batch; ++b) {
          if (s >= in.lens[b]) continue;
          const C* x = xw.data() + ((s - s0) * batch + b) * gh;
          const C* rec = gr.data() + b * gh;
          C* hb = h.data() + b * hs;
          C* cb = c.data() + b * hs;
          for (int64_t k = 0; k < hs; ++k) {
            const C pre_i = x[k] + rec[k] + bias[k];
            const C pre_o = x[hs + k] + rec[hs + k] + bias[hs + k];
            const C pre_f = x[2 * hs + k] + rec[2 * hs + k] + bias[2 * hs + k];
            const C pre_c = x[3 * hs + k] + rec[3 * hs + k] + bias[3 * hs + k];
            const C ig = f(Clip(pre_i + p_i[k] * cb[k], attrs_));
            const C fg = input_forget_ ? C(1) - ig : f(Clip(pre_f + p_f[k] * cb[k], attrs_));
            const C cg = g(Clip(pre_c, attrs_));
            cb[k] = fg * cb[k] + ig * cg;
            const C og = f(Clip(pre_o + p_o[k] * cb[k], attrs_));
            hb[k] = og * hact(cb[k]);
          }
          std::copy(hb, hb + hs, y.begin() + in.YOffset(TimeIndex(in, backward, b, s), d, b));
        }
      }
    }
    StoreState(in, h, d, y_h);
    StoreState(in, c, d, y_c);
  }
  ONNXFLOW_RETURN_IF_ERROR(WriteOutput(ctx, 0, dtype, in.YShape(), y));
  ONNXFLOW_RETURN_IF_ERROR(WriteOutput(ctx, 1, dtype, in.StateShape(), y_h));
  return WriteOutput(ctx, 2, dtype, in.StateShape(), y_c);
}

}  // namespace

Status RegisterLstm(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "LSTM", 1, kOpenEnded, Make<LstmKernel>());
}

}  // namespace rnn
}  // namespace onnxflow
