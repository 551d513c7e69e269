// QuantizeLinear: y = saturate(round_half_even(x / y_scale) + y_zero_point).
//
// One kernel serves versions 10 to 25; later versions only add attributes and types:
// axis (13), saturate and float8 outputs (19), block_size, output_dtype, int16/uint16 and
// int4/uint4 outputs (21), float4 output and precision (23), float8e8m0 scales (24), int2/uint2
// outputs (25). The output type is the zero point's type, else `output_dtype`, else uint8.
//
// The division happens in float unless both x and the scale are float16 (or both bfloat16) —
// then its result is rounded to that type — or one of them is int32, then in double (numpy's
// promotion, as in the ONNX reference). The `precision` attribute overrides: x and the scale are
// rounded to that type first and so is the quotient. Integer outputs saturate to the type's
// range (NaN gives the minimum, as the reference does); float8 outputs follow Cast's rules
// with `saturate`; float4 always saturates.
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/cast/convert.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/domains.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/quant/register.h"
#include "ops/quant/quant_params.h"
#include "ops/quant/quant_simd.h"

namespace onnxflow {
namespace quant_ops {
namespace {

enum class DivPrecision { kFloat, kHalf, kBFloat16, kDouble };

inline double RoundTo(double v, DivPrecision p) {
  switch (p) {
    case DivPrecision::kHalf: return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case DivPrecision::kBFloat16: return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v)));
    case DivPrecision::kFloat: return static_cast<float>(v);
    case DivPrecision::kDouble: return v;
  }
  return v;
}

inline double Divide(double x, double s, DivPrecision p) {
  if (p == DivPrecision::kDouble) return x / s;
  if (p == DivPrecision::kFloat) return static_cast<float>(x) / static_cast<float>(s);
  return RoundTo(static_cast<float>(RoundTo(x, p)) / static_cast<float>(RoundTo(s, p)), p);
}

template <typename Y> struct IntRange;
template <> struct IntRange<uint8_t> { static constexpr double kMin = 0, kMax = 255; };
template <> struct IntRange<int8_t> { static constexpr double kMin = -128, kMax = 127; };
template <> struct IntRange<uint16_t> { static constexpr double kMin = 0, kMax = 65535; };
template <> struct IntRange<int16_t> { static constexpr double kMin = -32768, kMax = 32767; };
template <> struct IntRange<UInt4> { static constexpr double kMin = 0, kMax = 15; };
template <> struct IntRange<Int4> { static constexpr double kMin = -8, kMax = 7; };
template <> struct IntRange<UInt2> { static constexpr double kMin = 0, kMax = 3; };
template <> struct IntRange<Int2> { static constexpr double kMin = -2, kMax = 1; };

// Quantized value of quotient q with zero point zp.
template <typename Y>
inline Y Saturate(double q, double zp, bool saturate) {
  if constexpr (IsSmallFloat<Y>::value) {
    const float v = static_cast<float>(q) + static_cast<float>(zp);
    return SmallFloatFromDouble<Y>(v, saturate);
  } else {
    double r = std::nearbyint(q) + zp;  // round half to even
    if (std::isnan(r) || r < IntRange<Y>::kMin) r = IntRange<Y>::kMin;
    if (r > IntRange<Y>::kMax) r = IntRange<Y>::kMax;
    const int64_t i = static_cast<int64_t>(r);
    if constexpr (IsSubByteInt<Y>::value) return SubByteFromInt<Y>(i);
    else return static_cast<Y>(i);
  }
}

bool IsQuantizedType(DataType t) {
  return IsOneOf<uint8_t, int8_t, uint16_t, int16_t, UInt4, Int4, UInt2, Int2, Float8E4M3FN, Float8E4M3FNUZ,
                 Float8E5M2, Float8E5M2FNUZ, Float4E2M1>(t);
}

class QuantizeLinearKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<QuantizeLinearKernel>(new QuantizeLinearKernel());
    k->axis_ = info.GetInt("axis", 1);
    k->block_size_ = info.GetInt("block_size", 0);
    k->saturate_ = info.GetInt("saturate", 1) != 0;
    k->output_dtype_ = info.GetInt("output_dtype", 0);
    if (k->block_size_ < 0) return InvalidArgument("attribute block_size must not be negative");
    if (k->output_dtype_ != 0 &&
        (k->output_dtype_ > kMaxDataType || !IsQuantizedType(static_cast<DataType>(k->output_dtype_)))) {
      return InvalidArgument("attribute output_dtype " + std::to_string(k->output_dtype_) +
                             " is not a quantized type");
    }
    const int64_t precision = info.GetInt("precision", 0);
    switch (static_cast<DataType>(precision)) {
      case DataType::kUndefined: k->precision_ = -1; break;
      case DataType::kFloat: k->precision_ = static_cast<int>(DivPrecision::kFloat); break;
      case DataType::kFloat16: k->precision_ = static_cast<int>(DivPrecision::kHalf); break;
      case DataType::kBFloat16: k->precision_ = static_cast<int>(DivPrecision::kBFloat16); break;
      case DataType::kDouble:
      case DataType::kInt32: k->precision_ = static_cast<int>(DivPrecision::kDouble); break;
      default: return InvalidArgument("attribute precision " + std::to_string(precision) + " is not supported");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(1));
    const Tensor* zero_point = ctx.input_tensor(2);

    DataType out_type = DataType::kUint8;
    if (zero_point != nullptr) {
      out_type = zero_point->dtype();
      if (output_dtype_ != 0 && static_cast<DataType>(output_dtype_) != out_type) {
        return InvalidArgument(std::string("y_zero_point has type ") + DataTypeName(out_type) +
                               " but output_dtype asks for " + DataTypeName(static_cast<DataType>(output_dtype_)));
      }
    } else if (output_dtype_ != 0) {
      out_type = static_cast<DataType>(output_dtype_);
    }
    if (!IsQuantizedType(out_type)) {
      return InvalidArgument(std::string("cannot quantize to ") + DataTypeName(out_type));
    }
    if (!IsOneOf<float, Float16, BFloat16, int32_t, double>(x->dtype())) {
      return InvalidArgument(std::string("x has unsupported type ") + DataTypeName(x->dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(QuantLayout layout,
                              QuantLayout::Make(x->shape(), *scale, zero_point, axis_, block_size_));
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<double> scales, ParamsAsDouble(*scale, "y_scale"));
    std::vector<double> zero_points(scales.size(), 0.0);
    if (zero_point != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(zero_points, ParamsAsDouble(*zero_point, "y_zero_point"));
    }
    const DivPrecision precision = precision_ >= 0 ? static_cast<DivPrecision>(precision_)
                                                   : DefaultPrecision(x->dtype(), scale->dtype());
    // Every element is written below; the sub-byte types share bytes and start from zeros.
    const bool whole_bytes = out_type == DataType::kUint8 || out_type == DataType::kInt8 ||
                             out_type == DataType::kUint16 || out_type == DataType::kInt16;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, whole_bytes ? ctx.AllocateUninitialized(0, out_type, x->shape())
                                                      : ctx.Allocate(0, out_type, x->shape()));

    return DispatchType<float, Float16, BFloat16, int32_t, double>(x->dtype(), [&](auto x_tag) {
      using X = decltype(x_tag);
      return DispatchType<uint8_t, int8_t, uint16_t, int16_t, UInt4, Int4, UInt2, Int2, Float8E4M3FN,
                          Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float4E2M1>(out_type, [&](auto y_tag) {
        using Y = decltype(y_tag);
        const X* xd = x->data<X>();
        Y* yd = y->mutable_data<Y>();
        const int64_t total = x->size();
        ParallelFor(ctx, total, 4, [&](int64_t begin, int64_t end) {
          layout.ForEachRun(begin, end, [&](int64_t start, int64_t count, int64_t p, int64_t step) {
            constexpr bool kSimd = std::is_same_v<X, float> && (std::is_same_v<Y, uint8_t> || std::is_same_v<Y, int8_t> ||
                                                                std::is_same_v<Y, uint16_t> || std::is_same_v<Y, int16_t>);
            if constexpr (kSimd) {
              if (step == 0 && precision == DivPrecision::kFloat) {
                const float s = static_cast<float>(scales[p]), z = static_cast<float>(zero_points[p]);
                if constexpr (std::is_same_v<Y, uint8_t>) QuantizeFloatToUint8(xd + start, count, s, z, yd + start);
                if constexpr (std::is_same_v<Y, int8_t>) QuantizeFloatToInt8(xd + start, count, s, z, yd + start);
                if constexpr (std::is_same_v<Y, uint16_t>) QuantizeFloatToUint16(xd + start, count, s, z, yd + start);
                if constexpr (std::is_same_v<Y, int16_t>) QuantizeFloatToInt16(xd + start, count, s, z, yd + start);
                return;
              }
            }
            for (int64_t i = start; i < start + count; ++i, p += step) {
              const double xv = static_cast<double>(ToCompute(xd[i]));
              yd[i] = Saturate<Y>(Divide(xv, scales[p], precision), zero_points[p], saturate_);
            }
          });
        });
        return Status::Ok();
      });
    });
  }

 private:
  QuantizeLinearKernel() = default;

  static DivPrecision DefaultPrecision(DataType x, DataType scale) {
    if (x == DataType::kInt32 || scale == DataType::kInt32 || x == DataType::kDouble) return DivPrecision::kDouble;
    if (x == DataType::kFloat16 && scale == DataType::kFloat16) return DivPrecision::kHalf;
    if (x == DataType::kBFloat16 && scale == DataType::kBFloat16) return DivPrecision::kBFloat16;
    return DivPrecision::kFloat;
  }

  int64_t axis_ = 1;
  int64_t block_size_ = 0;
  bool saturate_ = true;
  int64_t output_dtype_ = 0;
  int precision_ = -1;  // -1: from the input types
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQuantizeLinear(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "QuantizeLinear", 10, kOpenEnded, Make<QuantizeLinearKernel>()));
  // ONNX Runtime's quantizer also writes com.microsoft QuantizeLinear (version 1): the same
  // inputs and axis attribute, 8-, 16- and 4-bit outputs.
  return registry.Register(kMsDomain, "QuantizeLinear", 1, kOpenEnded, Make<QuantizeLinearKernel>());
}

}  // namespace quant_ops
}  // namespace onnxflow
