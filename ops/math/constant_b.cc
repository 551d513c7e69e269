#include "ops/math/constant_b.h"

#include <algorithm>

#include "ops/framework/shared_weights.h"
#include "ops/math/float_view.h"

namespace onnxflow {

HalfPackedB::HalfPackedB(const Tensor& b, bool trans) : dtype_(b.dtype()) {
  k_ = trans ? b.dim(1) : b.dim(0);
  n_ = trans ? b.dim(0) : b.dim(1);
  // PackB's layout (strips of nr columns, zero padding past N: +0 in both 16-bit types), moved in
  // 16 bits, so the blocks PackBlock returns equal PackB's of the widened weights. (Packed in
  // float and narrowed, the float copy stayed in the GEMM's scratch free list after the load:
  // 4 MB of real_inception_v1 fp16's peak.)
  nr_ = GemmTile().nr;
  // In the GEMM's scratch memory, two halves a float, for its 2 MiB pages (gemm_scratch.cc): the
  // per-token step of a half GPT-2 (M = 1, 170 MB of weights streamed once) took 7.1 ms against
  // 7.9 on 4 KiB pages (1 thread, medians of 4 rounds alternated).
  const int64_t count = (n_ + nr_ - 1) / nr_ * k_ * nr_;
  strips_ = AlignedFloats::Make((count + 1) / 2, /*zero=*/false);
  uint16_t* strips = reinterpret_cast<uint16_t*>(strips_.get());
  // Every element is written below but the last strip's columns past N: zero only those (a
  // buffer from the scratch free list holds old values).
  if (const int64_t used = n_ % nr_; used != 0) {
    uint16_t* last = strips + (n_ / nr_) * k_ * nr_;
    for (int64_t k = 0; k < k_; ++k) std::fill(last + k * nr_ + used, last + (k + 1) * nr_, uint16_t{0});
  }
  const uint16_t* src = static_cast<const uint16_t*>(b.raw_data());
  const int64_t ld = b.dim(1);
  auto at = [&](int64_t k, int64_t j) -> uint16_t& { return strips[(j / nr_ * k_ + k) * nr_ + j % nr_]; };
  if (trans) {  // b is N x K: read row by row
    for (int64_t j = 0; j < n_; ++j) {
      for (int64_t k = 0; k < k_; ++k) at(k, j) = src[j * ld + k];
    }
  } else {
    for (int64_t k = 0; k < k_; ++k) {
      for (int64_t j = 0; j < n_; ++j) at(k, j) = src[k * ld + j];
    }
  }
}

void HalfPackedB::PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const {
  // The GEMM's blocks start on strip boundaries and its strips are the ones packed here.
  const int64_t first = j0 / nr_, count = (cols + nr - 1) / nr;
  for (int64_t s = 0; s < count; ++s) {
    WidenHalves(dtype_, strips() + ((first + s) * k_ + k0) * nr_, dst + s * kc * nr, kc * nr);
  }
}

const uint16_t* HalfPackedB::HalfStrips(int64_t nr, bool* bfloat16) const {
  *bfloat16 = dtype_ == DataType::kBFloat16;
  return nr == nr_ ? strips() : nullptr;
}

ConstantB::ConstantB(const Tensor* b, bool trans) {
  if (b == nullptr || !IsFloatLike(b->dtype()) || b->rank() != 2 || b->size() == 0) return;
  WeightKey key("ConstantB");
  key.Add(*b).Add(int64_t{trans});
  if (b->dtype() == DataType::kFloat) {
    const int64_t k = trans ? b->dim(1) : b->dim(0), n = trans ? b->dim(0) : b->dim(1);
    packed_ = SharedWeights::Get<PackedB>(key, [&] { return PackB(b->data<float>(), b->dim(1), trans, k, n); });
  } else {
    half_ = SharedWeights::Get<HalfPackedB>(key, [&] { return HalfPackedB(*b, trans); });
  }
  dtype_ = b->dtype();
  shape_ = b->shape();
  described_ = Tensor(dtype_, shape_, /*storage=*/nullptr, /*data=*/nullptr);
}

bool ConstantB::Use(const Tensor& b, GemmInputB* in) const {
  if ((!packed_ && !half_) || b.dtype() != dtype_ || b.shape() != shape_) return false;
  in->packed = packed_.get();
  in->source = half_.get();
  return true;
}

}  // namespace onnxflow
