// PRelu: y = x < 0 ? slope * x : x, with slope broadcast to x (numpy-style from opset 7;
// unidirectional: the output has x's shape). Float types and int32/int64/uint32/uint64 (opset 16).
#include <string>

#include "ops/activation/activation_simd.h"
#include "ops/activation/register.h"
#include "ops/elementwise/broadcast.h"
#include "ops/elementwise/common.h"
#include "ops/elementwise/float_simd.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

template <typename C>
C PReluOne(C x, C slope) {
  return x < C(0) ? x * slope : x;
}

class PReluKernel : public OpKernel {
 public:
  explicit PReluKernel(const KernelInfo& info) : legacy_channels_(info.opset() < 7) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* slope_in, ctx.RequireTensor(1));
    if (x->dtype() != slope_in->dtype()) {
      return InvalidArgument(std::string("PRelu: slope has type ") + DataTypeName(slope_in->dtype()) + ", X has " +
                             DataTypeName(x->dtype()));
    }
    Tensor slope = *slope_in;
    // Before opset 7 a 1-D slope of X's channel count applied per channel (axis 1).
    if (legacy_channels_ && slope.rank() == 1 && x->rank() >= 2 && slope.dim(0) == x->dim(1) &&
        slope.dim(0) != x->shape().back()) {
      Shape s(x->rank() - 1, 1);
      s[0] = slope.dim(0);
      slope = slope.Reshaped(s);
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(x->shape(), slope.shape()));
    if (shape != x->shape()) {
      return InvalidArgument("PRelu: slope of shape " + ShapeToString(slope_in->shape()) +
                             " does not broadcast to X's shape " + ShapeToString(x->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), shape));
    // Float in SIMD: the scalar select branches on each sign, which random-signed activations
    // mispredict half the time (ArcFace-R50's 25 PRelus over 8 M values, 112x112 input: 17.5 ms of
    // a 78 ms run at 1 thread, zoo_models.py).
    if (x->dtype() == DataType::kFloat) {
      return RunBinary<float, float, float>(ctx, *x, slope, y, 1, PReluFloat);
    }
    return DispatchType<ONNXFLOW_FLOAT_TYPES, int32_t, int64_t, uint32_t, uint64_t>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      return RunBinary<T, T, T>(ctx, *x, slope, y, 2, [](const T* a, bool ab, const T* b, bool bb, T* out, int64_t n) {
        BinarySpan(a, ab, b, bb, out, n, [](T p, T q) { return FromCompute<T>(PReluOne(ToCompute(p), ToCompute(q))); });
      });
    });
  }

 private:
  bool legacy_channels_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterPReluKernels(KernelRegistry& registry) {
  return registry.Register(
      kOnnxDomain, "PRelu", 1, kOpenEnded,
      WithInputTypes<ONNXFLOW_FLOAT_TYPES, int32_t, int64_t, uint32_t, uint64_t>(0, Make<PReluKernel>()));
}

}  // namespace onnxflow
