// The com.microsoft quantized ops (ONNX Runtime's contrib operators), one registration function
// per file, called by register.cc. All take per-tensor uint8 or int8 operands.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {
namespace quant_ms {

Status RegisterQLinearBinary(KernelRegistry& registry);  // qlinear_binary.cc: QLinearAdd, QLinearMul
Status RegisterQLinearUnary(KernelRegistry& registry);   // qlinear_unary.cc: QLinearSigmoid, QLinearLeakyRelu
Status RegisterQLinearConcat(KernelRegistry& registry);  // qlinear_concat.cc
Status RegisterQLinearPool(KernelRegistry& registry);    // qlinear_pool.cc: QLinear(Global)AveragePool
Status RegisterMatMulNBits(KernelRegistry& registry);    // matmul_nbits.cc

}  // namespace quant_ms
}  // namespace onnxflow
