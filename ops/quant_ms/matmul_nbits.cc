// com.microsoft MatMulNBits (version 1), bits = 4. Inputs: A [..., K] float; B uint8 [N, blocks,
// block_size / 2]; scales float [N * blocks]; zero_points (optional) uint8 packed two per byte
// [N * ceil(blocks / 2)] or float [N * blocks]; g_idx (optional, int32 [K]) only when it is the
// plain k / block_size; bias (optional) float [N]. Attributes K, N, bits, block_size,
// accuracy_level (4 permits quantizing A to int8, which onnxflow does on CPUs with AVX-512 VNNI,
// as ONNX Runtime does; other levels and CPUs compute in float).
//
// accuracy_level 4 with VNNI: every row count runs the int8 kernel (matmul_nbits-inl.h), split
// over cores by panels of 64 columns. Otherwise one row of A (a decoder step, M = 1) runs the
// float kernel over the columns, split over cores, and more rows (a prompt) go through the float
// GEMM with B as a BPanelSource: each K x NC block of B is dequantized into the GEMM's packed
// strip layout in L2 right before use, so the weights stay 4-bit in memory (8x smaller than float)
// and the float micro-kernel runs unchanged; unpacking once at load would cost 8x the weight
// memory, which is the point of 4-bit weights. The dequantizing is O(K * N) per call against the
// GEMM's O(M * K * N).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/math/gemm.h"
#include "ops/quant_ms/register.h"
#include "ops/quant_ms/matmul_nbits.h"

namespace onnxflow {
namespace quant_ms {
namespace {

// Rows of A from which the GEMM's dequantized panels pay off against reading all of B per row.
constexpr int64_t kGemmRows = 4;

class NBitsPanels : public BPanelSource {
 public:
  explicit NBitsPanels(const PackedNBits& b) : b_(b) {}
  void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const override {
    DequantizeNBitsPanel(b_, k0, kc, j0, cols, nr, dst);
  }

 private:
  const PackedNBits& b_;
};

Status Pack(int64_t k, int64_t n, int64_t block_size, bool int8, const Tensor& b, const Tensor& scales,
            const Tensor* zero_points, PackedNBits* out) {
  PackedNBits& p = *out;
  p.k = k;
  p.n = n;
  p.block_size = block_size;
  p.blocks = (k + block_size - 1) / block_size;
  p.k_padded = p.blocks * block_size;
  p.int8 = int8;
  const int64_t blob = block_size / 2;
  if (b.dtype() != DataType::kUint8 || b.size() != n * p.blocks * blob) {
    return InvalidArgument("input 'B' must be uint8 with N * ceil(K / block_size) * block_size / 2 = " +
                           std::to_string(n * p.blocks * blob) + " elements, got " + DataTypeName(b.dtype()) + " " +
                           ShapeToString(b.shape()));
  }
  if (scales.dtype() != DataType::kFloat || scales.size() != n * p.blocks) {
    return InvalidArgument("input 'scales' must be float with N * blocks = " + std::to_string(n * p.blocks) +
                           " elements, got " + DataTypeName(scales.dtype()) + " " + ShapeToString(scales.shape()));
  }
  const int64_t zp_bytes = (p.blocks + 1) / 2;
  if (zero_points != nullptr) {
    const bool packed = zero_points->dtype() == DataType::kUint8 && zero_points->size() == n * zp_bytes;
    const bool floats = zero_points->dtype() == DataType::kFloat && zero_points->size() == n * p.blocks;
    if (!packed && !floats) {
      return InvalidArgument("input 'zero_points' must be uint8 [N * ceil(blocks / 2)] = " +
                             std::to_string(n * zp_bytes) + " or float [N * blocks] = " +
                             std::to_string(n * p.blocks) + ", got " + DataTypeName(zero_points->dtype()) + " " +
                             ShapeToString(zero_points->shape()));
    }
  }
  // The zero points as floats [n, blocks], and whether they are whole bytes, or one value.
  std::vector<float> zf(n * p.blocks, 8.f);
  if (zero_points != nullptr && zero_points->dtype() == DataType::kUint8) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t blk = 0; blk < p.blocks; ++blk) {
        const uint8_t byte = zero_points->data<uint8_t>()[j * zp_bytes + blk / 2];
        zf[j * p.blocks + blk] = static_cast<float>((blk & 1) ? byte >> 4 : byte & 15);
      }
    }
  } else if (zero_points != nullptr) {
    std::copy(zero_points->data<float>(), zero_points->data<float>() + n * p.blocks, zf.begin());
  }
  bool integer_zeros = true, uniform = true;
  for (const float z : zf) {  // tested as a whole byte before any cast (a huge float's cast is undefined)
    integer_zeros = integer_zeros && z >= 0.f && z <= 255.f && z == std::floor(z);
    uniform = uniform && z == zf[0];
  }
  const uint8_t* src = b.data<uint8_t>();
  const float* sc = scales.data<float>();
  if (!int8) {
    p.q.assign(n * p.column_bytes(), 0);
    for (int64_t j = 0; j < n; ++j) {
      uint8_t* col = p.q.data() + j * p.column_bytes();
      const uint8_t* bj = src + j * p.blocks * blob;
      for (int64_t e = 0; e < k; ++e) {  // value e sits in byte e / 2 of the column, low nibble first
        const int q = (e & 1) ? bj[e / 2] >> 4 : bj[e / 2] & 15;
        col[(e / 32) * 16 + (e % 16)] |= static_cast<uint8_t>((e & 16) ? q << 4 : q);
      }
    }
    p.scales.assign(sc, sc + n * p.blocks);
    p.scaled_zero.resize(n * p.blocks);
    for (int64_t i = 0; i < n * p.blocks; ++i) p.scaled_zero[i] = p.scales[i] * zf[i];
    return Status::Ok();
  }
  // The int8 layout (matmul_nbits.h); columns past n stay zero (scale 0).
  const int64_t per_block = p.vecs() * 16 * p.blocks;
  p.q.assign(p.vecs() * 64 * (p.k_padded / 8), 0);
  p.scales.assign(per_block, 0.f);
  if (integer_zeros && uniform && n * p.blocks > 0) {
    p.uniform_zero = static_cast<int>(zf[0]);
  } else if (integer_zeros) {
    p.zero_bytes.assign(per_block, 0);
  } else {
    p.scaled_zero.assign(per_block, 0.f);
  }
  for (int64_t j = 0; j < n; ++j) {
    const int64_t panel = j / (PackedNBits::kPanelVecs * 16), vecs = p.panel_vecs(panel);
    const int64_t v = (j / 16) % PackedNBits::kPanelVecs, lane = j % 16;
    uint8_t* dst = p.q.data() + p.panel_q(panel) + v * 64 + lane * 4;
    const uint8_t* bj = src + j * p.blocks * blob;
    for (int64_t e = 0; e < k; ++e) {  // value e: step e / 8 of the panel, byte e % 4, high nibble for e % 8 >= 4
      const int q = (e & 1) ? bj[e / 2] >> 4 : bj[e / 2] & 15;
      dst[(e / 8) * vecs * 64 + (e % 4)] |= static_cast<uint8_t>((e & 4) ? q << 4 : q);
    }
    for (int64_t blk = 0; blk < p.blocks; ++blk) {
      const int64_t at = p.panel_blocks(panel) + blk * vecs * 16 + v * 16 + lane;
      const float s = sc[j * p.blocks + blk], z = zf[j * p.blocks + blk];
      p.scales[at] = s;
      if (!p.zero_bytes.empty()) p.zero_bytes[at] = static_cast<uint8_t>(z);
      if (!p.scaled_zero.empty()) p.scaled_zero[at] = s * z;
    }
  }
  return Status::Ok();
}

class MatMulNBitsKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<MatMulNBitsKernel>(new MatMulNBitsKernel());
    ONNXFLOW_ASSIGN_OR_RETURN(k->k_, info.RequireInt("K"));
    ONNXFLOW_ASSIGN_OR_RETURN(k->n_, info.RequireInt("N"));
    ONNXFLOW_ASSIGN_OR_RETURN(k->block_size_, info.RequireInt("block_size"));
    const int64_t bits = info.GetInt("bits", 4);
    // accuracy_level 4 permits quantizing A to int8: done where the int8 kernel runs.
    k->int8_ = info.GetInt("accuracy_level", 0) == 4 && NBitsInt8Available();
    if (bits != 4) return Unimplemented("MatMulNBits with bits = " + std::to_string(bits) + " (only 4)");
    if (k->k_ <= 0 || k->n_ <= 0) return InvalidArgument("attributes K and N must be positive");
    if (k->block_size_ < 16 || (k->block_size_ & (k->block_size_ - 1)) != 0) {
      return InvalidArgument("attribute block_size must be a power of 2 and at least 16, got " +
                             std::to_string(k->block_size_));
    }
    if (info.input_type(0) != DataType::kUndefined && info.input_type(0) != DataType::kFloat) {
      return Unimplemented(std::string("MatMulNBits with input 'A' of type ") + DataTypeName(info.input_type(0)) +
                           " (only float)");
    }
    if (info.has_input(4)) {
      const Tensor* g = info.constant_input(4);
      if (g == nullptr || g->dtype() != DataType::kInt32 || g->size() != k->k_) {
        return Unimplemented("MatMulNBits with a g_idx that is not a constant int32 [K]");
      }
      for (int64_t e = 0; e < k->k_; ++e) {
        if (g->data<int32_t>()[e] != e / k->block_size_) {
          return Unimplemented("MatMulNBits with a g_idx that reorders K (act_order)");
        }
      }
    }
    const Tensor* b = info.constant_input(1);
    const Tensor* s = info.constant_input(2);
    const bool zp_const = !info.has_input(3) || info.constant_input(3) != nullptr;
    if (b != nullptr && s != nullptr && zp_const) {
      k->packed_ = std::make_shared<PackedNBits>();
      ONNXFLOW_RETURN_IF_ERROR(
          Pack(k->k_, k->n_, k->block_size_, k->int8_, *b, *s, info.constant_input(3), k->packed_.get()));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  bool ReadsAtRun(int input) const override { return packed_ == nullptr || input == 0 || input == 5; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    if (a->dtype() != DataType::kFloat) {
      return Unimplemented(std::string("input 'A' of type ") + DataTypeName(a->dtype()) + " (only float)");
    }
    if (a->rank() < 1 || a->dim(a->rank() - 1) != k_) {
      return InvalidArgument("input 'A' has shape " + ShapeToString(a->shape()) + " but K = " + std::to_string(k_));
    }
    const PackedNBits* packed = packed_.get();
    PackedNBits run_packed;
    if (packed == nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* s, ctx.RequireTensor(2));
      ONNXFLOW_RETURN_IF_ERROR(Pack(k_, n_, block_size_, int8_, *b, *s, ctx.input_tensor(3), &run_packed));
      packed = &run_packed;
    }
    const Tensor* bias = ctx.input_tensor(5);
    if (bias != nullptr && (bias->dtype() != DataType::kFloat || bias->size() != n_)) {
      return InvalidArgument("input 'bias' must be float [N], got " + std::string(DataTypeName(bias->dtype())) + " " +
                             ShapeToString(bias->shape()));
    }
    Shape out_shape = a->shape();
    out_shape.back() = n_;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, out_shape));
    const int64_t m = a->size() / k_;
    const float* pa = a->data<float>();
    float* py = y->mutable_data<float>();
    if (packed->int8) {
      // The int8 kernel, every row count: split over cores by panels of 64 columns, each a
      // single pass over its part of B for all rows.
      if (!NBitsInt8Available()) return Internal("MatMulNBits: B packed for the int8 kernel, which does not run here");
      NBitsQuantA qa;
      QuantizeRowsForNBits(*packed, pa, m, &qa);
      const float* pbias = bias != nullptr ? bias->data<float>() : nullptr;
      ParallelFor(ctx, packed->panels(), MacCost(m * 64 * k_), [&](int64_t p0, int64_t p1) {
        MatMulNBitsInt8(*packed, qa, m, p0, p1, pbias, py);
      });
      return Status::Ok();
    }
    if (m >= kGemmRows) {
      NBitsPanels panels(*packed);
      GemmInputA ga;
      ga.data = pa;
      ga.ld = k_;
      GemmInputB gb;
      gb.source = &panels;
      GemmEpilogue ep;
      if (bias != nullptr) ep.col_bias = bias->data<float>();
      Sgemm(m, n_, k_, ga, gb, py, n_, ep, ctx.threads());
      return Status::Ok();
    }
    const PackedNBits& p = *packed;
    std::vector<float> row(p.k_padded, 0.f), sums(p.blocks);
    for (int64_t i = 0; i < m; ++i) {
      // Chunks of 16 columns keep the 4-column kernel whole; each reads 16 * K / 2 bytes of B.
      constexpr int64_t kChunk = 16;
      const int64_t chunks = (n_ + kChunk - 1) / kChunk;
      float* yi = py + i * n_;
      std::copy(pa + i * k_, pa + (i + 1) * k_, row.begin());
      for (int64_t blk = 0; blk < p.blocks; ++blk) {
        float s = 0;
        for (int64_t e = blk * p.block_size; e < (blk + 1) * p.block_size; ++e) s += row[e];
        sums[blk] = s;
      }
      ParallelFor(ctx, chunks, kChunk * k_, [&](int64_t c0, int64_t c1) {
        const int64_t j0 = c0 * kChunk, j1 = std::min(n_, c1 * kChunk);
        MatMulNBitsRow(p, row.data(), sums.data(), j0, j1, yi + j0);
      });
      if (bias != nullptr) {
        for (int64_t j = 0; j < n_; ++j) yi[j] += bias->data<float>()[j];
      }
    }
    return Status::Ok();
  }

 private:
  MatMulNBitsKernel() = default;
  int64_t k_ = 0, n_ = 0, block_size_ = 0;
  bool int8_ = false;  // accuracy_level 4 where the int8 kernel runs: B in its layout
  std::shared_ptr<PackedNBits> packed_;  // null when B, scales or zero points are not constants
};

}  // namespace

Status RegisterMatMulNBits(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "MatMulNBits", 1, kOpenEnded, Make<MatMulNBitsKernel>());
}

}  // namespace quant_ms
}  // namespace onnxflow
