// Shape arithmetic shared by kernels: checked element counts, axis normalization, broadcasting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

// Product of dims, refusing negative dims and products that overflow int64.
Result<int64_t> CheckedElementCount(const Shape& shape);

// Maps axis in [-rank, rank) to [0, rank), or an error naming the axis.
Result<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

// Numpy-style broadcast of two (or more) shapes, or an error showing both.
Result<Shape> BroadcastShapes(const Shape& a, const Shape& b);
Result<Shape> BroadcastShapes(const std::vector<const Shape*>& shapes);

// Row-major strides of `shape`, in elements.
std::vector<int64_t> Strides(const Shape& shape);

// Strides for reading `input` as if broadcast to `output` (0 along broadcast dims); `input` is
// right-aligned against `output`.
std::vector<int64_t> BroadcastStrides(const Shape& input, const Shape& output);

// Product of dims [begin, end).
int64_t SizeFromDim(const Shape& shape, int64_t begin);
int64_t SizeToDim(const Shape& shape, int64_t end);

}  // namespace onnxflow
