#include "ops/framework/concat.h"

#include <cstring>

namespace onnxflow {

void CopyElements(const Tensor& src, int64_t src_offset, Tensor* dst, int64_t dst_offset, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DataType::kString) {
    const std::string* from = src.data<std::string>() + src_offset;
    std::string* to = dst->mutable_data<std::string>() + dst_offset;
    for (int64_t i = 0; i < count; ++i) to[i] = from[i];
    return;
  }
  const size_t elem = ElementSize(src.dtype());
  std::memcpy(static_cast<char*>(dst->mutable_raw_data()) + dst_offset * elem,
              static_cast<const char*>(src.raw_data()) + src_offset * elem, count * elem);
}

Result<Shape> ConcatOutputShape(const std::vector<const Tensor*>& parts, int64_t axis, bool new_axis) {
  if (parts.empty()) return InvalidArgument("nothing to concatenate");
  const Tensor& first = *parts[0];
  for (const Tensor* p : parts) {
    if (p->dtype() != first.dtype()) {
      return InvalidArgument(std::string("cannot concatenate ") + DataTypeName(p->dtype()) + " with " +
                             DataTypeName(first.dtype()));
    }
    if (p->rank() != first.rank()) {
      return InvalidArgument("cannot concatenate shapes " + ShapeToString(first.shape()) + " and " + ShapeToString(p->shape()));
    }
    for (int64_t d = 0; d < first.rank(); ++d) {
      if ((new_axis || d != axis) && p->dim(d) != first.dim(d)) {
        return InvalidArgument("cannot concatenate shapes " + ShapeToString(first.shape()) + " and " +
                               ShapeToString(p->shape()) + " along axis " + std::to_string(axis));
      }
    }
  }
  Shape out = first.shape();
  if (new_axis) {
    out.insert(out.begin() + axis, static_cast<int64_t>(parts.size()));
  } else {
    out[axis] = 0;
    for (const Tensor* p : parts) out[axis] += p->dim(axis);
  }
  return out;
}

void ConcatInto(const std::vector<const Tensor*>& parts, int64_t axis, bool new_axis, Tensor* out) {
  // View every part as [outer, block]: outer = product of dims before `axis`, block = the rest.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out->dim(d);
  int64_t out_block = out->size() / (outer > 0 ? outer : 1);
  if (outer == 0) return;
  int64_t offset = 0;
  for (const Tensor* p : parts) {
    const int64_t block = p->size() / outer;
    for (int64_t o = 0; o < outer; ++o) CopyElements(*p, o * block, out, o * out_block + offset, block);
    offset += block;
  }
  (void)new_axis;
}

}  // namespace onnxflow
