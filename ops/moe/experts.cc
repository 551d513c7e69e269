#include "ops/moe/experts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ops/framework/parallel.h"
#include "ops/math/float_view.h"

namespace onnxflow {
namespace moe {
namespace {

float Sigmoid(float v) { return 1.f / (1.f + std::exp(-v)); }

// ONNX Runtime's moe_utils: GELU is the tanh form.
float Apply(Activation a, float v) {
  switch (a) {
    case Activation::kRelu:
      return std::max(0.f, v);
    case Activation::kGelu:
      return 0.5f * v * (1.f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
    case Activation::kSilu:
      return v * Sigmoid(v);
    default:
      return v;
  }
}

// One row of fc1's output (n values) to fc2's input (inter values).
void Activate(const ActivationParams& p, const float* h, int64_t inter, float* out) {
  if (p.type != Activation::kSwiGlu) {
    for (int64_t i = 0; i < inter; ++i) out[i] = Apply(p.type, h[i]);
    return;
  }
  // Interleaved: gate at 2i, linear at 2i + 1; the sigmoid in the form that never overflows.
  for (int64_t i = 0; i < inter; ++i) {
    const float gate = std::min(h[2 * i], p.limit);
    const float linear = std::clamp(h[2 * i + 1], -p.limit, p.limit);
    const float z = p.alpha * gate;
    const float sig = z > 0 ? 1.f / (1.f + std::exp(-z)) : std::exp(z) / (1.f + std::exp(z));
    out[i] = gate * sig * (linear + p.beta);
  }
}

}  // namespace

FloatExperts::FloatExperts(const float* w, int64_t experts, int64_t n, int64_t k)
    : ExpertWeights(experts, n, k), chunks_((n + kTaskColumns - 1) / kTaskColumns) {
  panels_.reserve(experts * chunks_);
  for (int64_t e = 0; e < experts; ++e) {
    for (int64_t c = 0; c < chunks_; ++c) {
      const int64_t j0 = c * kTaskColumns, cols = std::min(kTaskColumns, n - j0);
      panels_.push_back(PackB(w + (e * n + j0) * k, k, /*trans=*/true, k, cols));
    }
  }
}

void FloatExperts::Multiply(int64_t e, const float* x, int64_t m, int64_t j0, int64_t j1, const float* bias,
                            float* y, int64_t ldy) const {
  GemmInputA a;
  a.data = x;
  a.ld = k();
  for (int64_t j = j0; j < j1; j += kTaskColumns) {
    const int64_t cols = std::min(kTaskColumns, j1 - j);
    GemmInputB b;
    b.packed = &panels_[e * chunks_ + j / kTaskColumns];
    GemmEpilogue ep;
    ep.col_bias = bias != nullptr ? bias + j : nullptr;
    Sgemm(m, cols, k(), a, b, y + j, ldy, ep, /*threads=*/1);
  }
}

NBitsExperts::NBitsExperts(std::vector<quant_ms::PackedNBits> packed)
    : ExpertWeights(static_cast<int64_t>(packed.size()), packed[0].n, packed[0].k), packed_(std::move(packed)) {}

void NBitsExperts::Multiply(int64_t e, const float* x, int64_t m, int64_t j0, int64_t j1, const float* bias,
                            float* y, int64_t ldy) const {
  const quant_ms::PackedNBits& p = packed_[e];
  const int64_t ldx = p.k_padded;
  if (m >= quant_ms::kNBitsGemmRows) {
    const quant_ms::NBitsPanelSource source(p, j0);
    GemmInputA a;
    a.data = x;
    a.ld = ldx;
    GemmInputB b;
    b.source = &source;
    GemmEpilogue ep;
    ep.col_bias = bias != nullptr ? bias + j0 : nullptr;
    Sgemm(m, j1 - j0, k(), a, b, y + j0, ldy, ep, /*threads=*/1);
    return;
  }
  if (m == 1) {
    std::vector<float> sums(p.blocks, 0.f);
    for (int64_t blk = 0; blk < p.blocks; ++blk) {
      for (int64_t i = blk * p.block_size; i < (blk + 1) * p.block_size; ++i) sums[blk] += x[i];
    }
    quant_ms::MatMulNBitsRow(p, x, sums.data(), j0, j1, y + j0);
  } else {
    for (int64_t q = 0; q * 4 < m; ++q) {  // x holds zero rows up to a multiple of 4
      quant_ms::MatMulNBitsFourRows(p, x + q * 4 * ldx, ldx, std::min<int64_t>(4, m - q * 4), j0, j1,
                                    y + q * 4 * ldy, ldy);
    }
  }
  if (bias != nullptr) {
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = j0; j < j1; ++j) y[r * ldy + j] += bias[j];
    }
  }
}

Status RunExperts(const KernelContext& ctx, const ExpertLayer& layer, const float* x, int64_t tokens, int64_t k,
                  const std::vector<Route>& routes, float* y) {
  const ExpertWeights& fc1 = *layer.fc1;
  const ExpertWeights& fc2 = *layer.fc2;
  const int64_t experts = fc1.experts(), hidden = fc2.n(), n1 = fc1.n(), inter = fc2.k();
  // Each routed expert's rows, in route order, at its own offset (a multiple of 4: the four-row
  // kernel reads whole quads).
  std::vector<int64_t> count(experts, 0), offset(experts + 1, 0);
  for (const Route& r : routes) {
    if (r.expert >= 0) ++count[r.expert];
  }
  for (int64_t e = 0; e < experts; ++e) offset[e + 1] = offset[e] + (count[e] + 3) / 4 * 4;
  const int64_t rows = offset[experts];
  const int64_t ld1 = fc1.row_stride(), ld2 = fc2.row_stride();
  ONNXFLOW_RETURN_IF_ERROR(
      ctx.CheckScratch({rows, ld1 + n1 + ld2 + hidden}, sizeof(float), "the experts' gathered rows"));
  std::vector<int64_t> row_of(routes.size(), -1), fill(offset.begin(), offset.end() - 1);
  for (size_t i = 0; i < routes.size(); ++i) {
    if (routes[i].expert >= 0) row_of[i] = fill[routes[i].expert]++;
  }
  FloatScratch s1, s2, s3, s4;
  float* x1 = s1.Take(rows * ld1, true);
  float* h1 = s2.Take(rows * n1, false);
  float* x2 = s3.Take(rows * ld2, true);
  float* y2 = s4.Take(rows * hidden, false);
  for (size_t i = 0; i < routes.size(); ++i) {
    if (row_of[i] >= 0) std::copy(x + (i / k) * fc1.k(), x + (i / k + 1) * fc1.k(), x1 + row_of[i] * ld1);
  }

  // One projection over every routed expert: tasks of (expert, kTaskColumns columns).
  auto project = [&](const ExpertWeights& w, const std::vector<float>& bias, const float* in, int64_t ld_in,
                     float* out) {
    std::vector<std::pair<int64_t, int64_t>> tasks;
    int64_t macs = 0;
    for (int64_t e = 0; e < experts; ++e) {
      if (count[e] == 0) continue;
      for (int64_t j = 0; j < w.n(); j += kTaskColumns) tasks.emplace_back(e, j);
      macs += count[e] * w.n() * w.k();
    }
    ParallelTasks(ctx, static_cast<int64_t>(tasks.size()), MacCost(macs), [&](int64_t t) {
      const auto [e, j] = tasks[t];
      w.Multiply(e, in + offset[e] * ld_in, count[e], j, std::min(w.n(), j + kTaskColumns),
                 bias.empty() ? nullptr : bias.data() + e * w.n(), out + offset[e] * w.n(), w.n());
    });
  };
  project(fc1, layer.bias1, x1, ld1, h1);
  for (int64_t e = 0; e < experts; ++e) {
    for (int64_t r = offset[e]; r < offset[e] + count[e]; ++r) Activate(layer.act, h1 + r * n1, inter, x2 + r * ld2);
  }
  project(fc2, layer.bias2, x2, ld2, y2);

  // Each token's routes summed in route order.
  std::fill(y, y + tokens * hidden, 0.f);
  for (size_t i = 0; i < routes.size(); ++i) {
    if (row_of[i] < 0) continue;
    float* out = y + (i / k) * hidden;
    const float* v = y2 + row_of[i] * hidden;
    const float w = routes[i].weight;
    for (int64_t c = 0; c < hidden; ++c) out[c] += w * v[c];
  }
  return Status::Ok();
}

}  // namespace moe
}  // namespace onnxflow
