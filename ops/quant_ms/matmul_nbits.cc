// com.microsoft MatMulNBits (version 1), bits = 4. Inputs: A [..., K] float; B uint8 [N, blocks,
// block_size / 2]; scales float [N * blocks]; zero_points (optional) uint8 packed two per byte
// [N * ceil(blocks / 2)] or float [N * blocks]; g_idx (optional, int32 [K]) only when it is the
// plain k / block_size; bias (optional) float [N]. Attributes K, N, bits, block_size,
// accuracy_level (4 permits quantizing A to int8, which one row of A does on CPUs with AVX-512
// VNNI, as ONNX Runtime does; other levels compute in float).
//
// One row of A (a decoder step, M = 1) runs the SIMD kernel of matmul_nbits_simd.cc over the
// columns, split over cores. More rows (a prompt) go through the float GEMM with B as a
// BPanelSource: each K x NC block of B is dequantized into the GEMM's packed strip layout in L2
// right before use, so the weights stay 4-bit in memory (8x smaller than float) and the float
// micro-kernel runs unchanged; unpacking once at load would cost 8x the weight memory, which is the
// point of 4-bit weights. The dequantizing is O(K * N) per call against the GEMM's O(M * K * N).
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

Status Pack(const KernelInfo* info_or_null, int64_t k, int64_t n, int64_t block_size, const Tensor& b,
            const Tensor& scales, const Tensor* zero_points, PackedNBits* out) {
  PackedNBits& p = *out;
  p.k = k;
  p.n = n;
  p.block_size = block_size;
  p.blocks = (k + block_size - 1) / block_size;
  p.k_padded = p.blocks * block_size;
  p.column_bytes = (p.k_padded + 127) / 128 * 64;  // whole quads of groups (the int8 kernel's step)
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
  p.q.assign(n * p.column_bytes, 0);
  p.scales.assign(scales.data<float>(), scales.data<float>() + n * p.blocks);
  p.scaled_zero.resize(n * p.blocks);
  // Integer zero points, 4 spare bytes a column for the int8 kernel's 4-block loads.
  p.zero_bytes.assign(n * (p.blocks + 4), 0);
  bool integer_zeros = true;
  const uint8_t* src = b.data<uint8_t>();
  for (int64_t j = 0; j < n; ++j) {
    uint8_t* col = p.q.data() + j * p.column_bytes;
    const uint8_t* bj = src + j * p.blocks * blob;
    for (int64_t e = 0; e < k; ++e) {  // value e sits in byte e / 2 of the column, low nibble first
      const int q = (e & 1) ? bj[e / 2] >> 4 : bj[e / 2] & 15;
      uint8_t& dst = col[(e / 32) * 16 + (e % 16)];
      dst |= static_cast<uint8_t>((e & 16) ? q << 4 : q);
    }
    for (int64_t blk = 0; blk < p.blocks; ++blk) {
      float z = 8.f;
      if (zero_points != nullptr && zero_points->dtype() == DataType::kUint8) {
        const uint8_t byte = zero_points->data<uint8_t>()[j * zp_bytes + blk / 2];
        z = static_cast<float>((blk & 1) ? byte >> 4 : byte & 15);
      } else if (zero_points != nullptr) {
        z = zero_points->data<float>()[j * p.blocks + blk];
      }
      p.scaled_zero[j * p.blocks + blk] = p.scales[j * p.blocks + blk] * z;
      const bool byte = z >= 0.f && z <= 255.f && z == std::floor(z);
      integer_zeros = integer_zeros && byte;
      if (byte) p.zero_bytes[j * (p.blocks + 4) + blk] = static_cast<uint8_t>(z);
    }
  }
  if (!integer_zeros) {
    std::vector<uint8_t>().swap(p.zero_bytes);
  } else if (n > 0 && p.blocks > 0) {
    p.uniform_zero = p.zero_bytes[0];
    for (int64_t j = 0; j < n && p.uniform_zero >= 0; ++j) {
      for (int64_t blk = 0; blk < p.blocks; ++blk) {
        if (p.zero_bytes[j * (p.blocks + 4) + blk] != p.uniform_zero) p.uniform_zero = -1;
      }
    }
  }
  (void)info_or_null;
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
    k->int8_allowed_ = info.GetInt("accuracy_level", 0) == 4;
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
          Pack(&info, k->k_, k->n_, k->block_size_, *b, *s, info.constant_input(3), k->packed_.get()));
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
      ONNXFLOW_RETURN_IF_ERROR(Pack(nullptr, k_, n_, block_size_, *b, *s, ctx.input_tensor(3), &run_packed));
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
    const bool int8 = int8_allowed_ && NBitsInt8Available(p);
    Int8Row qrow;
    for (int64_t i = 0; i < m; ++i) {
      // Chunks of 16 columns keep the 4-column kernel whole; each reads 16 * K / 2 bytes of B.
      constexpr int64_t kChunk = 16;
      const int64_t chunks = (n_ + kChunk - 1) / kChunk;
      float* yi = py + i * n_;
      if (int8) {
        QuantizeRowForNBits(p, pa + i * k_, &qrow);
        ParallelFor(ctx, chunks, kChunk * k_, [&](int64_t c0, int64_t c1) {
          const int64_t j0 = c0 * kChunk, j1 = std::min(n_, c1 * kChunk);
          MatMulNBitsRowInt8(p, qrow, j0, j1, yi + j0);
        });
        if (bias != nullptr) {
          for (int64_t j = 0; j < n_; ++j) yi[j] += bias->data<float>()[j];
        }
        continue;
      }
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
  bool int8_allowed_ = false;  // accuracy_level 4
  std::shared_ptr<PackedNBits> packed_;  // null when B, scales or zero points are not constants
};

}  // namespace

Status RegisterMatMulNBits(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "MatMulNBits", 1, kOpenEnded, Make<MatMulNBitsKernel>());
}

}  // namespace quant_ms
}  // namespace onnxflow
