// One registration function per kernel file of the signal family; register.cc calls them all.
#pragma once

#include <cstdint>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/registry.h"

namespace onnxflow {
namespace signal {

// A scalar (or one-element) int32/int64 input as int64, or an error naming it.
Result<int64_t> ReadIntScalar(const Tensor& t, const char* name);

}  // namespace signal
}  // namespace onnxflow
