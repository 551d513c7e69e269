#include "ops/tensor/tensor_util.h"

#include <set>

namespace onnxflow {
namespace tensor_ops {

Result<std::vector<int64_t>> ReadInt64s(const Tensor& t, const std::string& what) {
  if (t.rank() > 1) {
    return InvalidArgument(what + " must be a scalar or 1-D tensor, got shape " + ShapeToString(t.shape()));
  }
  const int64_t n = t.size();
  std::vector<int64_t> out(static_cast<size_t>(n));
  switch (t.dtype()) {
    case DataType::kInt64:
      std::copy_n(t.data<int64_t>(), n, out.data());
      break;
    case DataType::kInt32:
      std::copy_n(t.data<int32_t>(), n, out.data());
      break;
    default:
      return InvalidArgument(what + " must be int32 or int64, got " + DataTypeName(t.dtype()));
  }
  return out;
}

Result<std::vector<int64_t>> ReadOptionalInt64s(const KernelContext& ctx, int i, const std::string& what,
                                                std::vector<int64_t> fallback) {
  const Value* v = ctx.input(i);
  if (v == nullptr || v->is_none()) return fallback;
  if (!v->is_tensor()) return InvalidArgument(what + " must be a tensor");
  return ReadInt64s(v->tensor(), what);
}

Result<int64_t> ReadScalarInt(const Tensor& t, const std::string& what) {
  if (t.size() != 1) {
    return InvalidArgument(what + " must hold exactly one value, got shape " + ShapeToString(t.shape()));
  }
  switch (t.dtype()) {
    case DataType::kInt64: return t.data<int64_t>()[0];
    case DataType::kInt32: return static_cast<int64_t>(t.data<int32_t>()[0]);
    case DataType::kInt16: return static_cast<int64_t>(t.data<int16_t>()[0]);
    case DataType::kInt8: return static_cast<int64_t>(t.data<int8_t>()[0]);
    case DataType::kUint8: return static_cast<int64_t>(t.data<uint8_t>()[0]);
    case DataType::kUint16: return static_cast<int64_t>(t.data<uint16_t>()[0]);
    case DataType::kUint32: return static_cast<int64_t>(t.data<uint32_t>()[0]);
    case DataType::kUint64: return static_cast<int64_t>(t.data<uint64_t>()[0]);
    default: break;
  }
  return InvalidArgument(what + " must be an integer, got " + DataTypeName(t.dtype()));
}

Result<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank, const std::string& what,
                                           bool allow_duplicates) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return InvalidArgument(what + ": axis " + std::to_string(a) + " is out of range for rank " +
                             std::to_string(rank));
    }
    const int64_t n = a < 0 ? a + rank : a;
    if (!allow_duplicates && !seen.insert(n).second) {
      return InvalidArgument(what + ": axis " + std::to_string(a) + " appears more than once");
    }
    out.push_back(n);
  }
  return out;
}

std::string Describe(const std::string& name, const Tensor& t) {
  return name + " " + ShapeToString(t.shape());
}

Status IndexOutOfRange(const std::string& what, int64_t index, int64_t dim) {
  return OutOfRange(what + ": index " + std::to_string(index) + " is out of range for a dimension of size " +
                    std::to_string(dim));
}

}  // namespace tensor_ops
}  // namespace onnxflow
