// The last plan a kernel made for a shape, kept for the next call of the same shape. Kernels are
// immutable and their Compute runs on many threads at once, so the plan is swapped whole through
// an atomic shared_ptr: a call that finds the plan of its shape reads it, one that does not makes
// its own and stores it (the last store wins; a plan is never changed once stored).
#pragma once

#include <memory>
#include <utility>

namespace onnxflow {

template <class Plan>
class LastPlan {
 public:
  // The stored plan when matches(plan) says it is for the caller's shape, else null.
  template <class Matches>
  std::shared_ptr<const Plan> Find(const Matches& matches) const {
    std::shared_ptr<const Plan> p = std::atomic_load_explicit(&last_, std::memory_order_acquire);
    return p != nullptr && matches(*p) ? p : nullptr;
  }

  void Store(std::shared_ptr<const Plan> plan) const {
    std::atomic_store_explicit(&last_, std::move(plan), std::memory_order_release);
  }

 private:
  mutable std::shared_ptr<const Plan> last_;
};

}  // namespace onnxflow
