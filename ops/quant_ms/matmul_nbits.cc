// com.microsoft MatMulNBits (version 1), bits 2, 4 or 8. Inputs: A [..., K] T1; B uint8 [N,
// blocks, block_size * bits / 8], 8 / bits values a byte, the lowest bits first; scales T1
// [N * blocks]; zero_points (optional) uint8 packed as B [N * ceil(blocks * bits / 8)] or T1
// [N * blocks], default 2^(bits - 1); g_idx (optional, int32 [K]) only when it is the plain
// k / block_size; bias (optional) T1 [N]. Attributes K, N, bits, block_size, accuracy_level (4
// permits quantizing A to int8, which onnxflow does for 4- and 8-bit weights on CPUs with AVX-512
// VNNI, as ONNX Runtime does; other levels, 2 bits and other CPUs compute in float). Models mixing
// 4- and 8-bit MatMulNBits (8 bits where 4 lose too much accuracy) are what ONNX Runtime's
// quantizer writes for some LLMs.
//
// com.microsoft MatMulBnb4 (version 1): A [..., K] T1; B uint8, the N x K weights' 4-bit codes
// flat (two a byte, the first in the high nibble); absmax T1, one per block_size codes. A weight
// is codebook[code] * absmax, the FP4 or NF4 codebook (quant_type 0 or 1). Its codes and absmax
// become MatMulNBits' float layout with the codebook, so it runs on the same kernels.
//
// T1 is float, float16 or bfloat16 (the q4f16 models): the kernels compute in float, 16-bit A
// widened on the way in and Y narrowed on the way out; in an optimized float16 graph the nodes run
// on float twins instead (graph/half_compute.cc).
//
// accuracy_level 4 with VNNI: every row count runs the int8 kernel (matmul_nbits-inl.h), split
// over cores by panels of 64 columns. Otherwise one row of A (a decoder step, M = 1) runs the
// float kernel over the columns, split over cores; 2 to 31 rows (a short prompt) the four-row float
// kernel, each slice of B decoded once per four rows; and more rows go through the float GEMM with
// B as a BPanelSource: each K x NC block of B is dequantized into the GEMM's packed
// strip layout in L2 right before use, so the weights stay 4-bit in memory (8x smaller than float)
// and the float micro-kernel runs unchanged; unpacking once at load would cost 8x the weight
// memory, which is the point of 4-bit weights. The dequantizing is O(K * N) per call against the
// GEMM's O(M * K * N).
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/math/float_view.h"
#include "ops/math/gemm.h"
#include "ops/quant_ms/register.h"
#include "ops/quant_ms/matmul_nbits.h"

namespace onnxflow {
namespace quant_ms {
namespace {

void SetSizes(int64_t k, int64_t n, int64_t block_size, int bits, bool int8, PackedNBits* p) {
  p->bits = bits;
  p->k = k;
  p->n = n;
  p->block_size = block_size;
  p->blocks = (k + block_size - 1) / block_size;
  p->k_padded = p->blocks * block_size;
  p->int8 = int8;
}

}  // namespace

void PackFloatLayoutCodes(const NBitsCodes& codes, PackedNBits* b) {
  PackedNBits& p = *b;
  p.q.assign(p.n * p.column_bytes(), 0);
  const int64_t group = p.group_values();
  for (int64_t j = 0; j < p.n; ++j) {
    uint8_t* col = p.q.data() + j * p.column_bytes();
    for (int64_t e = 0; e < p.k; ++e) {
      col[(e / group) * 16 + (e % 16)] |= static_cast<uint8_t>(codes(j, e) << (((e % group) / 16) * p.bits));
    }
  }
}

namespace {

// Whether all `count` zero points are whole bytes, and whether they are all the same (none given,
// zf null: neither).
struct ZeroKinds {
  bool integer = false, uniform = false;
};
ZeroKinds Classify(const float* zf, int64_t count) {
  ZeroKinds k;
  if (zf == nullptr) return k;
  k.integer = true;
  k.uniform = count > 0;
  for (int64_t i = 0; i < count; ++i) {  // tested as a whole byte before any cast (a huge float's cast is undefined)
    const float z = zf[i];
    k.integer = k.integer && z >= 0.f && z <= 255.f && z == std::floor(z);
    k.uniform = k.uniform && z == zf[0];
  }
  return k;
}

// Repacks the codes into the layout of the kernel that reads them (matmul_nbits.h), with scales
// sc and zero points zf (null: all 0; the float layout only), both [n, blocks].
void PackCodes(const NBitsCodes& codes, const float* sc, const float* zf, PackedNBits* out) {
  PackedNBits& p = *out;
  const int64_t k = p.k, n = p.n;
  // The zero points as one value, whole bytes, or scale * zero (matmul_nbits.h), in either layout.
  const ZeroKinds kinds = Classify(zf, n * p.blocks);
  if (kinds.integer && kinds.uniform) p.uniform_zero = static_cast<int>(zf[0]);
  if (!p.int8) {
    PackFloatLayoutCodes(codes, &p);
    p.scales.assign(sc, sc + n * p.blocks);
    if (zf == nullptr || p.uniform_zero >= 0) return;
    if (kinds.integer) {
      p.zero_bytes.assign(zf, zf + n * p.blocks);
    } else {
      p.scaled_zero.resize(n * p.blocks);
      for (int64_t i = 0; i < n * p.blocks; ++i) p.scaled_zero[i] = p.scales[i] * zf[i];
    }
    return;
  }
  // The int8 layout (matmul_nbits.h); columns past n stay zero (scale 0).
  const int64_t per_block = p.vecs() * 16 * p.blocks;
  p.q.assign(p.vecs() * p.line_bytes() * (p.k_padded / 8), 0);
  p.scales.assign(per_block, 0.f);
  if (p.uniform_zero < 0 && kinds.integer) {
    p.zero_bytes.assign(per_block, 0);
  } else if (p.uniform_zero < 0) {
    p.scaled_zero.assign(per_block, 0.f);
  }
  for (int64_t j = 0; j < n; ++j) {
    const int64_t panel = j / (PackedNBits::kPanelVecs * 16), vecs = p.panel_vecs(panel);
    const int64_t v = (j / 16) % PackedNBits::kPanelVecs, lane = j % 16;
    const int64_t line = p.line_bytes();
    uint8_t* dst = p.q.data() + p.panel_q(panel) + v * line + lane * 4;
    for (int64_t e = 0; e < k; ++e) {  // value e: step e / 8 of the panel, byte e % 4 of the lane,
      const int q = codes(j, e);        // e % 8 >= 4 in the high nibble (8 bits: the second line)
      uint8_t& at = dst[(e / 8) * vecs * line + (p.bits == 8 && (e & 4) ? 64 : 0) + (e % 4)];
      at |= static_cast<uint8_t>(p.bits == 4 && (e & 4) ? q << 4 : q);
    }
    for (int64_t blk = 0; blk < p.blocks; ++blk) {
      const int64_t at = p.panel_blocks(panel) + blk * vecs * 16 + v * 16 + lane;
      const float s = sc[j * p.blocks + blk], z = zf[j * p.blocks + blk];
      p.scales[at] = s;
      if (!p.zero_bytes.empty()) p.zero_bytes[at] = static_cast<uint8_t>(z);
      if (!p.scaled_zero.empty()) p.scaled_zero[at] = s * z;
    }
  }
}

// MatMulNBits' inputs checked and packed.
Status PackNBits(int64_t k, int64_t n, int64_t block_size, int bits, bool int8, const Tensor& b,
                 const Tensor& scales, const Tensor* zero_points, PackedNBits* out) {
  PackedNBits& p = *out;
  SetSizes(k, n, block_size, bits, int8, &p);
  const int per = 8 / bits;
  const int64_t blob = block_size / per;
  if (b.dtype() != DataType::kUint8 || b.size() != n * p.blocks * blob) {
    return InvalidArgument("input 'B' must be uint8 with N * ceil(K / block_size) * block_size * bits / 8 = " +
                           std::to_string(n * p.blocks * blob) + " elements, got " + DataTypeName(b.dtype()) + " " +
                           ShapeToString(b.shape()));
  }
  if (!IsFloatLike(scales.dtype()) || scales.size() != n * p.blocks) {
    return InvalidArgument("input 'scales' must be float, float16 or bfloat16 with N * blocks = " +
                           std::to_string(n * p.blocks) + " elements, got " + DataTypeName(scales.dtype()) + " " +
                           ShapeToString(scales.shape()));
  }
  const int64_t zp_bytes = (p.blocks + per - 1) / per;
  if (zero_points != nullptr) {
    const bool packed = zero_points->dtype() == DataType::kUint8 && zero_points->size() == n * zp_bytes;
    const bool floats = zero_points->dtype() == scales.dtype() && zero_points->size() == n * p.blocks;
    if (!packed && !floats) {
      return InvalidArgument("input 'zero_points' must be uint8 [N * ceil(blocks * bits / 8)] = " +
                             std::to_string(n * zp_bytes) + " or of the scales' type [N * blocks] = " +
                             std::to_string(n * p.blocks) + ", got " + DataTypeName(zero_points->dtype()) + " " +
                             ShapeToString(zero_points->shape()));
    }
  }
  // The zero points as floats [n, blocks], 2^(bits - 1) when none are given.
  std::vector<float> zf(n * p.blocks, static_cast<float>(1 << (bits - 1)));
  if (zero_points != nullptr && zero_points->dtype() == DataType::kUint8) {
    const NBitsCodes zeros{zero_points->data<uint8_t>(), zp_bytes, p.blocks, bits};
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t blk = 0; blk < p.blocks; ++blk) zf[j * p.blocks + blk] = static_cast<float>(zeros(j, blk));
    }
  } else if (zero_points != nullptr) {
    const FloatIn z(*zero_points);
    std::copy(z.data, z.data + n * p.blocks, zf.begin());
  }
  const FloatIn sc(scales);
  PackCodes(NBitsCodes{b.data<uint8_t>(), p.blocks * blob, k, bits}, sc.data, zf.data(), &p);
  return Status::Ok();
}

// MatMulBnb4's inputs checked and packed (float layout, the codebook of quant_type).
Status PackBnb4(int64_t k, int64_t n, int64_t block_size, int64_t quant_type, const Tensor& b, const Tensor& absmax,
                PackedNBits* out) {
  // bitsandbytes' FP4 (sign, 2 exponent bits with bias 3, a mantissa bit; absmax 12 scaled to 1)
  // and NF4 (the quantiles of a normal distribution) codebooks.
  static constexpr float kFp4[16] = {0.f,  0.0052083333f,  0.6666667f,  1.f,  0.3333333f,  0.5f,  0.1666667f,  0.25f,
                                     -0.f, -0.0052083333f, -0.6666667f, -1.f, -0.3333333f, -0.5f, -0.1666667f, -0.25f};
  static constexpr float kNf4[16] = {-1.f,          -0.6961928010f, -0.5250730515f, -0.3949174881f,
                                     -0.2844413817f, -0.1847734302f, -0.0910500363f, 0.f,
                                     0.0795802996f,  0.1609302014f,  0.2461123019f,  0.3379152417f,
                                     0.4407098293f,  0.5626170039f,  0.7229568362f,  1.f};
  PackedNBits& p = *out;
  SetSizes(k, n, block_size, 4, false, &p);
  if (b.dtype() != DataType::kUint8 || b.size() != (n * k + 1) / 2) {
    return InvalidArgument("input 'B' must be uint8 with ceil(N * K / 2) = " + std::to_string((n * k + 1) / 2) +
                           " elements, got " + DataTypeName(b.dtype()) + " " + ShapeToString(b.shape()));
  }
  if (!IsFloatLike(absmax.dtype()) || absmax.size() != n * p.blocks) {
    return InvalidArgument("input 'absmax' must be float, float16 or bfloat16 with N * K / block_size = " +
                           std::to_string(n * p.blocks) + " elements, got " + DataTypeName(absmax.dtype()) + " " +
                           ShapeToString(absmax.shape()));
  }
  p.codebook.assign(quant_type == 0 ? kFp4 : kNf4, (quant_type == 0 ? kFp4 : kNf4) + 16);
  const FloatIn sc(absmax);
  PackCodes(NBitsCodes{b.data<uint8_t>(), 0, k, 4}, sc.data, nullptr, &p);
  return Status::Ok();
}

// K and N come from the model: positive, and small enough that N * K (and the packed sizes made of
// it) cannot overflow before the inputs' sizes are checked against them.
Status CheckSizes(int64_t k, int64_t n) {
  constexpr int64_t kMax = int64_t{1} << 31;
  if (k <= 0 || n <= 0 || k >= kMax || n >= kMax) {
    return InvalidArgument("attributes K and N must be positive and below 2^31, got K = " + std::to_string(k) +
                           ", N = " + std::to_string(n));
  }
  return Status::Ok();
}

// MatMulNBits, and MatMulBnb4 (its B, absmax in the place of B, scales), on the same kernels.
class MatMulNBitsKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, bool bnb4) {
    return bnb4 ? CreateBnb4(info) : CreateNBits(info);
  }

  static Result<std::unique_ptr<OpKernel>> CreateNBits(const KernelInfo& info) {
    auto k = std::unique_ptr<MatMulNBitsKernel>(new MatMulNBitsKernel());
    ONNXFLOW_RETURN_IF_ERROR(k->ReadShared(info, "MatMulNBits"));
    const int64_t bits = info.GetInt("bits", 4);
    if (bits != 2 && bits != 4 && bits != 8) {
      return Unimplemented("MatMulNBits with bits = " + std::to_string(bits) + " (2, 4 and 8 run)");
    }
    k->bits_ = static_cast<int>(bits);
    // accuracy_level 4 permits quantizing A to int8: done where the int8 kernel runs (4- and 8-bit B).
    k->int8_ = info.GetInt("accuracy_level", 0) == 4 && bits != 2 && NBitsInt8Available(static_cast<int>(bits));
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
    ONNXFLOW_RETURN_IF_ERROR(k->PackConstants(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  // MatMulBnb4(A, B, absmax): K, N, block_size, quant_type (0 FP4, 1 NF4), transB (1: B holds the
  // N x K weights row by row; 0 is a training layout ONNX Runtime's CPU provider has no use for).
  static Result<std::unique_ptr<OpKernel>> CreateBnb4(const KernelInfo& info) {
    auto k = std::unique_ptr<MatMulNBitsKernel>(new MatMulNBitsKernel());
    ONNXFLOW_RETURN_IF_ERROR(k->ReadShared(info, "MatMulBnb4"));
    ONNXFLOW_ASSIGN_OR_RETURN(k->quant_type_, info.RequireInt("quant_type"));
    if (k->quant_type_ != 0 && k->quant_type_ != 1) {
      return InvalidArgument("attribute quant_type must be 0 (FP4) or 1 (NF4), got " + std::to_string(k->quant_type_));
    }
    if (info.GetInt("transB", 1) != 1) return Unimplemented("MatMulBnb4 with transB = 0 (only B as N x K)");
    // The kernels keep each column's blocks whole: a block of the flat N x K codes may not run
    // from one column into the next.
    if (k->k_ % k->block_size_ != 0) {
      return Unimplemented("MatMulBnb4 with block_size " + std::to_string(k->block_size_) +
                           " (only a power of 2 from 16 that divides K = " + std::to_string(k->k_) + ")");
    }
    ONNXFLOW_RETURN_IF_ERROR(k->PackConstants(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  bool ReadsAtRun(int input) const override { return packed_ == nullptr || input == 0 || input == 5; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    if (!IsFloatLike(a->dtype())) {
      return InvalidArgument(std::string("input 'A' must be float, float16 or bfloat16, got ") +
                             DataTypeName(a->dtype()));
    }
    if (a->rank() < 1 || a->dim(a->rank() - 1) != k_) {
      return InvalidArgument("input 'A' has shape " + ShapeToString(a->shape()) + " but K = " + std::to_string(k_));
    }
    const PackedNBits* packed = packed_.get();
    PackedNBits run_packed;
    if (packed == nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* s, ctx.RequireTensor(2));
      ONNXFLOW_RETURN_IF_ERROR(Pack(*b, *s, ctx.input_tensor(3), &run_packed));
      packed = &run_packed;
    }
    const Tensor* bias = ctx.input_tensor(5);
    if (bias != nullptr && (bias->dtype() != a->dtype() || bias->size() != n_)) {
      return InvalidArgument("input 'bias' must be " + std::string(DataTypeName(a->dtype())) + " [N], got " +
                             DataTypeName(bias->dtype()) + " " + ShapeToString(bias->shape()));
    }
    Shape out_shape = a->shape();
    out_shape.back() = n_;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, a->dtype(), out_shape));
    const FloatIn a_in(*a);
    std::optional<FloatIn> bias_in;
    if (bias != nullptr) bias_in.emplace(*bias);
    FloatOut y_out(y);
    ONNXFLOW_RETURN_IF_ERROR(
        Multiply(ctx, *packed, a_in.data, a->size() / k_, bias_in ? bias_in->data : nullptr, y_out.data));
    y_out.Finish();
    return Status::Ok();
  }

 private:
  MatMulNBitsKernel() = default;

  // K, N and block_size, and A's type, which both ops check alike.
  Status ReadShared(const KernelInfo& info, const char* op) {
    ONNXFLOW_ASSIGN_OR_RETURN(k_, info.RequireInt("K"));
    ONNXFLOW_ASSIGN_OR_RETURN(n_, info.RequireInt("N"));
    ONNXFLOW_ASSIGN_OR_RETURN(block_size_, info.RequireInt("block_size"));
    ONNXFLOW_RETURN_IF_ERROR(CheckSizes(k_, n_));
    if (block_size_ < 16 || (block_size_ & (block_size_ - 1)) != 0) {
      return InvalidArgument("attribute block_size must be a power of 2 and at least 16, got " +
                             std::to_string(block_size_));
    }
    if (info.input_type(0) != DataType::kUndefined && !IsFloatLike(info.input_type(0))) {
      return InvalidArgument(std::string(op) + ": input 'A' must be float, float16 or bfloat16, got " +
                             DataTypeName(info.input_type(0)));
    }
    return Status::Ok();
  }

  Status Pack(const Tensor& b, const Tensor& s, const Tensor* zero_points, PackedNBits* out) const {
    if (quant_type_ >= 0) return PackBnb4(k_, n_, block_size_, quant_type_, b, s, out);
    return PackNBits(k_, n_, block_size_, bits_, int8_, b, s, zero_points, out);
  }

  // B packed at load when it and its scales (and zero points) are constants; else at every run.
  Status PackConstants(const KernelInfo& info) {
    const Tensor* b = info.constant_input(1);
    const Tensor* s = info.constant_input(2);
    const bool zp_const = !info.has_input(3) || info.constant_input(3) != nullptr;
    if (b == nullptr || s == nullptr || !zp_const) return Status::Ok();
    packed_ = std::make_shared<PackedNBits>();
    return Pack(*b, *s, info.constant_input(3), packed_.get());
  }

  // Y [m, N] = A [m, K] * dequantize(B)^T (+ bias).
  Status Multiply(KernelContext& ctx, const PackedNBits& p, const float* pa, int64_t m, const float* pbias,
                  float* py) const {
    if (p.int8) {
      // The int8 kernel, every row count: split over cores by panels of 64 columns, each a
      // single pass over its part of B for all rows.
      if (!NBitsInt8Available(p.bits)) return Internal("MatMulNBits: B packed for the int8 kernel, which does not run here");
      NBitsQuantA qa;
      QuantizeRowsForNBits(p, pa, m, &qa);
      ParallelFor(ctx, p.panels(), MacCost(m * 64 * k_), [&](int64_t p0, int64_t p1) {
        MatMulNBitsInt8(p, qa, m, p0, p1, pbias, py);
      });
      return Status::Ok();
    }
    if (m >= kNBitsGemmRows) {
      NBitsPanelSource panels(p);
      GemmInputA ga;
      ga.data = pa;
      ga.ld = k_;
      GemmInputB gb;
      gb.source = &panels;
      GemmEpilogue ep;
      ep.col_bias = pbias;
      Sgemm(m, n_, k_, ga, gb, py, n_, ep, ctx.threads());
      return Status::Ok();
    }
    // Chunks of 16 columns keep the 4-column kernels whole; each reads 16 * K / 2 bytes of B.
    constexpr int64_t kChunk = 16;
    const int64_t chunks = (n_ + kChunk - 1) / kChunk;
    if (m == 1) {
      std::vector<float> row(p.k_padded, 0.f), sums(p.blocks);
      std::copy(pa, pa + k_, row.begin());
      for (int64_t blk = 0; blk < p.blocks; ++blk) {
        float s = 0;
        for (int64_t e = blk * p.block_size; e < (blk + 1) * p.block_size; ++e) s += row[e];
        sums[blk] = s;
      }
      ParallelFor(ctx, chunks, kChunk * k_, [&](int64_t c0, int64_t c1) {
        const int64_t j0 = c0 * kChunk, j1 = std::min(n_, c1 * kChunk);
        MatMulNBitsRow(p, row.data(), sums.data(), j0, j1, py + j0);
      });
    } else {
      // A few rows: four at a time (zero rows pad the last four), each chunk of B's columns
      // decoded once per four rows and read from cache by the next four.
      const int64_t quads = (m + 3) / 4;
      std::vector<float> rows(quads * 4 * p.k_padded, 0.f);
      for (int64_t i = 0; i < m; ++i) std::copy(pa + i * k_, pa + (i + 1) * k_, rows.begin() + i * p.k_padded);
      ParallelFor(ctx, chunks, MacCost(m * kChunk * k_), [&](int64_t c0, int64_t c1) {
        const int64_t j0 = c0 * kChunk, j1 = std::min(n_, c1 * kChunk);
        for (int64_t q = 0; q < quads; ++q) {
          MatMulNBitsFourRows(p, rows.data() + q * 4 * p.k_padded, p.k_padded, std::min<int64_t>(4, m - q * 4), j0,
                              j1, py + q * 4 * n_, n_);
        }
      });
    }
    if (pbias != nullptr) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n_; ++j) py[i * n_ + j] += pbias[j];
      }
    }
    return Status::Ok();
  }

  int64_t k_ = 0, n_ = 0, block_size_ = 0;
  int64_t quant_type_ = -1;  // MatMulBnb4's codebook (0 FP4, 1 NF4); -1 for MatMulNBits
  int bits_ = 4;
  bool int8_ = false;  // accuracy_level 4 where the int8 kernel runs: B in its layout
  std::shared_ptr<PackedNBits> packed_;  // null when B, scales or zero points are not constants
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMatMulNBits(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "MatMulNBits", 1, kOpenEnded, Make<MatMulNBitsKernel>(false)));
  return registry.Register(kMsDomain, "MatMulBnb4", 1, kOpenEnded, Make<MatMulNBitsKernel>(true));
}

}  // namespace quant_ms
}  // namespace onnxflow
