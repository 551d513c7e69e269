// com.microsoft QLinearAdd and QLinearMul (version 1): C = quantize(dequantize(A) op dequantize(B))
// with numpy broadcasting. Inputs: A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale,
// C_zero_point?. The arithmetic is qlinear_simd.h's; a broadcast operand is one repeated lane.
#include <memory>
#include <string>

#include "ops/elementwise/broadcast.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/quant_ms/register.h"
#include "ops/quant_ms/qparams.h"

namespace onnxflow {
namespace quant_ms {
namespace {

class QLinearBinaryKernel : public OpKernel {
 public:
  QLinearBinaryKernel(const KernelInfo&, bool mul) : mul_(mul) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(3));
    const DataType t = a->dtype();
    ONNXFLOW_RETURN_IF_ERROR(CheckQuantType(t, "A"));
    if (b->dtype() != t) {
      return InvalidArgument(std::string("input 'B' has type ") + DataTypeName(b->dtype()) + " but 'A' has " +
                             DataTypeName(t));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qa, ReadQParams(ctx, 1, 2, t, "A_scale", "A_zero_point"));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qb, ReadQParams(ctx, 4, 5, t, "B_scale", "B_zero_point"));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qc, ReadQParams(ctx, 6, 7, t, "C_scale", "C_zero_point"));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape(), b->shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * c, ctx.AllocateUninitialized(0, t, shape));
    QBinaryParams p;
    p.za = qa.zero;
    p.zb = qb.zero;
    p.zc = qc.zero;
    if (mul_) {
      p.ra = qa.scale * qb.scale / qc.scale;
    } else {
      p.ra = qa.scale / qc.scale;
      p.rb = qb.scale / qc.scale;
    }
    p.lo = TypeMin(t);
    p.hi = TypeMax(t);
    if (t == DataType::kUint8) {
      return RunBinary<uint8_t, uint8_t, uint8_t>(
          ctx, *a, *b, c, 4, [&](const uint8_t* x, bool xb, const uint8_t* y, bool yb, uint8_t* o, int64_t n) {
            if (mul_) QLinearMulU8(x, xb, y, yb, o, n, p);
            else QLinearAddU8(x, xb, y, yb, o, n, p);
          });
    }
    return RunBinary<int8_t, int8_t, int8_t>(
        ctx, *a, *b, c, 4, [&](const int8_t* x, bool xb, const int8_t* y, bool yb, int8_t* o, int64_t n) {
          if (mul_) QLinearMulS8(x, xb, y, yb, o, n, p);
          else QLinearAddS8(x, xb, y, yb, o, n, p);
        });
  }

 private:
  bool mul_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQLinearBinary(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "QLinearAdd", 1, kOpenEnded, Make<QLinearBinaryKernel>(false)));
  return registry.Register(kMsDomain, "QLinearMul", 1, kOpenEnded, Make<QLinearBinaryKernel>(true));
}

}  // namespace quant_ms
}  // namespace onnxflow
