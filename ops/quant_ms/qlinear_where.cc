// com.microsoft QLinearWhere (version 1): Z = condition ? requantize(X) : requantize(Y) into Z's
// scale and zero point, the three numpy-broadcast together as Where's. Inputs condition (bool), X,
// x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point (a zero point left out is
// 0, as in the family's other ops). X and Y are uint8 or int8, of one type, which Z takes.
//
// As in ONNX Runtime (contrib_ops/cpu/quantization/qlinear_where.cc): an operand whose scale and
// zero point are Z's is copied byte for byte (the common case: the quantizer gives a Where's inputs
// its output's parameters); another goes through a 256-entry table of
// quantize(dequantize(v)), rounding half to even and saturating, built at each run.
#include <memory>
#include <string>

#include "ops/elementwise/broadcast.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/quant_ms/qparams.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace quant_ms {
namespace {

class QLinearWhereKernel : public OpKernel {
 public:
  explicit QLinearWhereKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* cond, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* y, ctx.RequireTensor(4));
    if (cond->dtype() != DataType::kBool) {
      return InvalidArgument(std::string("input 'condition' has type ") + DataTypeName(cond->dtype()) +
                             "; expected bool");
    }
    const DataType t = x->dtype();
    ONNXFLOW_RETURN_IF_ERROR(CheckQuantType(t, "X"));
    if (y->dtype() != t) {
      return InvalidArgument(std::string("input 'Y' has type ") + DataTypeName(y->dtype()) + " but 'X' has " +
                             DataTypeName(t));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qx, ReadQParams(ctx, 2, 3, t, "x_scale", "x_zero_point"));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qy, ReadQParams(ctx, 5, 6, t, "y_scale", "y_zero_point"));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qz, ReadQParams(ctx, 7, 8, t, "z_scale", "z_zero_point"));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes({&cond->shape(), &x->shape(), &y->shape()}));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * z, ctx.AllocateUninitialized(0, t, shape));
    const bool copy_x = qx.scale == qz.scale && qx.zero == qz.zero;
    const bool copy_y = qy.scale == qz.scale && qy.zero == qz.zero;
    // Bytes, whatever the type: a table indexes an int8 value by its bit pattern.
    if (copy_x && copy_y) {
      return RunTernary<bool, uint8_t, uint8_t, uint8_t>(ctx, *cond, *x, *y, z, 1,
                                                         [](bool c, uint8_t a, uint8_t b) { return c ? a : b; });
    }
    uint8_t tx[256], ty[256];
    const auto identity = [](float v) { return v; };
    for (int v = 0; v < 256; ++v) tx[v] = ty[v] = static_cast<uint8_t>(v);
    if (!copy_x) BuildTable(t, qx, qz, identity, tx);
    if (!copy_y) BuildTable(t, qy, qz, identity, ty);
    return RunTernary<bool, uint8_t, uint8_t, uint8_t>(
        ctx, *cond, *x, *y, z, 2, [&](bool c, uint8_t a, uint8_t b) { return c ? tx[a] : ty[b]; });
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQLinearWhere(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "QLinearWhere", 1, kOpenEnded, Make<QLinearWhereKernel>());
}

}  // namespace quant_ms
}  // namespace onnxflow
