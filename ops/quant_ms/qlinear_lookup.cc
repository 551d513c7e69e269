// com.onnxflow ByteLookup(X, Table): Y[i] = Table[X[i] as an unsigned byte], X int8 or uint8,
// Table 256 values of Y's type (int8 or uint8), a constant. graph/qdq_fusion.cc writes it for a
// DequantizeLinear -> QuantizeLinear pair on 8-bit values (a requantization to other parameters,
// what ResNet's Add -> Relu -> Q leaves): the table holds the pair's own float arithmetic for each
// of the 256 inputs, so the result is the pair's, in one pass over bytes instead of two over floats.
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/quant_ms/qlinear_simd.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace quant_ms {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

class ByteLookupKernel : public OpKernel {
 public:
  explicit ByteLookupKernel(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* table, ctx.RequireTensor(1));
    if (!Is8Bit(x->dtype())) return InvalidArgument("ByteLookup: X must be int8 or uint8");
    if (!Is8Bit(table->dtype()) || table->size() != 256) {
      return InvalidArgument("ByteLookup: Table must hold 256 int8 or uint8 values, got " +
                             ShapeToString(table->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, table->dtype(), x->shape()));
    const uint8_t* t = static_cast<const uint8_t*>(table->raw_data());
    const uint8_t* px = static_cast<const uint8_t*>(x->raw_data());
    uint8_t* py = static_cast<uint8_t*>(y->mutable_raw_data());
    ParallelFor(ctx, x->size(), 1, [&](int64_t b, int64_t e) { ApplyByteTable(t, px + b, py + b, e - b); });
    return Status::Ok();
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterByteLookup(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kByteLookup, internal_ops::kVersion, internal_ops::kVersion,
                           Make<ByteLookupKernel>());
}

}  // namespace quant_ms
}  // namespace onnxflow
