#include "ops/framework/shared_weights.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <unordered_map>

namespace onnxflow {
namespace {

// A multiply-and-fold lane per 8 bytes, two lanes with independent constants, then a final avalanche
// (the mixing of wyhash and Murmur3's finalizer): one pass over the bytes at memory speed.
constexpr uint64_t kP0 = 0xa0761d6478bd642full, kP1 = 0xe7037ed1a0b428dbull;
constexpr uint64_t kP2 = 0x8ebc6af09c88c6e3ull, kP3 = 0x589965cc75374cc3ull;

inline uint64_t Mix(uint64_t a, uint64_t b) {
  const __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

inline uint64_t Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

struct Registry {
  std::mutex mutex;
  std::unordered_map<std::string, std::weak_ptr<const void>> entries;
  size_t sweep_at = 64;  // drop expired entries when the map reaches this size

  // Expired entries cost a key string each; sweeping when the map has doubled keeps the map within
  // twice the live count at a constant amortized cost per insert.
  void SweepIfDue() {
    if (entries.size() < sweep_at) return;
    for (auto it = entries.begin(); it != entries.end();) {
      it = it->second.expired() ? entries.erase(it) : std::next(it);
    }
    sweep_at = std::max<size_t>(64, 2 * entries.size());
  }
};

Registry& Global() {
  static Registry* registry = new Registry();  // never destroyed: kernels may outlive main()
  return *registry;
}

// A random seed per process: the digest is not cryptographic, and a model crafted to collide with
// another model's weights (to have its packed weights served to that model's kernels) would need
// the seed, which never leaves the process.
uint64_t ProcessSeed() {
  static const uint64_t seed = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }();
  return seed;
}

}  // namespace

ContentDigest DigestBytes(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  const uint64_t seed = ProcessSeed();
  uint64_t a = kP0 ^ bytes ^ seed, b = kP1 + bytes + Mix(seed, kP2);
  size_t i = 0;
  for (; i + 16 <= bytes; i += 16) {
    uint64_t w0, w1;
    std::memcpy(&w0, p + i, 8);
    std::memcpy(&w1, p + i + 8, 8);
    a = Mix(a ^ w0, kP2) + w1;
    b = Mix(b ^ w1, kP3) + w0;
  }
  uint64_t tail[2] = {0, 0};
  if (bytes > i) std::memcpy(tail, p + i, bytes - i);
  a = Mix(a ^ tail[0], kP2) + tail[1];
  b = Mix(b ^ tail[1], kP3) + tail[0];
  return ContentDigest{Avalanche(a ^ (b >> 7)), Avalanche(b + Mix(a, kP1))};
}

WeightKey& WeightKey::Add(const Tensor& source) {
  key_ += std::to_string(static_cast<int>(source.dtype()));
  key_ += ShapeToString(source.shape());
  ContentDigest d;
  if (source.dtype() == DataType::kString) {
    // Each string's length and digest, digested in turn.
    std::string lengths_and_digests;
    for (int64_t i = 0; i < source.size(); ++i) {
      const std::string& text = source.data<std::string>()[i];
      const ContentDigest one = DigestBytes(text.data(), text.size());
      const uint64_t words[3] = {text.size(), one.lo, one.hi};
      lengths_and_digests.append(reinterpret_cast<const char*>(words), sizeof(words));
    }
    d = DigestBytes(lengths_and_digests.data(), lengths_and_digests.size());
  } else {
    d = DigestBytes(source.raw_data(), source.nbytes());
  }
  char hex[40];
  std::snprintf(hex, sizeof(hex), "#%016llx%016llx;", static_cast<unsigned long long>(d.hi),
                static_cast<unsigned long long>(d.lo));
  key_ += hex;
  return *this;
}

WeightKey& WeightKey::Add(int64_t parameter) {
  key_ += std::to_string(parameter) + ';';
  return *this;
}

WeightKey& WeightKey::Add(double parameter) {
  char text[40];
  std::snprintf(text, sizeof(text), "%a;", parameter);  // exact: hex float
  key_ += text;
  return *this;
}

Tensor SharedWeights::Intern(const Tensor& t) {
  std::shared_ptr<const Tensor> kept = Get<Tensor>(WeightKey("tensor").Add(t), [&] { return t; });
  // The storage handed out co-owns the kept tensor (an aliasing shared_ptr), so the entry lives
  // exactly as long as some tensor uses it.
  void* data = const_cast<void*>(kept->raw_data());
  return Tensor(kept->dtype(), kept->shape(), std::shared_ptr<void>(kept, data), data);
}

size_t SharedWeights::LiveCount() {
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mutex);
  size_t live = 0;
  for (const auto& [key, weak] : r.entries) live += weak.expired() ? 0 : 1;
  return live;
}

std::shared_ptr<const void> SharedWeights::Find(const std::string& key) {
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.entries.find(key);
  return it == r.entries.end() ? nullptr : it->second.lock();
}

std::shared_ptr<const void> SharedWeights::Insert(const std::string& key, std::shared_ptr<const void> value) {
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::weak_ptr<const void>& slot = r.entries[key];
  if (auto existing = slot.lock()) return existing;
  slot = value;
  r.SweepIfDue();
  return value;
}

}  // namespace onnxflow
