// The ai.onnx.preview.training optimizers Adagrad, Adam, Momentum (see optimizers.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

inline const char kTrainingDomain[] = "ai.onnx.preview.training";

}  // namespace onnxflow
