// MatMul (all versions) and com.onnxflow FusedMatMul, plus the numpy-matmul shape rules the
// integer variants share.
#pragma once

#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/framework/registry.h"

namespace onnxflow {

// Operand shapes of one matmul, with 1-D operands promoted and the batch broadcast resolved.
struct MatMulShapes {
  int64_t m = 0, n = 0, k = 0;
  Shape batch;  // broadcast batch dims
  Shape a_batch, b_batch;
  Shape output;
};
Result<MatMulShapes> ResolveMatMulShapes(const Shape& a, const Shape& b);

// Element offsets of A, B and Y for each output matrix, in output order.
struct MatMulBatch {
  int64_t a, b, y;
};
std::vector<MatMulBatch> MatMulBatches(const MatMulShapes& s);

// The cores each of `batches` independent GEMMs of `macs` multiply-adds gets out of `threads`: 1
// (one GEMM per core at a time, the batch split) when there are enough to share out evenly
// (attention's heads) or they are small; else all of them (each GEMM splits, one after another).
int GemmThreadsPerBatch(int64_t batches, int64_t macs, int threads);

}  // namespace onnxflow
