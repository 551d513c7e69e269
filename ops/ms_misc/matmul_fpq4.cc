// com.microsoft MatMulFpQ4 (version 1, deprecated): Y = A x B with float A [..., M, K] and B [K, N]
// given as MLAS's 4-bit blob (input 1, uint8 1-D) and its shape (input 2, int64 [K, N]). ONNX
// Runtime 1.16.0/1.16.1's quantizers (and Intel Neural Compressor's RTN/AWQ/GPTQ for those versions)
// wrote it; MatMulNBits replaced it from 1.17 on, and ONNX Runtime 1.30 still runs it.
//
// The blob is MLAS's public block layout (onnxruntime/core/mlas/lib/q4_dq.cpp, MlasQ4GemmUnPackB):
// column by column, K in blocks of 32 values, each block [float scale][zero point byte, Zp8 only]
// [16 bytes: value l in the low nibble of byte l, value l + 16 in its high nibble]; a short last
// block is padded. blk_quant_type 0 (BlkQ4Sym, 20 bytes a block): (q - 8) * scale; any other value
// (BlkQ4Zp8, the default, 21 bytes): (q - zero point) * scale. The blob must be exactly
// N * ceil(K / 32) blocks, as ONNX Runtime requires. B is widened to float (once at load when blob
// and shape are constants, then packed for the GEMM) and multiplied on the float GEMM.
#include <cstring>
#include <optional>
#include <string>

#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/math/gemm.h"
#include "ops/math/matmul.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

constexpr int64_t kBlock = 32;

class MatMulFpQ4Kernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<MatMulFpQ4Kernel>();
    k->zero_point_ = info.GetInt("blk_quant_type", 1) != 0;
    if (info.input_count() != 3) {
      return InvalidArgument("MatMulFpQ4: takes 3 inputs (A, B, B_shape), got " + std::to_string(info.input_count()));
    }
    const DataType want[3] = {DataType::kFloat, DataType::kUint8, DataType::kInt64};
    for (int i = 0; i < 3; ++i) {
      const DataType t = info.input_type(i);
      if (t != DataType::kUndefined && t != want[i]) {
        return InvalidArgument(std::string("MatMulFpQ4: input '") + kInputNames[i] + "' must be " +
                               DataTypeName(want[i]) + ", got " + DataTypeName(t));
      }
    }
    const Tensor* blob = info.constant_input(1);
    const Tensor* shape = info.constant_input(2);
    if (blob != nullptr && shape != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(auto kn, k->CheckB(*blob, *shape));
      if (kn.first > 0 && kn.second > 0) {
        Tensor b = Tensor::Uninitialized(DataType::kFloat, {kn.first, kn.second});
        k->Dequantize(blob->data<uint8_t>(), kn.first, kn.second, b.mutable_data<float>());
        k->packed_.emplace(PackB(b.data<float>(), kn.second, false, kn.first, kn.second));
        k->packed_k_ = kn.first;
        k->packed_n_ = kn.second;
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* in[3];
    const DataType want[3] = {DataType::kFloat, DataType::kUint8, DataType::kInt64};
    for (int i = 0; i < 3; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(in[i], ctx.RequireTensor(i));
      if (in[i]->dtype() != want[i]) {
        return InvalidArgument(std::string("MatMulFpQ4: input '") + kInputNames[i] + "' must be " +
                               DataTypeName(want[i]) + ", got " + DataTypeName(in[i]->dtype()));
      }
    }
    const Tensor &a = *in[0], &blob = *in[1];
    ONNXFLOW_ASSIGN_OR_RETURN(auto kn, CheckB(blob, *in[2]));
    const auto [k, n] = kn;
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a.shape(), {k, n}));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, s.output));
    if (y->size() == 0) return Status::Ok();
    float* out = y->mutable_data<float>();
    if (k == 0) {
      std::fill(out, out + y->size(), 0.0f);
      return Status::Ok();
    }
    // B is shared by every batch of A: the batches stack into one tall product.
    const int64_t rows = ElementCount(s.batch) * s.m;
    const GemmInputA ia{nullptr, a.data<float>(), k, false, 1.0f};
    // A blob and shape constant at load are the same values at every run (as for MatMul's packed B).
    if (packed_.has_value() && k == packed_k_ && n == packed_n_) {
      Sgemm(rows, n, k, ia, GemmInputB{&*packed_, nullptr, 0, false}, out, n, GemmEpilogue{}, ctx.threads());
      return Status::Ok();
    }
    ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({k, n}, sizeof(float), "MatMulFpQ4: the widened B"));
    Tensor b = Tensor::Uninitialized(DataType::kFloat, {k, n});
    Dequantize(blob.data<uint8_t>(), k, n, b.mutable_data<float>());
    Sgemm(rows, n, k, ia, GemmInputB{nullptr, b.data<float>(), n, false}, out, n, GemmEpilogue{}, ctx.threads());
    return Status::Ok();
  }

 private:
  static constexpr const char* kInputNames[] = {"A", "B", "B_shape"};

  int64_t BlockBytes() const { return kBlock / 2 + 4 + (zero_point_ ? 1 : 0); }

  // (K, N) from B_shape, and the blob's length checked against them without overflow.
  Result<std::pair<int64_t, int64_t>> CheckB(const Tensor& blob, const Tensor& shape) const {
    if (shape.dtype() != DataType::kInt64 || shape.rank() != 1 || shape.size() != 2) {
      return InvalidArgument("MatMulFpQ4: input 'B_shape' must be int64 [2] (K, N), got " +
                             ShapeToString(shape.shape()));
    }
    const int64_t k = shape.data<int64_t>()[0], n = shape.data<int64_t>()[1];
    if (k < 0 || n < 0) {
      return InvalidArgument("MatMulFpQ4: input 'B_shape' (" + std::to_string(k) + ", " + std::to_string(n) +
                             ") must not be negative");
    }
    if (blob.dtype() != DataType::kUint8 || blob.rank() != 1) {
      return InvalidArgument("MatMulFpQ4: input 'B' must be a 1-D uint8 blob, got " + ShapeToString(blob.shape()));
    }
    int64_t bytes = 0;
    const int64_t blocks = k / kBlock + (k % kBlock != 0);
    const bool overflow =
        __builtin_mul_overflow(blocks, n, &bytes) || __builtin_mul_overflow(bytes, BlockBytes(), &bytes);
    if (overflow || bytes != blob.size()) {
      return InvalidArgument("MatMulFpQ4: input 'B' holds " + std::to_string(blob.size()) + " bytes; B_shape (" +
                             std::to_string(k) + ", " + std::to_string(n) + ") in blocks of 32 with blk_quant_type " +
                             (zero_point_ ? "1 (BlkQ4Zp8, 21" : "0 (BlkQ4Sym, 20") + " bytes a block) needs " +
                             (overflow ? std::string("more than int64 holds") : std::to_string(bytes)));
    }
    return std::make_pair(k, n);
  }

  // The blob as float B [K, N], row-major.
  void Dequantize(const uint8_t* blob, int64_t k, int64_t n, float* b) const {
    const int64_t blocks = (k + kBlock - 1) / kBlock, stride = BlockBytes();
    for (int64_t col = 0; col < n; ++col) {
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const uint8_t* p = blob + (col * blocks + blk) * stride;
        float scale;
        std::memcpy(&scale, p, sizeof(float));
        const int zero = zero_point_ ? p[4] : 8;
        const uint8_t* q = p + (zero_point_ ? 5 : 4);
        const int64_t k0 = blk * kBlock, count = std::min(kBlock, k - k0);
        for (int64_t l = 0; l < count; ++l) {
          const int v = l < 16 ? (q[l] & 0x0F) : (q[l - 16] >> 4);
          b[(k0 + l) * n + col] = static_cast<float>(v - zero) * scale;
        }
      }
    }
  }

  bool zero_point_ = true;
  std::optional<PackedB> packed_;
  int64_t packed_k_ = 0, packed_n_ = 0;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMatMulFpQ4(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "MatMulFpQ4", 1, kOpenEnded, Make<MatMulFpQ4Kernel>());
}

}  // namespace onnxflow
