// RNN (opsets 1, 7, 14, 22): the simple recurrent layer
//   H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb)          (default f = Tanh)
// forward, reverse or bidirectional, layout 0 or 1, with sequence_lens and initial_h.
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

class RnnKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<RnnKernel>();
    ONNXFLOW_ASSIGN_OR_RETURN(k->attrs_, ParseRecurrentAttributes(info, {ActivationKind::kTanh}));
    k->packed_w_ = PackRows(info.constant_input(kW));
    k->packed_r_ = PackRows(info.constant_input(kR));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(kX));
    if (!IsRecurrentType(x->dtype())) {
      return InvalidArgument(std::string("RNN does not support type ") + DataTypeName(x->dtype()));
    }
    return x->dtype() == DataType::kDouble ? Run<double>(ctx, x->dtype()) : Run<float>(ctx, x->dtype());
  }

 private:
  template <typename C>
  Status Run(KernelContext& ctx, DataType dtype) const;

  RecurrentAttributes attrs_;
  std::shared_ptr<const std::vector<PackedB>> packed_w_, packed_r_;  // per direction, or null
};

template <typename C>
Status RnnKernel::Run(KernelContext& ctx, DataType dtype) const {
  RecurrentData<C> in;
  ONNXFLOW_RETURN_IF_ERROR(LoadRecurrentData(ctx, attrs_, 1, false, &in));
  const int64_t hs = in.hidden, is = in.input, batch = in.batch;
  RunBuffer<C> y(in.seq * in.dirs * batch * hs, true), y_h(in.dirs * batch * hs, true);
  const int64_t steps = MaxLen(in), chunk = std::min(steps, ChunkSteps(batch, hs));
  ForEachDirection(ctx.threads(), in.dirs, [&](int64_t d, int threads) {
    std::vector<C> h, bias(hs);
    RunBuffer<C> xw(chunk * batch * hs, false), rec(batch * hs, true);
    const bool backward = attrs_.Backward(d);
    const Activation& f = attrs_.activations[d];
    const C* w = in.w + d * hs * is;
    const C* r = in.r + d * hs * hs;
    for (int64_t k = 0; k < hs; ++k) bias[k] = in.b != nullptr ? in.b[d * 2 * hs + k] + in.b[d * 2 * hs + hs + k] : C(0);
    InitialState(in, in.h0, d, h);
    for (int64_t s0 = 0; s0 < steps; s0 += chunk) {
      const int64_t s1 = std::min(steps, s0 + chunk);
      ProjectInputs(threads, in, w, hs, backward, s0, s1, xw.data(), PackOf(packed_w_, d));
      for (int64_t s = s0; s < s1; ++s) {
        MultiplyRows(threads, in, s, r, hs, hs, h.data(), hs, rec.data(), hs, PackOf(packed_r_, d));
        for (int64_t b = 0; b < batch; ++b) {
          if (s >= in.lens[b]) continue;
          const C* x = xw.data() + ((s - s0) * batch + b) * hs;
          C* hb = h.data() + b * hs;
          for (int64_t k = 0; k < hs; ++k) hb[k] = Clip(x[k] + rec[b * hs + k] + bias[k], attrs_);
          ApplyInPlace(f, hb, hs);  // vectorized for float
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

ONNXFLOW_REGISTRAR Status RegisterRnn(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "RNN", 1, kOpenEnded, Make<RnnKernel>());
}

}  // namespace rnn
}  // namespace onnxflow
