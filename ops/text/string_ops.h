// The text family's registration entry points (one per kernel file) and small helpers they share.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/framework/registry.h"

namespace onnxflow {

// Walks an output shape in row-major order and tracks, for each input broadcast to it, the
// flat offset of the element that feeds the current output element.
class BroadcastWalker {
 public:
  BroadcastWalker(const Shape& output, const std::vector<Shape>& inputs);
  int64_t offset(size_t input) const { return offsets_[input]; }
  void Next();

 private:
  Shape output_;
  std::vector<std::vector<int64_t>> strides_;  // per input, per output axis (0 when broadcast)
  std::vector<int64_t> index_;
  std::vector<int64_t> offsets_;
};

}  // namespace onnxflow
