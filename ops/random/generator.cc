#include "ops/random/generator.h"

#include <atomic>
#include <chrono>

namespace onnxflow {

uint32_t RunSeed(const std::optional<uint32_t>& seed) {
  if (seed.has_value()) return *seed;
  // A process-wide counter mixed with entropy taken once: distinct seeds for concurrent runs
  // without touching std::random_device on every call.
  static const uint64_t base = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device() ^
           static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  static std::atomic<uint64_t> counter{0};
  uint64_t z = base + 0x9E3779B97F4A7C15ull * (counter.fetch_add(1, std::memory_order_relaxed) + 1);
  // splitmix64 finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<uint32_t>(z);
}

}  // namespace onnxflow
