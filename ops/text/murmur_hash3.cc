// com.microsoft MurmurHash3 (version 1): Y = MurmurHash3_x86_32 of each element of X, a string's
// bytes or an int32 / uint32's four bytes, with the attribute `seed` (default 0); Y is uint32 when
// `positive` is 1 (the default), else int32 of the same bits. skl2onnx writes it for
// scikit-learn's FeatureHasher, whose hashes are the same function.
#include <cstring>
#include <string>

#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/text/string_ops.h"

namespace onnxflow {
namespace {

uint32_t RotateLeft(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Austin Appleby's MurmurHash3, the 32-bit x86 variant, little-endian.
uint32_t Murmur3(const unsigned char* data, size_t len, uint32_t seed) {
  constexpr uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
  uint32_t h = seed;
  const size_t blocks = len / 4;
  for (size_t i = 0; i < blocks; ++i) {
    uint32_t k;
    std::memcpy(&k, data + 4 * i, 4);
    k *= c1;
    k = RotateLeft(k, 15);
    k *= c2;
    h ^= k;
    h = RotateLeft(h, 13);
    h = h * 5 + 0xe6546b64;
  }
  const unsigned char* tail = data + 4 * blocks;
  uint32_t k = 0;
  switch (len & 3) {
    case 3: k ^= static_cast<uint32_t>(tail[2]) << 16; [[fallthrough]];
    case 2: k ^= static_cast<uint32_t>(tail[1]) << 8; [[fallthrough]];
    case 1:
      k ^= tail[0];
      k *= c1;
      k = RotateLeft(k, 15);
      k *= c2;
      h ^= k;
  }
  h ^= static_cast<uint32_t>(len);
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return h;
}

class MurmurHash3 final : public OpKernel {
 public:
  explicit MurmurHash3(const KernelInfo& info)
      : seed_(static_cast<uint32_t>(info.GetInt("seed", 0))), positive_(info.GetInt("positive", 1) == 1) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const DataType type = x->dtype();
    if (type != DataType::kString && type != DataType::kInt32 && type != DataType::kUint32) {
      return InvalidArgument(std::string("X must be string, int32 or uint32, got ") + DataTypeName(type));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, positive_ ? DataType::kUint32 : DataType::kInt32,
                                                                   x->shape()));
    uint32_t* out = static_cast<uint32_t*>(y->mutable_raw_data());  // int32 holds the same bits
    ParallelFor(ctx, x->size(), 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (type == DataType::kString) {
          const std::string& s = x->data<std::string>()[i];
          out[i] = Murmur3(reinterpret_cast<const unsigned char*>(s.data()), s.size(), seed_);
        } else {
          out[i] = Murmur3(static_cast<const unsigned char*>(x->raw_data()) + 4 * i, 4, seed_);
        }
      }
    });
    return Status::Ok();
  }

 private:
  uint32_t seed_;
  bool positive_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMurmurHash3(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "MurmurHash3", 1, kOpenEnded, Make<MurmurHash3>());
}

}  // namespace onnxflow
