// Weights shared across sessions, keyed by content (issue 25).
//
// Kernels pack their constant weights at construction (GEMM panels, blocked and Winograd
// convolution weights, int8 panels); two sessions of one model, or two models with the same
// weights, would each hold a copy. SharedWeights keeps, process-wide, a weak reference to every
// packed buffer under a key made of what was packed (a kind tag and the parameters of the
// packing) and from what (each source tensor's element type, shape and a 128-bit digest of its
// bytes). A kernel asks for its buffer by key: the same key gets the same immutable object while
// any kernel holds it; the last holder going frees it. Nothing is kept for a key nobody holds.
//
//   WeightKey key("BlockedConv.direct");
//   key.Add(w);
//   packed_ = SharedWeights::Get<AlignedFloats>(key, [&] { return PackDirect(w); });
//
// The buffers are immutable once made (const), so any number of runs of any number of sessions
// read them at once. The map is locked only while kernels are built (at load); a miss builds the
// buffer outside the lock, so loads of different models do not wait on each other's packing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>

#include "include/onnxflow/tensor.h"

namespace onnxflow {

// A 128-bit digest of `bytes` (two independent 64-bit lanes, seeded at random per process). Not
// cryptographic: it tells equal weights from different ones at memory speed (a few GB/s), so
// digesting a model's weights costs little beside loading them; the secret seed keeps a crafted
// model from aiming a collision at another model's weights. Equal within one process only.
struct ContentDigest {
  uint64_t lo = 0, hi = 0;
  bool operator==(const ContentDigest& o) const { return lo == o.lo && hi == o.hi; }
};
ContentDigest DigestBytes(const void* data, size_t bytes);

// What a shared buffer is made of: a kind (the packing and its layout version), the parameters that
// change the packed bytes, and each source tensor's type, shape and content digest.
class WeightKey {
 public:
  explicit WeightKey(const std::string& kind) : key_(kind) { key_ += '|'; }
  WeightKey& Add(const Tensor& source);  // dtype, shape and the digest of its bytes
  WeightKey& Add(int64_t parameter);
  WeightKey& Add(double parameter);
  const std::string& str() const { return key_; }

 private:
  std::string key_;
};

class SharedWeights {
 public:
  // The live object for `key`, or a new one made by `make()` (returning T by value) and kept weakly
  // for the next caller. T is part of the key: one key never yields two types.
  template <typename T, typename Make>
  static std::shared_ptr<const T> Get(const WeightKey& key, Make&& make) {
    const std::string full = key.str() + "|" + typeid(T).name();
    if (auto found = Find(full)) return std::static_pointer_cast<const T>(found);
    std::shared_ptr<const T> made = std::make_shared<const T>(make());
    // Another load may have made the same buffer meanwhile: the first one in is the one kept.
    return std::static_pointer_cast<const T>(Insert(full, made));
  }

  // A tensor with t's contents whose storage is shared with every other interned tensor of the
  // same type, shape and bytes that is still alive (two sessions' copies of one initializer). The
  // result is read-only like every constant.
  static Tensor Intern(const Tensor& t);

  // Keys whose object is still held somewhere (for tests and diagnostics).
  static size_t LiveCount();

 private:
  static std::shared_ptr<const void> Find(const std::string& key);
  static std::shared_ptr<const void> Insert(const std::string& key, std::shared_ptr<const void> value);
};

}  // namespace onnxflow
