// The one-input activations: Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Elu, Selu,
// Celu, Gelu (approximate = none | tanh), Mish, Softplus, Softsign, ThresholdedRelu, Shrink, Swish.
//
// One kernel class serves them all: the factory reads the op's attributes into ActParams once at
// load. float32 runs the Highway array function, float16/bfloat16 convert blocks to float and do
// the same, double uses the scalar definition, and the integer types that Relu and Shrink accept
// use plain loops.
#include <string>

#include "ops/activation/activation_simd.h"
#include "ops/activation/register.h"
#include "ops/elementwise/broadcast.h"
#include "ops/elementwise/common.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

// Rough per-element cost for ParallelFor.
int64_t Cost(ActOp op) {
  switch (op) {
    case ActOp::kRelu:
    case ActOp::kLeakyRelu:
    case ActOp::kHardSigmoid:
    case ActOp::kHardSwish:
    case ActOp::kThresholdedRelu:
    case ActOp::kShrink:
    case ActOp::kSoftsign:
    case ActOp::kClip:
      return 2;
    default:
      return 20;
  }
}

// double -> integer the way numpy's astype does on x86 for results outside T (x - bias can leave
// an unsigned range): through int64, wrapping; NaN and values outside int64 give 0.
template <typename T>
T DoubleToIntegerWrapping(double v) {
  if (!(v > -9.2233720368547758e18 && v < 9.2233720368547758e18)) return T{0};
  if constexpr (std::is_same_v<T, uint64_t>) {
    return v >= 0 ? static_cast<uint64_t>(v) : static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    return static_cast<T>(static_cast<int64_t>(v));
  }
}

class ActivationKernel : public OpKernel {
 public:
  ActivationKernel(ActOp op, ActParams params) : op_(op), params_(params) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    const ActOp op = op_;
    const ActParams p = params_;
    auto body = [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float>) {
        RunUnary<float, float>(ctx, *x, y, Cost(op),
                               [&](const float* in, float* out, int64_t n) { ActivationFloat(op, p, in, out, n); });
      } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        RunUnary<T, T>(ctx, *x, y, Cost(op) + 4, [&](const T* in, T* out, int64_t n) {
          UnarySpanViaFloat(in, out, n, [&](const float* a, float* b, int64_t m) { ActivationFloat(op, p, a, b, m); });
        });
      } else if constexpr (std::is_same_v<T, double>) {
        RunUnary<double, double>(ctx, *x, y, Cost(op), [&](const double* in, double* out, int64_t n) {
          for (int64_t i = 0; i < n; ++i) out[i] = ActivationScalar<double>(op, p, in[i]);
        });
      } else if (op == ActOp::kRelu) {
        RunUnary<T, T>(ctx, *x, y, 1, [](const T* in, T* out, int64_t n) {
          for (int64_t i = 0; i < n; ++i) out[i] = activation::Relu(in[i]);
        });
      } else {  // Shrink over integers: the arithmetic is done in double, like the float attributes.
        RunUnary<T, T>(ctx, *x, y, 4, [&](const T* in, T* out, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            out[i] = DoubleToIntegerWrapping<T>(ActivationScalar<double>(op, p, static_cast<double>(in[i])));
          }
        });
      }
      return Status::Ok();
    };
    if (op_ == ActOp::kRelu) {
      return DispatchType<ONNXFLOW_FLOAT_TYPES, int8_t, int16_t, int32_t, int64_t>(x->dtype(), body);
    }
    if (op_ == ActOp::kShrink) return DispatchType<ONNXFLOW_NUMERIC_TYPES>(x->dtype(), body);
    return DispatchType<ONNXFLOW_FLOAT_TYPES>(x->dtype(), body);
  }

 private:
  ActOp op_;
  ActParams params_;
};

// A factory that reads the op's attributes with `read(info, params)`.
// The input types are checked at load when known.
template <typename Read>
ONNXFLOW_REGISTRAR KernelFactory ActivationFactory(ActOp op, Read read) {
  KernelFactory make = [op, read](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    ActParams p;
    ActOp actual = op;
    ONNXFLOW_RETURN_IF_ERROR(read(info, p, actual));
    return std::unique_ptr<OpKernel>(new ActivationKernel(actual, p));
  };
  if (op == ActOp::kRelu) return WithInputTypes<ONNXFLOW_FLOAT_TYPES, int8_t, int16_t, int32_t, int64_t>(0, make);
  if (op == ActOp::kShrink) return WithInputTypes<ONNXFLOW_NUMERIC_TYPES>(0, make);
  return WithInputTypes<ONNXFLOW_FLOAT_TYPES>(0, make);
}

// The op's parameters from its attributes, with the ONNX defaults of the vocabulary
// (ops/framework/activation.h).
ONNXFLOW_REGISTRAR KernelFactory WithAttributes(ActOp op) {
  return ActivationFactory(op, [op](const KernelInfo& info, ActParams& p, ActOp&) {
    p = ReadActParams(*FindActivationOp(op),
                      [&](const char* name, float fallback) { return info.GetFloat(name, fallback); });
    return Status::Ok();
  });
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterPointwiseActivationKernels(KernelRegistry& registry) {
  auto reg = [&](ActOp op, KernelFactory factory) {
    const ActivationOpDef& def = *FindActivationOp(op);
    return registry.Register(kOnnxDomain, def.op_type, def.since, kOpenEnded, std::move(factory));
  };
  for (ActOp op : {ActOp::kRelu, ActOp::kLeakyRelu, ActOp::kSigmoid, ActOp::kHardSigmoid, ActOp::kHardSwish,
                   ActOp::kTanh, ActOp::kElu, ActOp::kSelu, ActOp::kMish, ActOp::kSoftplus, ActOp::kSoftsign,
                   ActOp::kThresholdedRelu, ActOp::kShrink, ActOp::kSwish}) {
    ONNXFLOW_RETURN_IF_ERROR(reg(op, WithAttributes(op)));
  }
  // ThresholdedRelu was an experimental op before ONNX defined it at opset 10, with the same
  // attribute (alpha, default 1); Keras conversions of opsets 7-9 use it.
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "ThresholdedRelu", 1, 9, WithAttributes(ActOp::kThresholdedRelu)));
  ONNXFLOW_RETURN_IF_ERROR(reg(ActOp::kCelu, ActivationFactory(ActOp::kCelu, [](const KernelInfo& info, ActParams& p, ActOp&) {
                                 p = ReadActParams(*FindActivationOp(ActOp::kCelu), [&](const char* name, float fallback) {
                                   return info.GetFloat(name, fallback);
                                 });
                                 if (p.alpha == 0.0f) return InvalidArgument("Celu: alpha must not be 0");
                                 return Status::Ok();
                               })));
  ONNXFLOW_RETURN_IF_ERROR(
      reg(ActOp::kGelu, ActivationFactory(ActOp::kGelu, [](const KernelInfo& info, ActParams&, ActOp& op) {
            const std::string approximate = info.GetString("approximate", "none");
            if (approximate == "tanh") {
              op = ActOp::kGeluTanh;
            } else if (approximate != "none") {
              return InvalidArgument("Gelu: approximate must be 'none' or 'tanh', not '" + approximate + "'");
            }
            return Status::Ok();
          })));
  return Status::Ok();
}

}  // namespace onnxflow
