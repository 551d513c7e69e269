// LSTM (opsets 1, 7, 14, 22) in float or double: the cell and its walk are lstm_cell.h's, the
// products W x and R h the float matrix-vector kernel's (recurrent.h).
#include <algorithm>
#include <memory>
#include <vector>

#include "ops/rnn/lstm_cell.h"
#include "ops/rnn/packed_rows.h"
#include "ops/rnn/register.h"

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
    k->packed_w_ = PackRows(info.constant_input(kW));
    k->packed_r_ = PackRows(info.constant_input(kR));
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
  std::shared_ptr<const std::vector<PackedB>> packed_w_, packed_r_;  // per direction, or null
};

template <typename C>
Status LstmKernel::Run(KernelContext& ctx, DataType dtype) const {
  RecurrentData<C> in;
  ONNXFLOW_RETURN_IF_ERROR(LoadRecurrentData(ctx, attrs_, 4, true, &in));
  const int64_t hs = in.hidden, is = in.input, gh = 4 * hs;
  LstmOutputs<C> out(in);
  ForEachDirection(ctx.threads(), in.dirs, [&](int64_t d, int threads) {
    const bool backward = attrs_.Backward(d);
    const C* w = in.w + d * gh * is;
    const C* r = in.r + d * gh * hs;
    RunLstmDirection(
        in, attrs_, input_forget_, d,
        [&](int64_t s0, int64_t s1, C* xw) {
          ProjectInputs(threads, in, w, gh, backward, s0, s1, xw, PackOf(packed_w_, d));
        },
        [&](int64_t s, const C* h, C* gr) {
          MultiplyRows(threads, in, s, r, gh, hs, h, hs, gr, gh, PackOf(packed_r_, d));
        },
        &out);
  });
  return out.Write(ctx, dtype, in);
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterLstm(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "LSTM", 1, kOpenEnded, Make<LstmKernel>());
}

}  // namespace rnn
}  // namespace onnxflow
