// A per-channel ByteLookup computed instead of read, for channels-last values: the lookup of a
// DequantizeLinear -> x * s + b (a BatchNormalization, a Mul / Add by a per-channel constant) ->
// Relu | Clip -> QuantizeLinear chain (graph/qdq_lookup.cc, DenseNet's 62 pre-activations) whose
// table the lookup kernel holds too. Read channels-last, each element's row is another channel's,
// a load from a different 256-byte row (0.37 ns an element at best; 11.3 of DenseNet-121's 32.7 ms
// in one profile); the same float operations in SIMD are a few instructions per 16 elements. The
// kernel (qlinear_lookup.cc) checks when it is built that these give every byte of its constant
// table, and reads the table when they do not, so the table stays what the result is.
#pragma once

#include <cstdint>

namespace onnxflow {

// Rows of `params` ([kChannelAffineRows, C] floats), per channel c:
//   y = sat(round_half_even(clamp(min(max((x - xz) * xs * s + b, lo), hi) / ys, below, above)) + yz)
// evaluated as (x - xz) * xs, * s, + b (a product then a sum, no fused multiply-add), max lo, min hi,
// / ys, clamp to [below, above] (the output type's range less yz), rounded half to even, + yz.
enum ChannelAffineRow { kXz, kXs, kS, kB, kLo, kHi, kYs, kBelow, kAbove, kYz, kChannelAffineRows };

// y[p * C + c] for `pixels` pixels of C channels each, x and y 8-bit (signed when *_signed).
void ChannelAffineLastAxis(const uint8_t* x, bool x_signed, const float* params, int64_t channels, int64_t pixels,
                           bool y_signed, uint8_t* y);

}  // namespace onnxflow
