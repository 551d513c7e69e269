// com.onnxflow DequantizeAccumulator(acc int32 (N, C, ...), scale float (one value), bias float
// (C)?) -> float, attributes min and max (a Relu or Clip after it; absent: no clamp): the tail
// graph/dynamic_quant_fusion.cc finds after a ConvInteger (dequantize_accumulator.h).
#include <limits>
#include <memory>
#include <string>

#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/quant/dequantize_accumulator.h"
#include "ops/quant/register.h"

namespace onnxflow {
namespace quant_ops {
namespace {

class DequantizeAccumulatorKernel : public OpKernel {
 public:
  explicit DequantizeAccumulatorKernel(const KernelInfo& info)
      : clamp_{info.GetFloat("min", -kInf), info.GetFloat("max", kInf)},
        clamped_(info.has_attribute("min") || info.has_attribute("max")) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* acc, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(1));
    const Tensor* bias = ctx.input_tensor(2);
    if (acc->dtype() != DataType::kInt32 || acc->rank() < 2) {
      return InvalidArgument("DequantizeAccumulator: input 0 must be int32 of rank 2 or more, got " +
                             std::string(DataTypeName(acc->dtype())) + " " + ShapeToString(acc->shape()));
    }
    if (scale->dtype() != DataType::kFloat || scale->size() != 1) {
      return InvalidArgument("DequantizeAccumulator: input 1 (scale) must be one float, got " +
                             std::string(DataTypeName(scale->dtype())) + " " + ShapeToString(scale->shape()));
    }
    const int64_t channels = acc->dim(1), inner = SizeFromDim(acc->shape(), 2);
    if (bias != nullptr && (bias->dtype() != DataType::kFloat || bias->size() != channels)) {
      return InvalidArgument("DequantizeAccumulator: input 2 (bias) must be " + std::to_string(channels) +
                             " floats (the channels of " + ShapeToString(acc->shape()) + "), got " +
                             DataTypeName(bias->dtype()) + " " + ShapeToString(bias->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, acc->shape()));
    const int32_t* a = acc->data<int32_t>();
    const float s = scale->data<float>()[0];
    const float* b = bias != nullptr ? bias->data<float>() : nullptr;
    float* out = y->mutable_data<float>();
    const int64_t rows = acc->size() / std::max<int64_t>(inner, 1);
    ParallelFor(ctx, rows, inner * 2, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        DequantizeAccumulatorRow(a + r * inner, inner, s, b != nullptr ? b + r % channels : nullptr,
                                 clamped_ ? clamp_ : nullptr, out + r * inner);
      }
    });
    return Status::Ok();
  }

 private:
  static constexpr float kInf = std::numeric_limits<float>::infinity();
  float clamp_[2];
  bool clamped_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDequantizeAccumulator(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kDequantizeAccumulator, internal_ops::kVersion, kOpenEnded,
                           Make<DequantizeAccumulatorKernel>());
}

}  // namespace quant_ops
}  // namespace onnxflow
