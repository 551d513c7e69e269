// Gemm (Y = alpha * op(A) * op(B) + beta * C, all versions) and com.onnxflow FusedGemm (the same
// plus an activation). float/float16/bfloat16 run on the SIMD GEMM with C folded into the epilogue
// as a row or column bias when it is a vector; a constant B is packed once at load.
#include "ops/math/gemm_op.h"

#include "ops/framework/dispatch.h"
#include "ops/math/constant_b.h"
#include "ops/math/float_view.h"
#include "ops/math/fused_activation.h"
#include "ops/math/gemm.h"

namespace onnxflow {

Result<BiasShape> ResolveBias(const char* op, const Shape& c, int64_t m, int64_t n) {
  BiasShape b;
  if (c.size() > 2) return InvalidArgument(std::string(op) + ": C must have rank <= 2, got " + ShapeToString(c));
  if (c.size() == 2) b.rows = c[0];
  if (!c.empty()) b.cols = c.back();
  if ((b.rows != 1 && b.rows != m) || (b.cols != 1 && b.cols != n)) {
    return InvalidArgument(std::string(op) + ": C " + ShapeToString(c) + " does not broadcast to [" +
                           std::to_string(m) + "," + std::to_string(n) + "]");
  }
  return b;
}

namespace {

class GemmKernel : public OpKernel {
 public:
  GemmKernel(const KernelInfo& info, ActivationSpec activation)
      : activation_(activation),
        trans_a_(info.GetInt("transA", 0) != 0),
        trans_b_(info.GetInt("transB", 0) != 0),
        alpha_(info.GetFloat("alpha", 1.0f)),
        beta_(info.GetFloat("beta", 1.0f)),
        constant_b_(info.constant_input(1), trans_b_) {}

  // B packed at load goes with the graph (Plan::Build lets it go once every reader packed it).
  bool ReadsAtRun(int input) const override { return input != 1 || !constant_b_.held(); }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    // A B packed at load is not read at run (ReadsAtRun): its type and shape stand in for it.
    const Tensor* b = &constant_b_.described();
    if (!constant_b_.held()) {
      ONNXFLOW_ASSIGN_OR_RETURN(b, ctx.RequireTensor(1));
    }
    const Tensor* c = ctx.input_tensor(2);
    if (a->rank() != 2 || b->rank() != 2) {
      return InvalidArgument("Gemm: A " + ShapeToString(a->shape()) + " and B " + ShapeToString(b->shape()) +
                             " must be matrices");
    }
    // A float A with a 16-bit B: a half model's Gemm after graph/half_compute, weights kept half.
    const bool widened_a = a->dtype() == DataType::kFloat && IsFloatLike(b->dtype());
    if ((a->dtype() != b->dtype() && !widened_a) || (c != nullptr && c->dtype() != a->dtype())) {
      return InvalidArgument("Gemm: A, B and C must have the same type");
    }
    const int64_t m = trans_a_ ? a->dim(1) : a->dim(0), k = trans_a_ ? a->dim(0) : a->dim(1);
    const int64_t kb = trans_b_ ? b->dim(1) : b->dim(0), n = trans_b_ ? b->dim(0) : b->dim(1);
    if (k != kb) {
      return InvalidArgument("Gemm: inner dimensions differ, A " + ShapeToString(a->shape()) + " (transA=" +
                             std::to_string(trans_a_) + ") and B " + ShapeToString(b->shape()) +
                             " (transB=" + std::to_string(trans_b_) + ")");
    }
    BiasShape bias;
    const bool use_c = c != nullptr && beta_ != 0.0f;
    if (use_c) {
      ONNXFLOW_ASSIGN_OR_RETURN(bias, ResolveBias("Gemm", c->shape(), m, n));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, a->dtype(), {m, n}));
    if (y->size() == 0) return Status::Ok();
    if (IsFloatLike(a->dtype())) return ComputeFloat(ctx, *a, *b, use_c ? c : nullptr, bias, m, n, k, y);
    if (activation_.kind != Activation::kNone) {
      return Unimplemented("FusedGemm supports float, float16 and bfloat16 only");
    }
    return DispatchType<double, int32_t, int64_t, uint32_t, uint64_t>(a->dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* yd = y->mutable_data<T>();
      NaiveMatMul<T>(m, n, k, a->data<T>(), a->dim(1), trans_a_, b->data<T>(), b->dim(1), trans_b_, yd, n);
      // Integer products scale in double and convert back as C does (toward zero), as the spec's
      // reference computes alpha * (A B) + beta * C: alpha 0.5 converted to an int64 first made every
      // output 0. With alpha and beta 1 the sum stays in T, exact past double's 53 bits.
      const bool unit = alpha_ == 1.0f && (beta_ == 1.0f || !use_c);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const T p = yd[i * n + j];
          const T cv = use_c ? c->data<T>()[(bias.rows == 1 ? 0 : i) * bias.cols + (bias.cols == 1 ? 0 : j)] : T{0};
          if (unit) {
            yd[i * n + j] = p + cv;
          } else {
            double v = static_cast<double>(alpha_) * static_cast<double>(p);
            if (use_c) v += static_cast<double>(beta_) * static_cast<double>(cv);
            yd[i * n + j] = static_cast<T>(v);
          }
        }
      }
      return Status::Ok();
    });
  }

 private:
  Status ComputeFloat(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* c, BiasShape bias,
                      int64_t m, int64_t n, int64_t k, Tensor* y) const {
    FloatScratch a_store, b_store, c_store, y_store;
    std::vector<float> bias_store;
    float* yd = FloatOutput(y, y_store);
    GemmEpilogue epilogue;
    epilogue.activation = activation_;
    if (c != nullptr) {
      const float* cd = FloatData(*c, c_store);
      if (bias.rows == m && bias.cols == n && !(m == 1 || n == 1)) {
        for (int64_t i = 0; i < m * n; ++i) yd[i] = beta_ * cd[i];
        epilogue.accumulate = true;
      } else if (bias.rows == m && m > 1) {  // [M, 1] or [M, N] with N == 1
        bias_store.resize(m);
        for (int64_t i = 0; i < m; ++i) bias_store[i] = beta_ * cd[i];
        epilogue.row_bias = bias_store.data();
      } else {  // [N], [1, N], or a single value
        bias_store.resize(n);
        for (int64_t j = 0; j < n; ++j) bias_store[j] = beta_ * cd[bias.cols == 1 ? 0 : j];
        epilogue.col_bias = bias_store.data();
      }
    }
    GemmInputA ia{nullptr, FloatData(a, a_store), a.dim(1), trans_a_, alpha_};
    GemmInputB ib;
    if (!constant_b_.Use(b, &ib)) {
      ib.data = FloatData(b, b_store);
      ib.ld = b.dim(1);
      ib.trans = trans_b_;
    }
    Sgemm(m, n, k, ia, ib, yd, n, epilogue, ctx.threads());
    StoreFloats(yd, y->size(), y);
    return Status::Ok();
  }

  ActivationSpec activation_;
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  ConstantB constant_b_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterGemmKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Gemm", 1, kOpenEnded, Make<GemmKernel>(ActivationSpec{})));
  return registry.Register(kOnnxflowDomain, "FusedGemm", 1, kOpenEnded,
                           [](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
                             ONNXFLOW_ASSIGN_OR_RETURN(ActivationSpec act, ParseFusedActivation(info));
                             return std::unique_ptr<OpKernel>(new GemmKernel(info, act));
                           });
}

}  // namespace onnxflow
