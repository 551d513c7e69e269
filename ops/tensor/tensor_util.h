// Helpers shared by the shape and data-movement ops of the tensor family.
//
// Most of these ops only move elements: they never look at a value, so one instantiation per
// element SIZE serves every dtype (float8 and int8 alike move as one byte). DispatchBySize picks
// a plain unsigned type of the element's size, or std::string for strings, which must be copied
// element by element. std::copy_n on the trivially copyable stand-ins compiles to memmove.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel.h"

namespace onnxflow {
namespace tensor_ops {

// A 16-byte element (complex128) moved as raw bits.
struct Bytes16 {
  uint64_t lo, hi;
};
static_assert(sizeof(std::complex<double>) == sizeof(Bytes16), "complex128 moves as 16 bytes");

// Runs f(T{}) with T a trivially copyable type of dtype's element size, or std::string.
template <typename F>
Status DispatchBySize(DataType dtype, F&& f) {
  if (dtype == DataType::kString) return f(std::string());
  switch (ElementSize(dtype)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    case 16: return f(Bytes16{});
    default: break;
  }
  return Unimplemented(std::string("type ") + DataTypeName(dtype) + " is not supported here");
}

// The values of a 0-D or 1-D int32/int64 tensor (shapes, axes, pads, repeats ...). `what` names
// the input in errors.
Result<std::vector<int64_t>> ReadInt64s(const Tensor& t, const std::string& what);

// Same, for an optional input i: `fallback` when absent.
Result<std::vector<int64_t>> ReadOptionalInt64s(const KernelContext& ctx, int i, const std::string& what,
                                                std::vector<int64_t> fallback);

// A scalar (or 1-element tensor) of integer or float type read as int64/double.
Result<int64_t> ReadScalarInt(const Tensor& t, const std::string& what);

// Normalizes axes against `rank`, refusing out-of-range and (when !allow_duplicates) repeated
// ones. `what` names the axes in errors.
Result<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank, const std::string& what,
                                           bool allow_duplicates = false);

// Shape of `t` as a string with its name for messages: "input 'data' [2,3]".
std::string Describe(const std::string& name, const Tensor& t);

// The error an index from data gets when it falls outside [-dim, dim).
Status IndexOutOfRange(const std::string& what, int64_t index, int64_t dim);

}  // namespace tensor_ops
}  // namespace onnxflow
