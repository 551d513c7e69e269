// The expert layers of com.microsoft MoE and QMoE: every expert's projections held once in the
// layout a product reads (packed at load when the weights are initializers), and one run of a
// routed layer over them.
//
// A run touches only the experts some token was routed to. Each such expert's tokens are gathered
// into rows; the products of all routed experts are cut into tasks of (expert, 128 columns) and
// split over the cores as one loop per projection: a decoder step (one token, k of E experts) is
// k one-row products, which no single product could spread over the cores, and a prompt's
// experts get uneven row counts that tasks of one size balance.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "include/onnxflow/status.h"
#include "ops/framework/kernel.h"
#include "ops/math/gemm.h"
#include "ops/quant_ms/matmul_nbits.h"

namespace onnxflow {
namespace moe {

// Columns of one task: a multiple of 16 (the 4-bit kernels' column chunks) and of the GEMM's strips.
inline constexpr int64_t kTaskColumns = 128;

// One projection of every expert: y[m, n] = x[m, k] * W_e^T, W_e an n x k matrix.
class ExpertWeights {
 public:
  virtual ~ExpertWeights() = default;
  int64_t experts() const { return experts_; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  // The row stride the products read x with; x is zero from k to it, and in the rows from m up to
  // a multiple of 4.
  virtual int64_t row_stride() const { return k_; }
  // Columns [j0, j1) (j0 a multiple of kTaskColumns) of y (row stride ldy) for expert e, on the
  // calling thread; `bias` (expert e's n values, or null) added.
  virtual void Multiply(int64_t e, const float* x, int64_t m, int64_t j0, int64_t j1, const float* bias, float* y,
                        int64_t ldy) const = 0;

 protected:
  ExpertWeights(int64_t experts, int64_t n, int64_t k) : experts_(experts), n_(n), k_(k) {}

 private:
  int64_t experts_, n_, k_;
};

// Float weights [E, n, k] (float, or float16 widened once), packed as the GEMM's B in strips of
// kTaskColumns columns, so that each task multiplies its own packed panel.
class FloatExperts : public ExpertWeights {
 public:
  // w: E * n * k floats.
  FloatExperts(const float* w, int64_t experts, int64_t n, int64_t k);
  void Multiply(int64_t e, const float* x, int64_t m, int64_t j0, int64_t j1, const float* bias, float* y,
                int64_t ldy) const override;

 private:
  int64_t chunks_;
  std::vector<PackedB> panels_;  // [expert, chunk]
};

// Quantized weights in MatMulNBits' float layout (ops/quant_ms/matmul_nbits.h), one PackedNBits per
// expert, read as MatMulNBits reads them: one row by the one-row kernel, a few by the four-row
// kernel, 32 rows or more through the GEMM with B dequantized block by block.
class NBitsExperts : public ExpertWeights {
 public:
  explicit NBitsExperts(std::vector<quant_ms::PackedNBits> packed);
  int64_t row_stride() const override { return packed_[0].k_padded; }
  void Multiply(int64_t e, const float* x, int64_t m, int64_t j0, int64_t j1, const float* bias, float* y,
                int64_t ldy) const override;

 private:
  std::vector<quant_ms::PackedNBits> packed_;
};

// What a layer computes between its two products.
enum class Activation { kRelu, kGelu, kSilu, kIdentity, kSwiGlu };
struct ActivationParams {
  Activation type = Activation::kRelu;
  float alpha = 1.f, beta = 0.f;      // SwiGLU: gate * sigmoid(alpha * gate) * (linear + beta)
  float limit = 0.f;                  // SwiGLU: gate <= limit, |linear| <= limit (infinity: none)
};

// One routed layer: fc1 (n = inter, or 2 * inter for SwiGLU, gate and linear interleaved), the
// activation, fc2 (n = hidden); biases [E, n] or empty.
struct ExpertLayer {
  std::shared_ptr<const ExpertWeights> fc1, fc2;
  std::vector<float> bias1, bias2;
  ActivationParams act;
};

// The routes of a run: for token t, routes[t * k + j] is its j-th expert and weight; a route of
// weight that the op skips has expert -1.
struct Route {
  int32_t expert = -1;
  float weight = 0.f;
};

// y[t] = sum over t's routes (in order) of weight * fc2(act(fc1(x[t]))). x: tokens x hidden
// floats; y: tokens x hidden.
Status RunExperts(const KernelContext& ctx, const ExpertLayer& layer, const float* x, int64_t tokens, int64_t k,
                  const std::vector<Route>& routes, float* y);

}  // namespace moe
}  // namespace onnxflow
