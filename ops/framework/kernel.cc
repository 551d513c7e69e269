#include "ops/framework/kernel.h"

#include <atomic>
#include <memory>

#include "ops/framework/shape.h"

namespace onnxflow {

Result<const Tensor*> KernelContext::RequireTensor(int i) const {
  const Value* v = input(i);
  if (v == nullptr) return InvalidArgument("input " + std::to_string(i) + " is required but absent");
  if (!v->is_tensor()) return InvalidArgument("input " + std::to_string(i) + " must be a tensor");
  return &v->tensor();
}

Result<Tensor*> KernelContext::Allocate(int i, DataType dtype, const Shape& shape) {
  return AllocateOutput(i, dtype, shape, /*zero=*/true);
}

Result<Tensor*> KernelContext::AllocateUninitialized(int i, DataType dtype, const Shape& shape) {
  return AllocateOutput(i, dtype, shape, /*zero=*/dtype == DataType::kString);
}

Result<Tensor*> KernelContext::AllocateOutput(int i, DataType dtype, const Shape& shape, bool zero) {
  ONNXFLOW_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(shape));
  const size_t element = ElementSize(dtype);
  if (element == 0) return InvalidArgument(std::string("cannot allocate a tensor of type ") + DataTypeName(dtype));
  if (count > run_->limits().max_tensor_bytes / static_cast<int64_t>(element)) {
    return ResourceExhausted("output " + std::to_string(i) + " of shape " + ShapeToString(shape) + " (" +
                             DataTypeName(dtype) + ") exceeds the limit of " +
                             std::to_string(run_->limits().max_tensor_bytes) + " bytes per tensor (max_tensor_bytes)");
  }
  // Count the bytes against the run's budget (max_run_bytes); the storage gives them back when
  // its last handle goes, which may be after the run for tensors it returns.
  const int64_t bytes = count * static_cast<int64_t>(element);
  Tensor t = zero ? Tensor(dtype, shape) : Tensor::Uninitialized(dtype, shape);
  if (bytes > 0) {
    const std::shared_ptr<std::atomic<int64_t>>& counter = run_->live_bytes_counter();
    const int64_t held = counter->fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (held > run_->limits().max_run_bytes) {
      counter->fetch_sub(bytes, std::memory_order_relaxed);
      return ResourceExhausted("output " + std::to_string(i) + " of shape " + ShapeToString(shape) + " (" +
                               DataTypeName(dtype) + ") would bring the run to " + std::to_string(held) +
                               " bytes, over the limit of " + std::to_string(run_->limits().max_run_bytes) +
                               " bytes per run (max_run_bytes)");
    }
    void* data = t.mutable_raw_data();
    std::shared_ptr<void> tracked(data, [owner = t.storage(), counter, bytes](void*) {
      counter->fetch_sub(bytes, std::memory_order_relaxed);
    });
    t = Tensor(dtype, shape, std::move(tracked), data);
  }
  if (!has_output(i)) {
    scratch_ = std::move(t);
    return &scratch_;
  }
  Value& slot = values_[slots_.outputs[i]];
  slot = Value(std::move(t));
  return &slot.mutable_tensor();
}

Tensor* KernelContext::ReusableInput(int i) {
  if (i < 0 || i >= static_cast<int>(slots_.reusable.size()) || !slots_.reusable[i] || slots_.inputs[i] < 0) {
    return nullptr;
  }
  Value& v = values_[slots_.inputs[i]];
  if (!v.is_tensor() || v.tensor().storage() == nullptr || v.tensor().storage().use_count() != 1) return nullptr;
  return &v.mutable_tensor();
}

Status KernelContext::CheckScratch(const Shape& shape, size_t element_size, const std::string& what) const {
  const Result<int64_t> count = CheckedElementCount(shape);
  const int64_t limit = run_->limits().max_tensor_bytes;
  if (!count.ok() || *count > limit / static_cast<int64_t>(element_size)) {
    return ResourceExhausted(what + " of shape " + ShapeToString(shape) + " would pass the limit of " +
                             std::to_string(limit) + " bytes per tensor (max_tensor_bytes)");
  }
  return Status::Ok();
}

void KernelContext::SetOutput(int i, Value value) {
  if (has_output(i)) values_[slots_.outputs[i]] = std::move(value);
}

}  // namespace onnxflow
