// Adagrad, Adam and Momentum from ai.onnx.preview.training (version 1): one update step for n
// tensors at once. Inputs are the learning rate R and step count T (scalars), then n tensors each
// of X, G and the optimizer's state (Adagrad: H; Adam: V, H; Momentum: V); outputs are the new X
// tensors followed by the new state tensors in the same order. With g' = G + norm_coefficient * X:
//   Adagrad:  H' = H + g'^2;  X' = X - R / (1 + T * decay_factor) * g' / (sqrt(H') + epsilon)
//   Adam:     V' = alpha V + (1 - alpha) g';  H' = beta H + (1 - beta) g'^2;
//             R' = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R;
//             X' = (1 - norm_coefficient_post) (X - R' V' / (sqrt(H') + epsilon))
//   Momentum: V' = alpha V + (T > 0 ? beta : 1) g';
//             X' = X - R V' (standard) or X - R (g' + alpha V') (nesterov)
// Arithmetic is in double; float and double tensors.
#include "ops/nn/optimizers.h"

#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

enum class Optimizer { kAdagrad, kAdam, kMomentum };

double ReadScalar(const Tensor& t) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[0];
    case DataType::kDouble: return t.data<double>()[0];
    case DataType::kInt64: return static_cast<double>(t.data<int64_t>()[0]);
    case DataType::kInt32: return t.data<int32_t>()[0];
    default: return NAN;
  }
}

class OptimizerKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, Optimizer kind) {
    auto* k = new OptimizerKernel;
    std::unique_ptr<OpKernel> owner(k);
    k->kind_ = kind;
    k->state_count_ = kind == Optimizer::kAdam ? 2 : 1;
    k->norm_coefficient_ = info.GetFloat("norm_coefficient", 0.0f);
    k->epsilon_ = info.GetFloat("epsilon", 0.0f);
    k->decay_factor_ = info.GetFloat("decay_factor", 0.0f);
    k->alpha_ = info.GetFloat("alpha", 0.9f);
    k->beta_ = info.GetFloat("beta", 0.999f);
    k->norm_coefficient_post_ = info.GetFloat("norm_coefficient_post", 0.0f);
    if (kind == Optimizer::kMomentum) {
      for (const char* required : {"alpha", "beta", "mode", "norm_coefficient"}) {
        if (!info.has_attribute(required)) return InvalidArgument(std::string("attribute '") + required + "' is required");
      }
      const std::string mode = info.GetString("mode", "standard");
      if (mode != "standard" && mode != "nesterov") return InvalidArgument("unknown mode '" + mode + "'");
      k->nesterov_ = mode == "nesterov";
    }
    const int per_tensor = 2 + k->state_count_;
    if (info.input_count() < 2 + per_tensor || (info.input_count() - 2) % per_tensor != 0) {
      return InvalidArgument("expected R, T and " + std::to_string(per_tensor) + " inputs per optimized tensor, got " +
                             std::to_string(info.input_count()) + " inputs");
    }
    return owner;
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* r_t, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t_t, ctx.RequireTensor(1));
    if (r_t->size() != 1 || t_t->size() != 1) return InvalidArgument("inputs 'R' and 'T' must be scalars");
    const double r = ReadScalar(*r_t);
    const double t = ReadScalar(*t_t);
    const int per_tensor = 2 + state_count_;
    const int n = (ctx.input_count() - 2) / per_tensor;
    for (int i = 0; i < n; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(2 + i));
      std::vector<const Tensor*> others;  // G, then the state tensors
      for (int k = 1; k < per_tensor; ++k) {
        ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* o, ctx.RequireTensor(2 + k * n + i));
        if (o->shape() != x->shape() || o->dtype() != x->dtype()) {
          return InvalidArgument("input " + std::to_string(2 + k * n + i) + " must match X " + ShapeToString(x->shape()));
        }
        others.push_back(o);
      }
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor* x_new, ctx.Allocate(i, x->dtype(), x->shape()));
      std::vector<Tensor*> state_new;
      for (int k = 0; k < state_count_; ++k) {
        ONNXFLOW_ASSIGN_OR_RETURN(Tensor* s, ctx.Allocate((k + 1) * n + i, x->dtype(), x->shape()));
        state_new.push_back(s);
      }
      ONNXFLOW_RETURN_IF_ERROR(DispatchType<float, double>(x->dtype(), [&](auto tag) {
        using T = decltype(tag);
        Update<T>(r, t, *x, others, x_new, state_new);
        return Status::Ok();
      }));
    }
    return Status::Ok();
  }

 private:
  template <typename T>
  void Update(double r, double t, const Tensor& x_t, const std::vector<const Tensor*>& others, Tensor* x_new_t,
              const std::vector<Tensor*>& state_new) const {
    const T* x = x_t.data<T>();
    const T* g = others[0]->data<T>();
    T* x_new = x_new_t->mutable_data<T>();
    const int64_t size = x_t.size();
    if (kind_ == Optimizer::kAdagrad) {
      const T* h = others[1]->data<T>();
      T* h_new = state_new[0]->mutable_data<T>();
      const double rate = r / (1 + t * decay_factor_);
      for (int64_t i = 0; i < size; ++i) {
        const double gr = norm_coefficient_ * static_cast<double>(x[i]) + g[i];
        const double hn = h[i] + gr * gr;
        h_new[i] = static_cast<T>(hn);
        x_new[i] = static_cast<T>(x[i] - rate * gr / (std::sqrt(hn) + epsilon_));
      }
    } else if (kind_ == Optimizer::kAdam) {
      const T* v = others[1]->data<T>();
      const T* h = others[2]->data<T>();
      T* v_new = state_new[0]->mutable_data<T>();
      T* h_new = state_new[1]->mutable_data<T>();
      const double rate = t > 0 ? r * std::sqrt(1 - std::pow(beta_, t)) / (1 - std::pow(alpha_, t)) : r;
      for (int64_t i = 0; i < size; ++i) {
        const double gr = norm_coefficient_ * static_cast<double>(x[i]) + g[i];
        const double vn = alpha_ * v[i] + (1 - alpha_) * gr;
        const double hn = beta_ * h[i] + (1 - beta_) * gr * gr;
        v_new[i] = static_cast<T>(vn);
        h_new[i] = static_cast<T>(hn);
        x_new[i] = static_cast<T>((1 - norm_coefficient_post_) * (x[i] - rate * vn / (std::sqrt(hn) + epsilon_)));
      }
    } else {
      const T* v = others[1]->data<T>();
      T* v_new = state_new[0]->mutable_data<T>();
      const double beta = t > 0 ? beta_ : 1.0;
      for (int64_t i = 0; i < size; ++i) {
        const double gr = norm_coefficient_ * static_cast<double>(x[i]) + g[i];
        const double vn = alpha_ * v[i] + beta * gr;
        v_new[i] = static_cast<T>(vn);
        x_new[i] = static_cast<T>(nesterov_ ? x[i] - r * (gr + alpha_ * vn) : x[i] - r * vn);
      }
    }
  }

  Optimizer kind_ = Optimizer::kAdagrad;
  int state_count_ = 1;
  double norm_coefficient_ = 0, epsilon_ = 0, decay_factor_ = 0, alpha_ = 0.9, beta_ = 0.999;
  double norm_coefficient_post_ = 0;
  bool nesterov_ = false;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterOptimizers(KernelRegistry& registry) {
  struct Op { const char* name; Optimizer kind; };
  for (const Op& op : {Op{"Adagrad", Optimizer::kAdagrad}, Op{"Adam", Optimizer::kAdam}, Op{"Momentum", Optimizer::kMomentum}}) {
    const Optimizer kind = op.kind;
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(kTrainingDomain, op.name, 1, kOpenEnded, Make<OptimizerKernel>(kind)));
  }
  return Status::Ok();
}

}  // namespace onnxflow
