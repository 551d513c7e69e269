// Type-erased element conversion of a whole tensor: the body of Cast and CastLike, also used by
// other kernels that need a dtype change (e.g. quantization zero points).
#pragma once

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/cast/convert.h"
#include "ops/framework/kernel.h"

namespace onnxflow {

// True for every element type Cast accepts (all but undefined and complex).
bool IsCastableType(DataType dtype);

// Writes `in` converted to out->dtype() into `out` (same element count, already allocated).
// Splits the work over the context's threads when `ctx` is given. Fails on unsupported types and
// on strings that are not numbers.
Status CastElements(const Tensor& in, Tensor* out, const CastOptions& options,
                    const KernelContext* ctx = nullptr);

// Convenience: a freshly allocated converted copy.
Result<Tensor> CastTensor(const Tensor& in, DataType to, const CastOptions& options = CastOptions());

}  // namespace onnxflow
