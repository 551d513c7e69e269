// Pieces shared by the elementwise kernel files: wrap-around integer arithmetic (numpy wraps on
// overflow; C++ signed overflow is undefined), the pre-opset-7 broadcast attributes, and the
// per-file registration functions that register.cc calls.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/elementwise/broadcast.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"

namespace onnxflow {

// Unsigned type at least as wide as int, so that even uint16 * uint16 cannot overflow a promoted int.
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
inline T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  } else {
    return a + b;
  }
}
template <typename T>
inline T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  } else {
    return a - b;
  }
}
template <typename T>
inline T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  } else {
    return a * b;
  }
}
template <typename T>
inline T WrapNeg(T a) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(WrapType<T>{0} - static_cast<WrapType<T>>(a));
  } else {
    return -a;
  }
}

// Binary ops before opset 7 (Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater, Less)
// broadcast only with attribute broadcast=1, aligning B with A at `axis`.
class LegacyBroadcast {
 public:
  // `numpy_since`: the first opset with numpy broadcasting (7 for all these ops).
  explicit LegacyBroadcast(const KernelInfo& info, int numpy_since = 7)
      : active_(info.opset() < numpy_since),
        broadcast_(info.GetInt("broadcast", 0) != 0),
        has_axis_(info.has_attribute("axis")),
        axis_(info.GetInt("axis", 0)) {}

  // B as numpy broadcasting should see it.
  Result<Tensor> Apply(const Tensor& a, const Tensor& b) const {
    if (!active_) return b;
    return LegacyBroadcastOperand(a, b, broadcast_, has_axis_, axis_);
  }

 private:
  bool active_;
  bool broadcast_;
  bool has_axis_;
  int64_t axis_;
};

inline Status SameTypeOrError(const Tensor& a, const Tensor& b, const char* what) {
  if (a.dtype() == b.dtype()) return Status::Ok();
  return InvalidArgument(std::string(what) + ": inputs have different types " + DataTypeName(a.dtype()) + " and " +
                         DataTypeName(b.dtype()));
}

// At load: Unimplemented when input i's type is known and is not one of Ts, so the loader can
// name the node among the unsupported ones before any run.
template <typename... Ts>
Status CheckInputType(const KernelInfo& info, int i) {
  const DataType t = info.input_type(i);
  if (t == DataType::kUndefined || IsOneOf<Ts...>(t)) return Status::Ok();
  return Unimplemented(info.op_type() + " does not take " + DataTypeName(t) + " (input " + std::to_string(i) + ")");
}

// `inner`, after checking at load that input `input` has one of the types Ts.
template <typename... Ts>
ONNXFLOW_REGISTRAR KernelFactory WithInputTypes(int input, KernelFactory inner) {
  return [input, inner](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    ONNXFLOW_RETURN_IF_ERROR(CheckInputType<Ts...>(info, input));
    return inner(info);
  };
}

// One registration function per kernel file.

}  // namespace onnxflow
