// And, Or, Xor (numpy-broadcast, bool) and Not.
#include "ops/elementwise/common.h"

namespace onnxflow {
namespace {

enum class Logic { kAnd, kOr, kXor };

Status RequireBool(const Tensor& t, const char* name) {
  if (t.dtype() == DataType::kBool) return Status::Ok();
  return InvalidArgument(std::string(name) + " takes bool inputs, not " + DataTypeName(t.dtype()));
}

class LogicalKernel : public OpKernel {
 public:
  LogicalKernel(const KernelInfo& info, Logic op, const char* name) : op_(op), legacy_(info), name_(name) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b_in, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(RequireBool(*a, name_));
    ONNXFLOW_RETURN_IF_ERROR(RequireBool(*b_in, name_));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor b, legacy_.Apply(*a, *b_in));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape(), b.shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kBool, shape));
    auto run = [&](auto fn) {
      return RunBinary<bool, bool, bool>(ctx, *a, b, y, 1,
                                         [&](const bool* x, bool xb, const bool* z, bool zb, bool* out, int64_t n) {
                                           BinarySpan(x, xb, z, zb, out, n, fn);
                                         });
    };
    switch (op_) {
      case Logic::kAnd:
        return run([](bool p, bool q) { return p && q; });
      case Logic::kOr:
        return run([](bool p, bool q) { return p || q; });
      case Logic::kXor:
        return run([](bool p, bool q) { return p != q; });
    }
    return Internal("unknown logical op");
  }

 private:
  Logic op_;
  LegacyBroadcast legacy_;
  const char* name_;
};

class NotKernel : public OpKernel {
 public:
  explicit NotKernel(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(RequireBool(*x, "Not"));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kBool, x->shape()));
    RunUnary<bool, bool>(ctx, *x, y, 1, [](const bool* in, bool* out, int64_t n) {
      for (int64_t i = 0; i < n; ++i) out[i] = !in[i];
    });
    return Status::Ok();
  }
};

ONNXFLOW_REGISTRAR KernelFactory LogicalFactory(Logic op, const char* name) {
  return WithInputTypes<bool>(0, Make<LogicalKernel>(op, name));
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterLogicalKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR((registry.Register(kOnnxDomain, "And", 1, kOpenEnded, LogicalFactory(Logic::kAnd, "And"))));
  ONNXFLOW_RETURN_IF_ERROR((registry.Register(kOnnxDomain, "Or", 1, kOpenEnded, LogicalFactory(Logic::kOr, "Or"))));
  ONNXFLOW_RETURN_IF_ERROR((registry.Register(kOnnxDomain, "Xor", 1, kOpenEnded, LogicalFactory(Logic::kXor, "Xor"))));
  ONNXFLOW_RETURN_IF_ERROR(
      (registry.Register(kOnnxDomain, "Not", 1, kOpenEnded, WithInputTypes<bool>(0, Make<NotKernel>()))));
  return Status::Ok();
}

}  // namespace onnxflow
