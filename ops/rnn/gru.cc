// GRU (opsets 1, 3, 7, 14, 22), gates in the order z (update), r (reset), h (hidden):
//   z = f(X_t Wz^T + H Rz^T + Wbz + Rbz)
//   r = f(X_t Wr^T + H Rr^T + Wbr + Rbr)
//   n = g(X_t Wh^T + (r . H) Rh^T + Rbh + Wbh)          linear_before_reset = 0
//   n = g(X_t Wh^T + r . (H Rh^T + Rbh) + Wbh)          linear_before_reset = 1
//   H = (1 - z) . n + z . H                               (defaults f = Sigmoid, g = Tanh)
#include <algorithm>
#include <memory>
#include <vector>

#include "ops/rnn/packed_rows.h"
#include "ops/rnn/register.h"
#include "ops/rnn/recurrent.h"
#include "ops/vec/vec_ops.h"

namespace onnxflow {
namespace rnn {
namespace {

class GruKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<GruKernel>();
    ONNXFLOW_ASSIGN_OR_RETURN(k->attrs_, ParseRecurrentAttributes(info, {ActivationKind::kSigmoid, ActivationKind::kTanh}));
    k->linear_before_reset_ = info.GetInt("linear_before_reset", 0) != 0;
    k->packed_w_ = PackRows(info.constant_input(kW));
    const Tensor* r = info.constant_input(kR);
    if (k->linear_before_reset_) {
      k->packed_r_ = PackRows(r);  // z, r and h read H
    } else if (r != nullptr && r->rank() == 3) {  // z and r; h alone, of r * H
      const int64_t hs = r->dim(2);
      k->packed_r_ = PackRows(r, 0, 2 * hs);
      k->packed_rh_ = PackRows(r, 2 * hs, hs);
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(kX));
    if (!IsRecurrentType(x->dtype())) {
      return InvalidArgument(std::string("GRU does not support type ") + DataTypeName(x->dtype()));
    }
    return x->dtype() == DataType::kDouble ? Run<double>(ctx, x->dtype()) : Run<float>(ctx, x->dtype());
  }

 private:
  template <typename C>
  Status Run(KernelContext& ctx, DataType dtype) const;

  RecurrentAttributes attrs_;
  bool linear_before_reset_ = false;
  std::shared_ptr<const std::vector<PackedB>> packed_w_, packed_r_, packed_rh_;  // per direction, or null
};

template <typename C>
Status GruKernel::Run(KernelContext& ctx, DataType dtype) const {
  RecurrentData<C> in;
  ONNXFLOW_RETURN_IF_ERROR(LoadRecurrentData(ctx, attrs_, 3, false, &in));
  const int64_t hs = in.hidden, is = in.input, batch = in.batch, gh = 3 * hs;
  RunBuffer<C> y(in.seq * in.dirs * batch * hs, true), y_h(in.dirs * batch * hs, true);
  const int64_t steps = MaxLen(in), chunk = std::min(steps, ChunkSteps(batch, gh));
  ForEachDirection(ctx.threads(), in.dirs, [&](int64_t d, int threads) {
    std::vector<C> h, wb(gh), rb(gh);
    RunBuffer<C> xw(chunk * batch * gh, false), gr(batch * gh, true), reset_h(batch * hs, true), rh(batch * hs, true);
    const bool backward = attrs_.Backward(d);
    const Activation& f = attrs_.activations[d * 2];
    const Activation& g = attrs_.activations[d * 2 + 1];
    const C* w = in.w + d * gh * is;
    const C* r = in.r + d * gh * hs;
    const C* r_h = r + 2 * hs * hs;  // the hidden gate's rows of R
    for (int64_t k = 0; k < gh; ++k) {
      wb[k] = in.b != nullptr ? in.b[d * 2 * gh + k] : C(0);
      rb[k] = in.b != nullptr ? in.b[d * 2 * gh + gh + k] : C(0);
    }
    InitialState(in, in.h0, d, h);
    for (int64_t s0 = 0; s0 < steps; s0 += chunk) {
      const int64_t s1 = std::min(steps, s0 + chunk);
      ProjectInputs(threads, in, w, gh, backward, s0, s1, xw.data(), PackOf(packed_w_, d));
      for (int64_t s = s0; s < s1; ++s) {
        // z and r read H; with linear_before_reset the hidden gate's product does too.
        MultiplyRows(threads, in, s, r, linear_before_reset_ ? gh : 2 * hs, hs, h.data(), hs, gr.data(), gh,
                     PackOf(packed_r_, d));
        for (int64_t b = 0; b < batch; ++b) {
          if (s >= in.lens[b]) continue;
          C* x = xw.data() + ((s - s0) * batch + b) * gh;  // z, r become the gates in place
          const C* gb = gr.data() + b * gh;
          const C* hb = h.data() + b * hs;
          for (int64_t k = 0; k < 2 * hs; ++k) x[k] = Clip(x[k] + gb[k] + wb[k] + rb[k], attrs_);
          ApplyInPlace(f, x, 2 * hs);  // each function over a whole gate: vectorized for float
          for (int64_t k = 0; k < hs; ++k) {
            if (linear_before_reset_) {
              rh[b * hs + k] = x[hs + k] * (gb[2 * hs + k] + rb[2 * hs + k]);
            } else {
              reset_h[b * hs + k] = x[hs + k] * hb[k];
            }
          }
        }
        if (!linear_before_reset_) {
          MultiplyRows(threads, in, s, r_h, hs, hs, reset_h.data(), hs, rh.data(), hs, PackOf(packed_rh_, d));
          for (int64_t b = 0; b < batch; ++b) {
            if (s >= in.lens[b]) continue;
            for (int64_t k = 0; k < hs; ++k) rh[b * hs + k] += rb[2 * hs + k];
          }
        }
        for (int64_t b = 0; b < batch; ++b) {
          if (s >= in.lens[b]) continue;
          C* x = xw.data() + ((s - s0) * batch + b) * gh;
          C* n = x + 2 * hs;  // the hidden gate, in place
          C* hb = h.data() + b * hs;
          for (int64_t k = 0; k < hs; ++k) n[k] = Clip(n[k] + rh[b * hs + k] + wb[2 * hs + k], attrs_);
          ApplyInPlace(g, n, hs);
          for (int64_t k = 0; k < hs; ++k) hb[k] = (C(1) - x[k]) * n[k] + x[k] * hb[k];
          std::copy(hb, hb + hs, y.begin() + in.YOffset(TimeIndex(in, backward, b, s), d, b));
        }
      }
    }
    StoreState(in, h, d, y_h);
  });
  ONNXFLOW_RETURN_IF_ERROR(WriteOutput(ctx, 0, dtype, in.YShape(), y));
  return WriteOutput(ctx, 1, dtype, in.StateShape(), y_h);
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterGru(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "GRU", 1, kOpenEnded, Make<GruKernel>());
}

}  // namespace rnn
}  // namespace onnxflow
