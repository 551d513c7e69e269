#include "ops/text/string_ops.h"

#include "ops/framework/shape.h"

namespace onnxflow {

BroadcastWalker::BroadcastWalker(const Shape& output, const std::vector<Shape>& inputs)
    : output_(output), index_(output.size(), 0), offsets_(inputs.size(), 0) {
  for (const Shape& s : inputs) strides_.push_back(BroadcastStrides(s, output));
}

void BroadcastWalker::Next() {
  for (size_t axis = output_.size(); axis-- > 0;) {
    if (++index_[axis] < output_[axis]) {
      for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] += strides_[k][axis];
      return;
    }
    index_[axis] = 0;
    for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] -= strides_[k][axis] * (output_[axis] - 1);
  }
}

}  // namespace onnxflow
