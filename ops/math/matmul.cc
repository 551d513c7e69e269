// MatMul (numpy matmul: 1-D operands, broadcast batch dims) and com.onnxflow FusedMatMul (the same
// plus, in the GEMM epilogue, an optional bias vector of N values as a third input and an
// activation). float/float16/bfloat16 run on the SIMD GEMM; a constant
// 2-D B is packed once at load. double and the integer types use a plain loop.
#include "ops/framework/internal_ops.h"
#include "ops/math/matmul.h"


#include "ops/framework/dispatch.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/math/constant_b.h"
#include "ops/math/float_view.h"
#include "ops/math/fused_activation.h"
#include "ops/math/gemm.h"

namespace onnxflow {

Result<MatMulShapes> ResolveMatMulShapes(const Shape& a_in, const Shape& b_in) {
  if (a_in.empty() || b_in.empty()) return InvalidArgument("MatMul operands must have rank >= 1");
  Shape a = a_in, b = b_in;
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  MatMulShapes s;
  s.m = a[a.size() - 2];
  s.k = a[a.size() - 1];
  s.n = b[b.size() - 1];
  if (b[b.size() - 2] != s.k) {
    return InvalidArgument("MatMul: inner dimensions differ, A " + ShapeToString(a_in) + " and B " +
                           ShapeToString(b_in));
  }
  s.a_batch.assign(a.begin(), a.end() - 2);
  s.b_batch.assign(b.begin(), b.end() - 2);
  ONNXFLOW_ASSIGN_OR_RETURN(s.batch, BroadcastShapes(s.a_batch, s.b_batch));
  s.output = s.batch;
  if (!a1) s.output.push_back(s.m);
  if (!b1) s.output.push_back(s.n);
  return s;
}

// BERT's 12 heads of 128 x 128 x 64 split each GEMM over the cores: 12 times a fork and a join for
// 20 microseconds of work.
int GemmThreadsPerBatch(int64_t batches, int64_t macs, int threads) {
  return batches >= 2 * static_cast<int64_t>(threads) || macs < (int64_t{1} << 20) ? 1 : threads;
}

std::vector<MatMulBatch> MatMulBatches(const MatMulShapes& s) {
  std::vector<MatMulBatch> out;
  const int64_t count = ElementCount(s.batch);
  const std::vector<int64_t> as = BroadcastStrides(s.a_batch, s.batch);
  const std::vector<int64_t> bs = BroadcastStrides(s.b_batch, s.batch);
  const int64_t rank = static_cast<int64_t>(s.batch.size());
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t ao = 0, bo = 0;
    for (int64_t d = 0; d < rank; ++d) {
      ao += idx[d] * as[d];
      bo += idx[d] * bs[d];
    }
    out.push_back({ao * s.m * s.k, bo * s.k * s.n, i * s.m * s.n});
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < s.batch[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

namespace {

class MatMulKernel : public OpKernel {
 public:
  MatMulKernel(const KernelInfo& info, ActivationSpec activation)
      : activation_(activation), constant_b_(info.constant_input(1), /*trans=*/false) {}

  // B packed at load goes with the graph (Plan::Build lets it go once every reader packed it).
  bool ReadsAtRun(int input) const override { return input != 1 || !constant_b_.held(); }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    // A B packed at load is not read at run (ReadsAtRun): its type and shape stand in for it.
    const Tensor* b = &constant_b_.described();
    if (!constant_b_.held()) {
      ONNXFLOW_ASSIGN_OR_RETURN(b, ctx.RequireTensor(1));
    }
    // A float A with a 16-bit B: a half model's MatMul after graph/half_compute, weights kept half.
    const bool widened_a = a->dtype() == DataType::kFloat && IsFloatLike(b->dtype());
    if (a->dtype() != b->dtype() && !widened_a) {
      return InvalidArgument(std::string("MatMul: A is ") + DataTypeName(a->dtype()) + " but B is " +
                             DataTypeName(b->dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a->shape(), b->shape()));
    // Every element is written below (the GEMM's tiles, or the integer loop's row stores).
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, a->dtype(), s.output));
    if (y->size() == 0) return Status::Ok();
    if (IsFloatLike(a->dtype())) return ComputeFloat(ctx, *a, *b, s, y);
    if (activation_.kind != Activation::kNone || ctx.input_tensor(2) != nullptr) {
      return Unimplemented("FusedMatMul supports float, float16 and bfloat16 only");
    }
    return DispatchType<double, int32_t, int64_t, uint32_t, uint64_t>(a->dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (const MatMulBatch& job : MatMulBatches(s)) {
        NaiveMatMul<T>(s.m, s.n, s.k, a->data<T>() + job.a, s.k, false, b->data<T>() + job.b, s.n, false,
                       y->mutable_data<T>() + job.y, s.n);
      }
      return Status::Ok();
    });
  }

 private:
  Status ComputeFloat(KernelContext& ctx, const Tensor& a, const Tensor& b, const MatMulShapes& s, Tensor* y) const {
    FloatScratch a_store, b_store, y_store;
    const float* ad = FloatData(a, a_store);
    float* yd = FloatOutput(y, y_store);
    GemmEpilogue epilogue;
    epilogue.activation = activation_;
    // FusedMatMul's optional bias: one value per column of the product.
    FloatScratch bias_store;
    if (const Tensor* bias = ctx.input_tensor(2); bias != nullptr) {
      if (bias->dtype() != a.dtype() || bias->rank() != 1 || bias->size() != s.n) {
        return InvalidArgument("FusedMatMul: bias must be a vector of A's type with " + std::to_string(s.n) +
                               " values, got " + DataTypeName(bias->dtype()) + " " + ShapeToString(bias->shape()));
      }
      epilogue.col_bias = FloatData(*bias, bias_store);
    }
    GemmInputB ib;
    const bool use_packed = constant_b_.Use(b, &ib);
    const float* bd = use_packed ? nullptr : FloatData(b, b_store);
    if (!use_packed) {
      ib.data = bd;
      ib.ld = s.n;
    }
    const int threads = ctx.threads();
    if (ElementCount(s.b_batch) == 1) {
      // One B for every batch: the batches of A stack into one tall GEMM.
      const int64_t rows = ElementCount(s.batch) * s.m;
      GemmInputA ia{nullptr, ad, s.k, false, 1.0f};
      Sgemm(rows, s.n, s.k, ia, ib, yd, s.n, epilogue, threads);
    } else {
      const std::vector<MatMulBatch> jobs = MatMulBatches(s);
      const int64_t macs = s.m * s.n * s.k;
      const int inner_threads = GemmThreadsPerBatch(static_cast<int64_t>(jobs.size()), macs, threads);
      ParallelFor(ctx, static_cast<int64_t>(jobs.size()), inner_threads > 1 ? 1 : macs, [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
          GemmInputA ia{nullptr, ad + jobs[j].a, s.k, false, 1.0f};
          GemmInputB jb{nullptr, bd + jobs[j].b, s.n, false};
          Sgemm(s.m, s.n, s.k, ia, jb, yd + jobs[j].y, s.n, epilogue, inner_threads);
        }
      });
    }
    StoreFloats(yd, y->size(), y);
    return Status::Ok();
  }

  ActivationSpec activation_;
  ConstantB constant_b_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMatMulKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "MatMul", 1, kOpenEnded, Make<MatMulKernel>(ActivationSpec{})));
  return registry.Register(kOnnxflowDomain, internal_ops::kFusedMatMul, internal_ops::kVersion, kOpenEnded,
                           [](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
                             ONNXFLOW_ASSIGN_OR_RETURN(ActivationSpec act, ParseFusedActivation(info));
                             return std::unique_ptr<OpKernel>(new MatMulKernel(info, act));
                           });
}

}  // namespace onnxflow
