#include "ops/moe/routing.h"

#include <cmath>

namespace onnxflow {
namespace moe {
namespace {

// The k largest of v (n values) in descending order, a tie to the higher index; NaN ranks below
// every number. k passes over E values: k and E are small (2-8 of 8-128).
void TopK(const float* v, int64_t n, int64_t k, std::vector<int64_t>* out, std::vector<char>* taken) {
  out->clear();
  taken->assign(n, 0);
  for (int64_t j = 0; j < k; ++j) {
    int64_t best = -1;
    for (int64_t i = 0; i < n; ++i) {
      if ((*taken)[i]) continue;
      if (best < 0 || std::isnan(v[best]) || (!std::isnan(v[i]) && v[i] >= v[best])) best = i;
    }
    (*taken)[best] = 1;
    out->push_back(best);
  }
}

}  // namespace

std::vector<Route> RouteTokens(Routing routing, const float* logits, const float* router_weights, int64_t tokens,
                               int64_t experts, int64_t k, bool normalize) {
  std::vector<Route> routes(tokens * k);
  std::vector<int64_t> top;
  std::vector<char> taken;
  std::vector<float> probs(experts), w(k);
  for (int64_t t = 0; t < tokens; ++t) {
    const float* l = logits + t * experts;
    Route* r = routes.data() + t * k;
    if (routing == Routing::kSoftmaxAll) {
      float mx = l[0];
      for (int64_t i = 1; i < experts; ++i) mx = std::max(mx, l[i]);
      float sum = 0.f;
      for (int64_t i = 0; i < experts; ++i) sum += probs[i] = std::exp(l[i] - mx);
      for (int64_t i = 0; i < experts; ++i) probs[i] /= sum;
      TopK(probs.data(), experts, k, &top, &taken);
      float top_sum = 0.f;
      for (int64_t j = 0; j < k; ++j) top_sum += probs[top[j]];
      for (int64_t j = 0; j < k; ++j) {
        w[j] = normalize ? probs[top[j]] / top_sum : probs[top[j]];
        r[j] = {w[j] > 0.f ? static_cast<int32_t>(top[j]) : -1, w[j]};
      }
      continue;
    }
    TopK(l, experts, k, &top, &taken);
    float scale = 1.f;
    if (router_weights != nullptr) {
      float sum = 0.f;
      for (int64_t j = 0; j < k; ++j) sum += w[j] = router_weights[t * experts + top[j]];
      if (normalize) scale = sum == 0.f ? 0.f : 1.f / sum;
    } else {
      float sum = 0.f;
      for (int64_t j = 0; j < k; ++j) sum += w[j] = std::exp(l[top[j]] - l[top[0]]);
      scale = sum == 0.f ? 0.f : 1.f / sum;
    }
    for (int64_t j = 0; j < k; ++j) {
      const float weight = w[j] * scale;
      r[j] = {weight > 1e-8f ? static_cast<int32_t>(top[j]) : -1, weight};
    }
  }
  return routes;
}

}  // namespace moe
}  // namespace onnxflow
