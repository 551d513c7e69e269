// Equal, Greater, Less, GreaterOrEqual, LessOrEqual: numpy-broadcast comparisons with a bool
// output. Equal also takes bool and string inputs. Comparisons with NaN are false (NaN != NaN).
#include <string>

#include "ops/elementwise/common.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

enum class Cmp { kEqual, kGreater, kLess, kGreaterOrEqual, kLessOrEqual };

template <typename T, Cmp op>
bool CompareOne(const T& p, const T& q) {
  if constexpr (op == Cmp::kEqual) return p == q;
  if constexpr (op == Cmp::kGreater) return p > q;
  if constexpr (op == Cmp::kLess) return p < q;
  if constexpr (op == Cmp::kGreaterOrEqual) return p >= q;
  if constexpr (op == Cmp::kLessOrEqual) return p <= q;
}

template <typename T, Cmp op>
Status CompareTyped(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor* y) {
  return RunBinary<T, T, bool>(ctx, a, b, y, 1, [](const T* x, bool xb, const T* z, bool zb, bool* out, int64_t n) {
    BinarySpan(x, xb, z, zb, out, n, [](const T& p, const T& q) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        return CompareOne<float, op>(ToCompute(p), ToCompute(q));
      } else {
        return CompareOne<T, op>(p, q);
      }
    });
  });
}

template <Cmp op>
class CompareKernel : public OpKernel {
 public:
  CompareKernel(const KernelInfo& info, const char* name) : legacy_(info), name_(name) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b_in, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(SameTypeOrError(*a, *b_in, name_));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor b, legacy_.Apply(*a, *b_in));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape(), b.shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kBool, shape));
    auto body = [&](auto tag) { return CompareTyped<decltype(tag), op>(ctx, *a, b, y); };
    if constexpr (op == Cmp::kEqual) {
      return DispatchType<ONNXFLOW_ALL_TYPES>(a->dtype(), body);
    } else {
      return DispatchType<ONNXFLOW_NUMERIC_TYPES>(a->dtype(), body);
    }
  }

 private:
  LegacyBroadcast legacy_;
  const char* name_;
};

template <Cmp op>
ONNXFLOW_REGISTRAR KernelFactory CompareFactory(const char* name) {
  KernelFactory make = Make<CompareKernel<op>>(name);
  if constexpr (op == Cmp::kEqual) return WithInputTypes<ONNXFLOW_ALL_TYPES>(0, make);
  return WithInputTypes<ONNXFLOW_NUMERIC_TYPES>(0, make);
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterCompareKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "Equal", 1, kOpenEnded, CompareFactory<Cmp::kEqual>("Equal")));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "Greater", 1, kOpenEnded, CompareFactory<Cmp::kGreater>("Greater")));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Less", 1, kOpenEnded, CompareFactory<Cmp::kLess>("Less")));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "GreaterOrEqual", 12, kOpenEnded,
                                             CompareFactory<Cmp::kGreaterOrEqual>("GreaterOrEqual")));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "LessOrEqual", 12, kOpenEnded, CompareFactory<Cmp::kLessOrEqual>("LessOrEqual")));
  return Status::Ok();
}

}  // namespace onnxflow
