// DynamicQuantizeLinear-11: quantizes float x to uint8 with a scale and zero point computed from
// x's range, which is first widened to include 0:
//   scale = (max(0, max x) - min(0, min x)) / 255   (1/255 when that range is empty)
//   zero_point = round_half_even(clamp(-min / scale, 0, 255))
//   y = clamp(round_half_even(x / scale) + zero_point, 0, 255)
// All arithmetic in float, as in the ONNX reference.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/quant/register.h"
#include "ops/quant/quant_simd.h"

namespace onnxflow {
namespace quant_ops {
namespace {

// Floats per task of the range pass.
constexpr int64_t kRangeBlock = int64_t{1} << 16;

class DynamicQuantizeLinearKernel : public OpKernel {
 public:
  explicit DynamicQuantizeLinearKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat) {
      return InvalidArgument(std::string("x must be float, got ") + DataTypeName(x->dtype()));
    }
    const float* xd = x->data<float>();
    const int64_t n = x->size();
    // The range block by block over the cores (a mobile network's 112 x 112 maps hold over a
    // million floats), then the blocks' ranges together; SIMD, NaN skipped.
    const int64_t blocks = (n + kRangeBlock - 1) / kRangeBlock;
    std::vector<float> block_lo(static_cast<size_t>(blocks)), block_hi(static_cast<size_t>(blocks));
    ParallelFor(ctx, blocks, kRangeBlock, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t begin = b * kRangeBlock;
        FloatRangeWithZero(xd + begin, std::min(kRangeBlock, n - begin), &block_lo[b], &block_hi[b]);
      }
    });
    const float lo = blocks > 0 ? *std::min_element(block_lo.begin(), block_lo.end()) : 0.0f;
    const float hi = blocks > 0 ? *std::max_element(block_hi.begin(), block_hi.end()) : 0.0f;
    float scale = 1.0f, zero_point = 0.0f;
    DynamicUint8Params(lo, hi, &scale, &zero_point);

    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kUint8, x->shape()));
    uint8_t* yd = y->mutable_data<uint8_t>();
    ParallelFor(ctx, n, 4, [&](int64_t begin, int64_t end) {
      QuantizeFloatToUint8(xd + begin, end - begin, scale, zero_point, yd + begin);  // NaN -> 0
    });
    if (ctx.has_output(1)) {
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * s, ctx.Allocate(1, DataType::kFloat, {}));
      s->mutable_data<float>()[0] = scale;
    }
    if (ctx.has_output(2)) {
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * z, ctx.Allocate(2, DataType::kUint8, {}));
      z->mutable_data<uint8_t>()[0] = static_cast<uint8_t>(zero_point);
    }
    return Status::Ok();
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDynamicQuantizeLinear(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "DynamicQuantizeLinear", 11, kOpenEnded, Make<DynamicQuantizeLinearKernel>());
}

}  // namespace quant_ops
}  // namespace onnxflow
