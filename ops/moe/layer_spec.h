// What MoE and QMoE share: their attributes, the checks of the activations and router inputs
// (input 0: [rows, hidden] or [batch, seq, hidden]; input 1: router_probs [rows, E]; both float
// or float16, the op's T), and the end of their Compute.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/kernel.h"
#include "ops/moe/experts.h"
#include "ops/moe/routing.h"

namespace onnxflow {
namespace moe {

struct LayerAttributes {
  int64_t k = 1;
  bool normalize = false;
  ActivationParams act;
  // Parses k, activation_type (relu, gelu, silu, identity, swiglu), normalize_routing_weights,
  // use_sparse_mixer (k = 2 only; ONNX Runtime's CPU kernels then route as without it),
  // swiglu_fusion (1, interleaved, is the one the CPU kernels run), activation_alpha / beta,
  // swiglu_limit. `op` names the op in messages.
  static Result<LayerAttributes> Parse(const KernelInfo& info, const std::string& op);
};

// The shapes a run reads off its inputs.
struct RunDims {
  int64_t tokens = 0, hidden = 0, experts = 0;
};
// Checks input 0 and router_probs against hidden and E from the weights, and k <= E.
Result<RunDims> CheckActivations(const Tensor& input, const Tensor& router, int64_t hidden, int64_t experts,
                                 int64_t k);

// Once the inputs are checked: routes the tokens (router_probs `router`, and QMoE's router_weights
// or null) as `routing` says, runs `layer` on them and writes output 0 in the input's type and shape.
Status RouteAndRunExperts(KernelContext& ctx, const ExpertLayer& layer, const Tensor& input, const Tensor& router,
                          const Tensor* router_weights, Routing routing, const RunDims& d,
                          const LayerAttributes& attrs);

// A bias [E, n] of type `type` (input `name`, checked) widened into `out`; empty when absent.
Status ReadBias(const Tensor* b, const char* name, DataType type, int64_t experts, int64_t n, std::vector<float>* out);

// "input 'name' must ..." style description of a tensor: "float [2, 3]".
std::string Describe(const Tensor& t);

}  // namespace moe
}  // namespace onnxflow
