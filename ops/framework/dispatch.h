// Runs a generic lambda with a value of the C++ type behind a DataType:
//
//   return DispatchType<float, double, Float16>(x.dtype(), [&](auto tag) {
//     using T = decltype(tag);
//     ...
//     return Status::Ok();
//   });
//
// A dtype outside the list returns Unimplemented naming it.
#pragma once

#include <string>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

template <typename... Ts, typename F>
Status DispatchType(DataType dtype, F&& f) {
  Status result;
  bool done = false;
  auto try_one = [&](auto tag) {
    using T = decltype(tag);
    if (!done && DataTypeOf<T>::value == dtype) {
      done = true;
      result = f(T{});
    }
  };
  (try_one(Ts{}), ...);
  if (!done) return Unimplemented(std::string("type ") + DataTypeName(dtype) + " is not supported here");
  return result;
}

// Convenient type lists, as parameter packs in a tag.
#define ONNXFLOW_FLOAT_TYPES float, double, Float16, BFloat16
#define ONNXFLOW_INT_TYPES int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
#define ONNXFLOW_NUMERIC_TYPES ONNXFLOW_FLOAT_TYPES, ONNXFLOW_INT_TYPES
#define ONNXFLOW_ALL_TYPES ONNXFLOW_NUMERIC_TYPES, bool, std::string

// True when `dtype` is one of Ts (for load-time type checks in factories).
template <typename... Ts>
bool IsOneOf(DataType dtype) {
  return ((DataTypeOf<Ts>::value == dtype) || ...);
}

}  // namespace onnxflow
