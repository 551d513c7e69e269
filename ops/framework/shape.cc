#include "ops/framework/shape.h"

#include <algorithm>

namespace onnxflow {

Result<int64_t> CheckedElementCount(const Shape& shape) {
  // The product of the non-zero dims must fit too: an empty tensor's strides (Strides, the kernels'
  // index arithmetic) multiply them all, whatever the 0 dim says.
  int64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument("negative dimension in shape " + ShapeToString(shape));
    if (d == 0) {
      empty = true;
      continue;
    }
    if (nonzero > INT64_MAX / d) return InvalidArgument("shape " + ShapeToString(shape) + " has too many elements");
    nonzero *= d;
  }
  return empty ? 0 : nonzero;
}

Result<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgument("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

Result<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return InvalidArgument("shapes " + ShapeToString(a) + " and " + ShapeToString(b) + " do not broadcast");
    }
  }
  return out;
}

Result<Shape> BroadcastShapes(const std::vector<const Shape*>& shapes) {
  Shape out;
  for (const Shape* s : shapes) {
    ONNXFLOW_ASSIGN_OR_RETURN(out, BroadcastShapes(out, *s));
  }
  return out;
}

std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

std::vector<int64_t> BroadcastStrides(const Shape& input, const Shape& output) {
  std::vector<int64_t> strides(output.size(), 0);
  const std::vector<int64_t> own = Strides(input);
  const size_t offset = output.size() - input.size();
  for (size_t i = 0; i < input.size(); ++i) strides[offset + i] = input[i] == 1 ? 0 : own[i];
  return strides;
}

int64_t SizeFromDim(const Shape& shape, int64_t begin) {
  int64_t n = 1;
  for (size_t i = begin; i < shape.size(); ++i) n *= shape[i];
  return n;
}

int64_t SizeToDim(const Shape& shape, int64_t end) {
  int64_t n = 1;
  for (int64_t i = 0; i < end; ++i) n *= shape[i];
  return n;
}

}  // namespace onnxflow
