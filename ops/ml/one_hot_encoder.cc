// OneHotEncoder-1 (ai.onnx.ml): Y has X's shape plus a last axis of len(cats); each element
// becomes a one at its category's position. Numeric inputs are cast to int64 and looked up in
// cats_int64s, strings in cats_strings. An unknown category gives all zeros, or an error when
// zeros = 0.
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

class OneHotEncoder final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::unique_ptr<OneHotEncoder> k(new OneHotEncoder());
    const std::vector<int64_t> ints = info.GetInts("cats_int64s");
    const std::vector<std::string> strings = info.GetStrings("cats_strings");
    if (ints.empty() == strings.empty()) return InvalidArgument("exactly one of cats_int64s and cats_strings must be set (non-empty)");
    k->strings_ = !strings.empty();
    k->count_ = static_cast<int64_t>(k->strings_ ? strings.size() : ints.size());
    for (size_t i = 0; i < ints.size(); ++i) k->int_index_.emplace(ints[i], static_cast<int64_t>(i));  // first wins
    for (size_t i = 0; i < strings.size(); ++i) k->string_index_.emplace(strings[i], static_cast<int64_t>(i));
    k->zeros_ = info.GetInt("zeros", 1) != 0;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if ((x->dtype() == DataType::kString) != strings_) {
      return InvalidArgument(std::string("X is ") + DataTypeName(x->dtype()) + " but the categories are " +
                             (strings_ ? "strings" : "int64s"));
    }
    Shape shape = x->shape();
    shape.push_back(count_);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kFloat, shape));
    float* out = y->mutable_data<float>();
    const int64_t n = x->size();
    return DispatchType<std::string, int64_t, int32_t, float, double>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* in = x->data<T>();
      for (int64_t i = 0; i < n; ++i) {
        int64_t at = -1;
        if constexpr (std::is_same_v<T, std::string>) {
          auto it = string_index_.find(in[i]);
          if (it != string_index_.end()) at = it->second;
        } else {
          // Cast to int64 as the spec says (truncation); NaN and out-of-range floats match nothing.
          const bool representable = !std::is_floating_point_v<T> ||
                                     (std::isfinite(static_cast<double>(in[i])) && std::abs(static_cast<double>(in[i])) < 9.2e18);
          if (representable) {
            auto it = int_index_.find(static_cast<int64_t>(in[i]));
            if (it != int_index_.end()) at = it->second;
          }
        }
        if (at >= 0) {
          out[i * count_ + at] = 1.0f;
        } else if (!zeros_) {
          return InvalidArgument("X[" + std::to_string(i) + "] is not one of the categories (zeros = 0)");
        }
      }
      return Status::Ok();
    });
  }

 private:
  OneHotEncoder() = default;
  bool strings_ = false;
  bool zeros_ = true;
  int64_t count_ = 0;
  std::unordered_map<int64_t, int64_t> int_index_;
  std::unordered_map<std::string, int64_t> string_index_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterOneHotEncoder(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "OneHotEncoder", 1, kOpenEnded, Make<OneHotEncoder>());
}

}  // namespace onnxflow
