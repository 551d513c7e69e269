// The index inputs of the gather and scatter ops, read and checked before any element moves:
// int32 or int64, each index inside [-dim, dim) of the axis it indexes (negative ones count from
// the end) and mapped into [0, dim). Errors name input 'indices' and the first bad index.
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {
namespace tensor_ops {

// The int32 or int64 `indices` as int64, not yet checked against any dim.
Result<std::vector<int64_t>> ReadIndices(const Tensor& indices);

// Every index of `indices` mapped into [0, dim): Gather, GatherElements, ScatterElements.
Result<std::vector<int64_t>> NormalizedIndices(const Tensor& indices, int64_t dim);

// GatherElements and ScatterElements: `indices` has data's rank and, off `axis`, no dim larger
// than data's.
Status CheckElementsIndicesShape(const Tensor& data, const Tensor& indices, int64_t axis);

// GatherND and ScatterND: the offset in `data` of the block each index tuple addresses. Tuple t
// is indices[t * k, t * k + k) (as ReadIndices gives them) and picks data[batch, i1, ..., ik, ...],
// where the first `batch_dims` dims of data are batch dims and the tuples split evenly between
// the batches.
Result<std::vector<int64_t>> TupleOffsets(const Tensor& data, const std::vector<int64_t>& indices,
                                          int64_t tuple_count, int64_t k, int64_t batch_dims);

}  // namespace tensor_ops
}  // namespace onnxflow
