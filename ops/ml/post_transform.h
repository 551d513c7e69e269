// The score transforms the ml tree and linear ops share (post_transform attribute), applied to
// one row of scores in place. Semantics follow onnxruntime's ml_common.h.
#pragma once

#include <cstdint>
#include <string>

#include "include/onnxflow/status.h"

namespace onnxflow {

enum class PostTransform { kNone = 0, kSoftmax = 1, kLogistic = 2, kSoftmaxZero = 3, kProbit = 4 };

// From the integer encoding of TreeEnsemble-5 (0..4).
Result<PostTransform> PostTransformFromInt(int64_t value);
// From the string encoding of the older ops ("NONE", "SOFTMAX", ...).
Result<PostTransform> PostTransformFromString(const std::string& value);

// Applies `transform` to scores[0, n).
void ApplyPostTransform(PostTransform transform, double* scores, int64_t n);

// The inverse error function, accurate to double rounding over (-1, 1); +-inf at +-1.
double ErfInv(double x);

}  // namespace onnxflow
