// How MoE and QMoE weigh a token's experts, as ONNX Runtime 1.30's CPU kernels do (both pick the k
// largest router values, a tie going to the higher expert index, and differ in the weights):
//
//   MoE:  softmax over all E router logits, then the top k of those probabilities; with
//         normalize_routing_weights each divided by the sum of the k. A route of weight 0 is
//         skipped.
//   QMoE: the top k logits, then a softmax over those k alone (so normalize_routing_weights changes
//         nothing); or, given router_weights, the k values of router_weights at the chosen
//         experts (divided by their sum with normalize_routing_weights, 0 if the sum is 0). A
//         route of weight 1e-8 or less is skipped.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/moe/experts.h"

namespace onnxflow {
namespace moe {

enum class Routing { kSoftmaxAll, kSoftmaxTopK };

// logits (and router_weights, or null): tokens x experts floats.
std::vector<Route> RouteTokens(Routing routing, const float* logits, const float* router_weights, int64_t tokens,
                               int64_t experts, int64_t k, bool normalize);

}  // namespace moe
}  // namespace onnxflow
