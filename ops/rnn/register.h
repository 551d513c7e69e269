#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_RNN_REGISTRARS(X) \
  X(RegisterRnn)  /* rnn.cc */     \
  X(RegisterGru)  /* gru.cc */     \
  X(RegisterLstm)  /* lstm.cc */   \
  X(RegisterDynamicQuantizeLstm)  /* dynamic_quantize_lstm.cc */

namespace onnxflow {
namespace rnn {
ONNXFLOW_RNN_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace rnn

Status RegisterRnnKernels(KernelRegistry& registry);

}  // namespace onnxflow
