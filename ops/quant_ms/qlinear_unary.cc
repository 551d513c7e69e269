// com.microsoft QLinearSigmoid and QLinearLeakyRelu (version 1): Y = quantize(f(dequantize(X))).
// Inputs: X, X_scale, X_zero_point?, Y_scale, Y_zero_point?. An 8-bit input has 256 values, so
// the op is a 256-entry table (as ONNX Runtime builds it), built at the start of each run: 256
// evaluations cost less than reading the scales at load would save, and the scales may be inputs.
#include <cmath>
#include <memory>
#include <string>

#include "ops/framework/parallel.h"
#include "ops/framework/domains.h"
#include "ops/quant_ms/register.h"
#include "ops/quant_ms/qparams.h"

namespace onnxflow {
namespace quant_ms {
namespace {

enum class UnaryOp { kSigmoid, kLeakyRelu };

class QLinearUnaryKernel : public OpKernel {
 public:
  QLinearUnaryKernel(const KernelInfo& info, UnaryOp op) : op_(op), alpha_(info.GetFloat("alpha", 0.01f)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const DataType t = x->dtype();
    ONNXFLOW_RETURN_IF_ERROR(CheckQuantType(t, "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qx, ReadQParams(ctx, 1, 2, t, "X_scale", "X_zero_point"));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qy, ReadQParams(ctx, 3, 4, t, "Y_scale", "Y_zero_point"));
    uint8_t table[256];
    if (op_ == UnaryOp::kSigmoid) {
      BuildTable(t, qx, qy, [](float v) { return 1.f / (1.f + std::exp(-v)); }, table);
    } else {
      const float alpha = alpha_;
      BuildTable(t, qx, qy, [alpha](float v) { return v >= 0 ? v : v * alpha; }, table);
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, t, x->shape()));
    const uint8_t* px = static_cast<const uint8_t*>(x->raw_data());
    uint8_t* py = static_cast<uint8_t*>(y->mutable_raw_data());
    ParallelFor(ctx, x->size(), 2, [&](int64_t b, int64_t e) { ApplyByteTable(table, px + b, py + b, e - b); });
    return Status::Ok();
  }

 private:
  UnaryOp op_;
  float alpha_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQLinearUnary(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kMsDomain, "QLinearSigmoid", 1, kOpenEnded, Make<QLinearUnaryKernel>(UnaryOp::kSigmoid)));
  return registry.Register(kMsDomain, "QLinearLeakyRelu", 1, kOpenEnded,
                           Make<QLinearUnaryKernel>(UnaryOp::kLeakyRelu));
}

}  // namespace quant_ms
}  // namespace onnxflow
