#include "ops/math/constant_b.h"

#include "ops/cast/half_simd.h"
#include "ops/framework/shared_weights.h"
#include "ops/math/float_view.h"

namespace onnxflow {
namespace {

void Widen(DataType type, const uint16_t* in, float* out, int64_t n) {
  if (type == DataType::kFloat16) {
    HalfToFloatArray(in, out, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = BFloat16ToFloat(in[i]);
}

void Narrow(DataType type, const float* in, uint16_t* out, int64_t n) {
  if (type == DataType::kFloat16) {
    FloatToHalfArray(in, out, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToBFloat16(in[i]);
}

}  // namespace

HalfPackedB::HalfPackedB(const Tensor& b, bool trans) : dtype_(b.dtype()) {
  k_ = trans ? b.dim(1) : b.dim(0);
  n_ = trans ? b.dim(0) : b.dim(1);
  // Packed in float (the GEMM's own packing: strips, zero padding), then narrowed: widening and
  // narrowing a half value is exact, so the blocks PackBlock returns equal PackB's.
  std::vector<float> widened;
  const PackedB packed = PackB(FloatData(b, widened), b.dim(1), trans, k_, n_);
  std::vector<float>().swap(widened);
  nr_ = packed.nr;
  strips_.resize(static_cast<size_t>(packed.strips() * packed.strip_size()));
  Narrow(dtype_, packed.data.get(), strips_.data(), static_cast<int64_t>(strips_.size()));
}

void HalfPackedB::PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const {
  // The GEMM's blocks start on strip boundaries and its strips are the ones packed here.
  const int64_t first = j0 / nr_, strips = (cols + nr - 1) / nr;
  for (int64_t s = 0; s < strips; ++s) {
    Widen(dtype_, strips_.data() + ((first + s) * k_ + k0) * nr_, dst + s * kc * nr, kc * nr);
  }
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
