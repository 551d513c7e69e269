#include "ops/cast/cast_elements.h"

#include <functional>
#include <string>
#include <type_traits>

#include "ops/cast/half_simd.h"
#include "ops/cast/string_convert.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/parallel.h"

namespace onnxflow {
namespace {

#define ONNXFLOW_CAST_TYPES                                                                         \
  float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, \
      uint64_t, bool, std::string, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ,       \
      Float8E8M0, Float4E2M1, Int4, UInt4, Int2, UInt2

// The precision a source float type is printed with.
template <typename S>
constexpr FloatPrecision PrecisionOf() {
  if constexpr (std::is_same_v<S, double>) return FloatPrecision::kDouble;
  else if constexpr (std::is_same_v<S, Float16>) return FloatPrecision::kHalf;
  else if constexpr (std::is_same_v<S, BFloat16>) return FloatPrecision::kBFloat16;
  else return FloatPrecision::kFloat;  // float and the float8/float4 formats (exact in float)
}

template <typename S>
std::string ToText(S v) {
  if constexpr (std::is_same_v<S, bool>) {
    return FormatBool(v);
  } else {
    const auto w = cast_internal::Widen(v);
    if constexpr (std::is_floating_point_v<decltype(w)>) {
      return FormatFloat(static_cast<double>(w), PrecisionOf<S>());
    } else {
      return std::to_string(w);
    }
  }
}

template <typename D>
bool FromText(const std::string& text, const CastOptions& options, D* out) {
  using cast_internal::Narrow;
  if constexpr (std::is_same_v<D, bool>) {
    return ParseBool(text, out);
  } else if constexpr (std::is_same_v<D, float> || std::is_same_v<D, BFloat16>) {
    float f = 0;
    if (!ParseFloat(text, &f)) return false;
    *out = Narrow<D>(f, options);
    return true;
  } else if constexpr (std::is_floating_point_v<D> || std::is_same_v<D, Float16> || IsSmallFloat<D>::value) {
    double d = 0;
    if (!ParseDouble(text, &d)) return false;
    *out = Narrow<D>(d, options);
    return true;
  } else if constexpr (std::is_unsigned_v<D>) {
    uint64_t u = 0;
    if (!ParseUInt64(text, &u)) return false;
    *out = Narrow<D>(u, options);
    return true;
  } else {  // signed integers and sub-byte integers
    int64_t i = 0;
    if (!ParseInt64(text, &i)) return false;
    *out = Narrow<D>(i, options);
    return true;
  }
}

// The split over cores behind one non-template function: 24 x 24 type pairs each instantiating
// tbb::parallel_for made this file take 120 s to compile under ASan (-O1 -g1), most of it TBB's
// templates; a std::function call per chunk (chunks of 64K operations and more) costs nothing.
void ConvertChunks(const KernelContext* ctx, int64_t n, int64_t cost, const std::function<void(int64_t, int64_t)>& body) {
  if (ctx != nullptr) ParallelFor(*ctx, n, cost, body);
  else body(0, n);
}

template <typename S, typename D>
Status ConvertTyped(const Tensor& in, Tensor* out, const CastOptions& options, const KernelContext* ctx) {
  const S* src = in.data<S>();
  D* dst = out->mutable_data<D>();
  const int64_t n = in.size();
  if constexpr (std::is_same_v<S, std::string> && std::is_same_v<D, std::string>) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  } else if constexpr (std::is_same_v<S, std::string>) {
    for (int64_t i = 0; i < n; ++i) {
      if (!FromText<D>(src[i], options, &dst[i])) {
        return InvalidArgument("input element " + std::to_string(i) + " \"" + src[i] + "\" is not a number of type " +
                               DataTypeName(DataTypeOf<D>::value));
      }
    }
  } else if constexpr (std::is_same_v<D, std::string>) {
    for (int64_t i = 0; i < n; ++i) dst[i] = ToText(src[i]);
  } else {
    auto body = [&](int64_t begin, int64_t end) {
      if constexpr (std::is_same_v<S, float> && std::is_same_v<D, Float16>) {
        FloatToHalfArray(src + begin, reinterpret_cast<uint16_t*>(dst + begin), end - begin);
      } else if constexpr (std::is_same_v<S, Float16> && std::is_same_v<D, float>) {
        HalfToFloatArray(reinterpret_cast<const uint16_t*>(src + begin), dst + begin, end - begin);
      } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, BFloat16>) {
        FloatToBFloat16Array(src + begin, reinterpret_cast<uint16_t*>(dst + begin), end - begin);
      } else if constexpr (std::is_same_v<S, BFloat16> && std::is_same_v<D, float>) {
        BFloat16ToFloatArray(reinterpret_cast<const uint16_t*>(src + begin), dst + begin, end - begin);
      } else {
        for (int64_t i = begin; i < end; ++i) dst[i] = ConvertElement<D>(src[i], options);
      }
    };
    ConvertChunks(ctx, n, (IsSmallFloat<D>::value || std::is_same_v<D, Float16>) ? 8 : 1, body);
  }
  return Status::Ok();
}

}  // namespace

bool IsCastableType(DataType dtype) {
  return dtype != DataType::kUndefined && dtype != DataType::kComplex64 && dtype != DataType::kComplex128 &&
         IsValidDataType(static_cast<int32_t>(dtype));
}

Status CastElements(const Tensor& in, Tensor* out, const CastOptions& options, const KernelContext* ctx) {
  if (in.size() != out->size()) {
    return Internal("CastElements: element counts differ (" + std::to_string(in.size()) + " vs " +
                    std::to_string(out->size()) + ")");
  }
  return DispatchType<ONNXFLOW_CAST_TYPES>(in.dtype(), [&](auto src_tag) {
    using S = decltype(src_tag);
    return DispatchType<ONNXFLOW_CAST_TYPES>(out->dtype(), [&](auto dst_tag) {
      using D = decltype(dst_tag);
      return ConvertTyped<S, D>(in, out, options, ctx);
    });
  });
}

Result<Tensor> CastTensor(const Tensor& in, DataType to, const CastOptions& options) {
  Tensor out(to, in.shape());
  ONNXFLOW_RETURN_IF_ERROR(CastElements(in, &out, options));
  return out;
}

}  // namespace onnxflow
