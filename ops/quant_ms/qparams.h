// The per-tensor scale and zero point that every com.microsoft QLinear op takes per operand, read
// and checked the same way: the scale a float with one element, the zero point (optional: 0) of
// the operand's own 8-bit type with one element.
#pragma once

#include <cstdint>
#include <string>

#include "include/onnxflow/status.h"
#include "ops/framework/kernel.h"

namespace onnxflow {
namespace quant_ms {

struct QParams {
  float scale = 1;
  float zero = 0;
};

// Inputs `scale_index` and `zero_index` of the node; `type` is the 8-bit type of the operand.
Result<QParams> ReadQParams(const KernelContext& ctx, int scale_index, int zero_index, DataType type,
                            const char* scale_name, const char* zero_name);

inline float TypeMin(DataType t) { return t == DataType::kInt8 ? -128.f : 0.f; }
inline float TypeMax(DataType t) { return t == DataType::kInt8 ? 127.f : 255.f; }

// Refuses anything but uint8 and int8, naming the input.
Status CheckQuantType(DataType t, const char* input_name);

// The table y = quantize(f(dequantize(x))) over every byte x of `type` (int8 by bit pattern).
template <typename F>
void BuildTable(DataType type, const QParams& x, const QParams& y, F&& f, uint8_t table[256]);

}  // namespace quant_ms
}  // namespace onnxflow

#include "ops/quant_ms/qlinear_simd.h"

namespace onnxflow {
namespace quant_ms {

template <typename F>
void BuildTable(DataType type, const QParams& x, const QParams& y, F&& f, uint8_t table[256]) {
  const bool is_signed = type == DataType::kInt8;
  for (int v = 0; v < 256; ++v) {
    const float q = is_signed ? static_cast<float>(static_cast<int8_t>(v)) : static_cast<float>(v);
    const float r = f((q - x.zero) * x.scale);
    const int32_t out = RoundSaturate(r / y.scale, y.zero, TypeMin(type), TypeMax(type));
    table[v] = static_cast<uint8_t>(out);
  }
}

}  // namespace quant_ms
}  // namespace onnxflow
