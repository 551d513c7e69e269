// com.microsoft SparseToDenseMatMul (version 1) is refused by name: its input A is a sparse tensor
// value (ONNX Runtime's SparseTensor, a graph input of sparse_tensor_type or a sparse initializer it
// keeps sparse), and onnxflow has no sparse values: sparse initializers are densified at load
// (graph/graph.cc, DensifySparse) and graph inputs are dense tensors. A model with it needs the op
// rewritten as a dense MatMul (or Gemm for alpha / transA / transB) on the densified A.
#include "ops/framework/domains.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterSparseToDenseMatMul(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "SparseToDenseMatMul", 1, kOpenEnded,
                           [](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> {
                             return Unimplemented(
                                 "com.microsoft SparseToDenseMatMul takes a sparse tensor input and onnxflow has no "
                                 "sparse tensor values (sparse initializers are densified at load); rewrite it as a "
                                 "dense MatMul or Gemm");
                           });
}

}  // namespace onnxflow
