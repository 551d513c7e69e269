#include "ops/tensor/indices.h"

#include <algorithm>
#include <string>

#include "ops/framework/shape.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

constexpr char kWhat[] = "input 'indices'";

// Maps v into [0, dim); false, leaving v as it was, when it lies outside [-dim, dim). A bool
// rather than a Status: this runs once per index.
bool NormalizeIndex(int64_t dim, int64_t& v) {
  if (v < -dim || v >= dim) return false;
  if (v < 0) v += dim;
  return true;
}

}  // namespace

Result<std::vector<int64_t>> ReadIndices(const Tensor& indices) {
  if (indices.dtype() != DataType::kInt64 && indices.dtype() != DataType::kInt32) {
    return InvalidArgument(std::string(kWhat) + " must be int32 or int64, got " + DataTypeName(indices.dtype()));
  }
  std::vector<int64_t> v(static_cast<size_t>(indices.size()));
  if (indices.dtype() == DataType::kInt64) {
    std::copy_n(indices.data<int64_t>(), indices.size(), v.data());
  } else {
    std::copy_n(indices.data<int32_t>(), indices.size(), v.data());
  }
  return v;
}

Result<std::vector<int64_t>> NormalizedIndices(const Tensor& indices, int64_t dim) {
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadIndices(indices));
  for (int64_t& index : v) {
    if (!NormalizeIndex(dim, index)) return IndexOutOfRange(kWhat, index, dim);
  }
  return v;
}

Status CheckElementsIndicesShape(const Tensor& data, const Tensor& indices, int64_t axis) {
  const int64_t rank = data.rank();
  if (indices.rank() != rank) {
    return InvalidArgument(std::string(kWhat) + " " + ShapeToString(indices.shape()) + " must have the rank of data " +
                           ShapeToString(data.shape()));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis && indices.dim(d) > data.dim(d)) {
      return InvalidArgument(std::string(kWhat) + " " + ShapeToString(indices.shape()) + " is larger than data " +
                             ShapeToString(data.shape()) + " on axis " + std::to_string(d));
    }
  }
  return Status::Ok();
}

Result<std::vector<int64_t>> TupleOffsets(const Tensor& data, const std::vector<int64_t>& indices,
                                          int64_t tuple_count, int64_t k, int64_t batch_dims) {
  const int64_t batches = SizeToDim(data.shape(), batch_dims);
  const int64_t per_batch = batches > 0 ? tuple_count / batches : 0;
  const int64_t batch_stride = SizeFromDim(data.shape(), batch_dims);
  const std::vector<int64_t> strides = Strides(data.shape());
  std::vector<int64_t> offsets(static_cast<size_t>(tuple_count));
  for (int64_t t = 0; t < tuple_count; ++t) {
    int64_t offset = (per_batch > 0 ? t / per_batch : 0) * batch_stride;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t dim = data.dim(batch_dims + j);
      int64_t v = indices[t * k + j];
      if (!NormalizeIndex(dim, v)) return IndexOutOfRange(kWhat, v, dim);
      offset += v * strides[batch_dims + j];
    }
    offsets[t] = offset;
  }
  return offsets;
}

}  // namespace tensor_ops
}  // namespace onnxflow
