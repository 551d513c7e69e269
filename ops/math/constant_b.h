// The constant B operand of MatMul and Gemm, packed once at load (ConstantB).
//
// A 16-bit one stays in 16 bits (HalfPackedB): the weights of a float16 (or bfloat16) model's MatMul and
// Gemm after graph/half_compute moved the model's arithmetic to float. The weights stay in half,
// packed in the GEMM's strip layout (PackedB), so a half model holds half the weight bytes of its
// float form; the GEMM widens each block as it uses it (BPanelSource), once per block and call.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/math/gemm.h"

namespace onnxflow {

class HalfPackedB : public BPanelSource {
 public:
  // op(b) (K x N; b is N x K when `trans`), b float16 or bfloat16 of rank 2.
  HalfPackedB(const Tensor& b, bool trans);

  void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const override;
  const uint16_t* HalfStrips(int64_t nr, bool* bfloat16) const override;

 private:
  const uint16_t* strips() const { return reinterpret_cast<const uint16_t*>(strips_.get()); }
  int64_t k_ = 0, n_ = 0, nr_ = 0;
  DataType dtype_;
  AlignedFloats strips_;  // 16-bit values in PackedB's layout: strip t, row k at (t * k_ + k) * nr_
};

// What MatMul and Gemm hold of a constant B: packed in float, or kept in 16 bits.
class ConstantB {
 public:
  // Packs op(b) when b is a constant float, float16 or bfloat16 matrix; holds nothing otherwise.
  ConstantB(const Tensor* b, bool trans);
  // Points `in` at the packed form when `b` is the tensor packed here; false (and `in` unchanged)
  // otherwise.
  bool Use(const Tensor& b, GemmInputB* in) const;
  // Whether B was packed here. The kernel then does not read its B at run (OpKernel::ReadsAtRun),
  // so the session lets the unpacked weights go (a BERT-base held its 340 MB of weights twice).
  bool held() const { return packed_ != nullptr || half_ != nullptr; }
  // What a kernel checks of B in its place when held(): B's type and shape, without data.
  const Tensor& described() const { return described_; }

 private:
  // Shared by content with every MatMul and Gemm (of any session) packing the same B the same way
  // (shared_weights.h).
  std::shared_ptr<const PackedB> packed_;
  std::shared_ptr<const HalfPackedB> half_;
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  Tensor described_;
};

}  // namespace onnxflow
