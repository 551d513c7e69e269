#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_TEXT_REGISTRARS(X) \
  X(RegisterStringConcat)           \
  X(RegisterStringSplit)            \
  X(RegisterStringNormalizer)       \
  X(RegisterRegexFullMatch)         \
  X(RegisterTfIdfVectorizer)        \
  X(RegisterTokenizer)  /* com.microsoft */  \
  X(RegisterMurmurHash3)  /* com.microsoft */

namespace onnxflow {

ONNXFLOW_TEXT_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterTextKernels(KernelRegistry& registry);

}  // namespace onnxflow
