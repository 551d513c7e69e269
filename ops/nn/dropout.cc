// Dropout (1, 6, 7, 10, 12, 13, 22).
//
// Inference (the default, and always before version 12): y is x itself (shared storage, no copy)
// and the optional mask is all true (bool since 10, x's type before). Since 12 the optional inputs
// ratio (default 0.5) and training_mode (default false) switch on training: each element is kept
// with probability 1 - ratio and scaled by 1 / (1 - ratio); ratio 0 keeps everything.
//
// With the `seed` attribute the draws are reproducible and follow numpy's legacy RandomState(seed):
// MT19937 seeded with the integer, each uniform built from two 32-bit draws with 53 random bits.
// Without a seed every run draws fresh randomness.
#include "ops/nn/register.h"

#include <algorithm>
#include <random>
#include <string>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

class DropoutKernel : public OpKernel {
 public:
  explicit DropoutKernel(const KernelInfo& info)
      : opset_(info.opset()),
        has_seed_(info.has_attribute("seed")),
        seed_(info.GetInt("seed", 0)),
        ratio_attribute_(info.GetFloat("ratio", 0.5f)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    float ratio = ratio_attribute_;
    bool training = false;
    if (opset_ >= 12) {
      ratio = 0.5f;
      if (const Tensor* r = ctx.input_tensor(1)) {
        if (r->size() != 1) return InvalidArgument("input 'ratio' must be a scalar, got " + ShapeToString(r->shape()));
        ONNXFLOW_RETURN_IF_ERROR(DispatchType<float, double, Float16, BFloat16>(r->dtype(), [&](auto tag) {
          using R = decltype(tag);
          ratio = static_cast<float>(ToCompute(r->data<R>()[0]));
          return Status::Ok();
        }));
      }
      if (const Tensor* t = ctx.input_tensor(2)) {
        if (t->size() != 1 || t->dtype() != DataType::kBool) {
          return InvalidArgument("input 'training_mode' must be a bool scalar");
        }
        training = t->data<bool>()[0];
      }
    }
    if (training && !(ratio >= 0.0f && ratio < 1.0f)) {
      return InvalidArgument("ratio must be in [0, 1), got " + std::to_string(ratio));
    }
    const bool mask_is_bool = opset_ >= 10;

    if (!training || ratio == 0.0f) {
      ctx.SetOutput(0, Value(*x));
      if (ctx.has_output(1)) {
        const DataType mask_type = mask_is_bool ? DataType::kBool : x->dtype();
        // Only the mask is new storage: all ones, written once without a zero fill first.
        ONNXFLOW_ASSIGN_OR_RETURN(Tensor* mask, ctx.AllocateUninitialized(1, mask_type, x->shape()));
        return DispatchType<bool, float, double, Float16, BFloat16>(mask_type, [&](auto tag) {
          using M = decltype(tag);
          M* m = mask->mutable_data<M>();
          std::fill(m, m + mask->size(), FromCompute<M>(ComputeType<M>(1)));
          return Status::Ok();
        });
      }
      return Status::Ok();
    }

    // The loop below writes every element of y and the mask.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    bool* mask = nullptr;
    if (ctx.has_output(1)) {
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor* m, ctx.AllocateUninitialized(1, DataType::kBool, x->shape()));
      mask = m->mutable_data<bool>();
    }
    std::mt19937 rng(has_seed_ ? static_cast<uint32_t>(seed_) : std::random_device{}());
    const double threshold = ratio;
    const float scale = 1.0f / (1.0f - ratio);
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x->data<T>();
      T* out = y->mutable_data<T>();
      for (int64_t i = 0; i < x->size(); ++i) {
        const uint32_t a = rng() >> 5, b = rng() >> 6;
        const double u = (a * 67108864.0 + b) / 9007199254740992.0;
        const bool keep = u >= threshold;
        out[i] = keep ? FromCompute<T>(static_cast<ComputeType<T>>(ToCompute(in[i]) * scale)) : FromCompute<T>(0);
        if (mask != nullptr) mask[i] = keep;
      }
      return Status::Ok();
    });
  }

 private:
  int opset_;
  bool has_seed_;
  int64_t seed_;
  float ratio_attribute_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDropout(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Dropout", 1, kOpenEnded, Make<DropoutKernel>());
}

}  // namespace onnxflow
