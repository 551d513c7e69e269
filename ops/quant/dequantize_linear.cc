// DequantizeLinear: y = (x - x_zero_point) * x_scale.
//
// One kernel serves versions 10 to 25 (axis 13, float8 inputs and float16 scales 19, blocked,
// int16 and int4 inputs 21, output_dtype and float4 23, float8e8m0 scales 24, int2 25). The output
// type is `output_dtype`, else the scale's type (float for an e8m0 scale). Arithmetic is in float
// like the reference (x converted to float first), except int32 with a zero point, which the
// reference does in double.
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/cast/convert.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/quant/register.h"
#include "ops/quant/quant_params.h"
#include "ops/quant/quant_simd.h"

namespace onnxflow {
namespace quant_ops {
namespace {

class DequantizeLinearKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<DequantizeLinearKernel>(new DequantizeLinearKernel());
    k->axis_ = info.GetInt("axis", 1);
    k->block_size_ = info.GetInt("block_size", 0);
    k->output_dtype_ = info.GetInt("output_dtype", 0);
    if (k->block_size_ < 0) return InvalidArgument("attribute block_size must not be negative");
    if (k->output_dtype_ != 0 && !IsOneOf<float, Float16, BFloat16>(static_cast<DataType>(k->output_dtype_))) {
      return InvalidArgument("attribute output_dtype " + std::to_string(k->output_dtype_) +
                             " must be float, float16 or bfloat16");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(1));
    const Tensor* zero_point = ctx.input_tensor(2);
    if (zero_point != nullptr && zero_point->dtype() != x->dtype()) {
      return InvalidArgument(std::string("x_zero_point has type ") + DataTypeName(zero_point->dtype()) +
                             " but x has type " + DataTypeName(x->dtype()));
    }
    DataType out_type = static_cast<DataType>(output_dtype_);
    if (output_dtype_ == 0) {
      out_type = IsOneOf<float, Float16, BFloat16>(scale->dtype()) ? scale->dtype() : DataType::kFloat;
    }
    ONNXFLOW_ASSIGN_OR_RETURN(QuantLayout layout,
                              QuantLayout::Make(x->shape(), *scale, zero_point, axis_, block_size_));
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<double> scales, ParamsAsDouble(*scale, "x_scale"));
    std::vector<double> zero_points(scales.size(), 0.0);
    if (zero_point != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(zero_points, ParamsAsDouble(*zero_point, "x_zero_point"));
    }
    std::vector<float> scales_f(scales.begin(), scales.end());
    std::vector<float> zero_points_f(zero_points.begin(), zero_points.end());
    const bool int32_with_zero_point = x->dtype() == DataType::kInt32 && zero_point != nullptr;
    // Every element is written below.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, out_type, x->shape()));

    return DispatchType<uint8_t, int8_t, uint16_t, int16_t, int32_t, UInt4, Int4, UInt2, Int2, Float8E4M3FN,
                        Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float4E2M1>(x->dtype(), [&](auto x_tag) {
      using X = decltype(x_tag);
      return DispatchType<float, Float16, BFloat16>(out_type, [&](auto y_tag) {
        using Y = decltype(y_tag);
        const X* xd = x->data<X>();
        Y* yd = y->mutable_data<Y>();
        ParallelFor(ctx, x->size(), 2, [&](int64_t begin, int64_t end) {
          layout.ForEachRun(begin, end, [&](int64_t start, int64_t count, int64_t p, int64_t step) {
            constexpr bool kSimd = std::is_same_v<Y, float> && (std::is_same_v<X, uint8_t> || std::is_same_v<X, int8_t> ||
                                                                std::is_same_v<X, uint16_t> || std::is_same_v<X, int16_t>);
            if constexpr (kSimd) {
              if (step == 0) {
                const float s = scales_f[p], z = zero_points_f[p];
                if constexpr (std::is_same_v<X, uint8_t>) DequantizeUint8ToFloat(xd + start, count, s, z, yd + start);
                if constexpr (std::is_same_v<X, int8_t>) DequantizeInt8ToFloat(xd + start, count, s, z, yd + start);
                if constexpr (std::is_same_v<X, uint16_t>) DequantizeUint16ToFloat(xd + start, count, s, z, yd + start);
                if constexpr (std::is_same_v<X, int16_t>) DequantizeInt16ToFloat(xd + start, count, s, z, yd + start);
                return;
              }
            }
            for (int64_t i = start; i < start + count; ++i, p += step) {
              const float xv = ConvertElement<float>(xd[i]);
              if (int32_with_zero_point) {
                yd[i] = ConvertElement<Y>((static_cast<double>(xv) - zero_points[p]) * scales[p]);
              } else {
                yd[i] = ConvertElement<Y>((xv - zero_points_f[p]) * scales_f[p]);
              }
            }
          });
        });
        return Status::Ok();
      });
    });
  }

 private:
  DequantizeLinearKernel() = default;
  int64_t axis_ = 1;
  int64_t block_size_ = 0;
  int64_t output_dtype_ = 0;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDequantizeLinear(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "DequantizeLinear", 10, kOpenEnded, Make<DequantizeLinearKernel>()));
  // com.microsoft DequantizeLinear (version 1), as ONNX Runtime's quantizer writes it.
  return registry.Register(kMsDomain, "DequantizeLinear", 1, kOpenEnded, Make<DequantizeLinearKernel>());
}

}  // namespace quant_ops
}  // namespace onnxflow
