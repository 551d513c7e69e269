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
  MatMulKernel(const KernelInfo& info, ActivationSpec activation, DataType y_type)
      : activation_(activation), y_type_(y_type), constant_b_(info.constant_input(1), /*trans=*/false) {}

  // B packed at load goes with the graph (Plan::Build lets it go once every reader packed it).
  bool ReadsAtRun(int input) const override { return input != 1 || !constant_b_.held(); }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    // A B packed at load is not read at run (ReadsAtRun): its type and shape stand in for it.
    const Tensor* b = &constant_b_.described();
    if (!constant_b_.held()) {
      ONNXFLOW_ASSIGN_OR_RETURN(b, ctx.RequireTensor(1));
    }
    // float, float16 and bfloat16 mix: a half model's MatMul after graph/half_compute has a float A
    // and 16-bit weights, and with its activations stored in half (graph/blocked_half), a 16-bit A
    // and either B; all compute in float.
    const bool float_like = IsFloatLike(a->dtype()) && IsFloatLike(b->dtype());
    if (a->dtype() != b->dtype() && !float_like) {
      return InvalidArgument(std::string("MatMul: A is ") + DataTypeName(a->dtype()) + " but B is " +
                             DataTypeName(b->dtype()));
    }
    if (y_type_ != DataType::kUndefined && !float_like) {
      return InvalidArgument(std::string("FusedMatMul: output_type needs float-like operands, A is ") +
                             DataTypeName(a->dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a->shape(), b->shape()));
    // Every element is written below (the GEMM's tiles, or the integer loop's row stores).
    const DataType y_type = y_type_ != DataType::kUndefined ? y_type_ : a->dtype();
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, y_type, s.output));
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
  // A and Y of 16 bits are read and written by the GEMM a block at a time (GemmInputA::half,
  // GemmEpilogue::half_c): no widened copy of either exists beside the tensor.
  Status ComputeFloat(KernelContext& ctx, const Tensor& a, const Tensor& b, const MatMulShapes& s, Tensor* y) const {
    GemmEpilogue epilogue;
    epilogue.activation = activation_;
    // FusedMatMul's optional bias: one value per column of the product.
    FloatScratch bias_store, b_store;
    if (const Tensor* bias = ctx.input_tensor(2); bias != nullptr) {
      if (!IsFloatLike(bias->dtype()) || bias->rank() != 1 || bias->size() != s.n) {
        return InvalidArgument("FusedMatMul: bias must be a float vector of " + std::to_string(s.n) + " values, got " +
                               DataTypeName(bias->dtype()) + " " + ShapeToString(bias->shape()));
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
    const bool a_half = a.dtype() != DataType::kFloat, y_half = y->dtype() != DataType::kFloat;
    epilogue.half_c_bf16 = y->dtype() == DataType::kBFloat16;
    // The product of A's rows from `a_offset` into Y's from `y_offset`.
    const auto product = [&](int64_t rows, int64_t a_offset, const GemmInputB& in_b, int64_t y_offset, int threads) {
      GemmInputA ia;
      ia.ld = s.k;
      if (a_half) {
        ia.half = static_cast<const uint16_t*>(a.raw_data()) + a_offset;
        ia.half_bf16 = a.dtype() == DataType::kBFloat16;
      } else {
        ia.data = a.data<float>() + a_offset;
      }
      GemmEpilogue e = epilogue;
      float* c = nullptr;
      if (y_half) {
        e.half_c = static_cast<uint16_t*>(y->mutable_raw_data()) + y_offset;
      } else {
        c = y->mutable_data<float>() + y_offset;
      }
      Sgemm(rows, s.n, s.k, ia, in_b, c, s.n, e, threads);
    };
    const int threads = ctx.threads();
    if (ElementCount(s.b_batch) == 1) {
      // One B for every batch: the batches of A stack into one tall GEMM.
      product(ElementCount(s.batch) * s.m, 0, ib, 0, threads);
    } else {
      const std::vector<MatMulBatch> jobs = MatMulBatches(s);
      const int64_t macs = s.m * s.n * s.k;
      const int inner_threads = GemmThreadsPerBatch(static_cast<int64_t>(jobs.size()), macs, threads);
      ParallelFor(ctx, static_cast<int64_t>(jobs.size()), inner_threads > 1 ? 1 : macs, [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
          product(s.m, jobs[j].a, GemmInputB{nullptr, bd + jobs[j].b, s.n, false}, jobs[j].y, inner_threads);
        }
      });
    }
    return Status::Ok();
  }

  ActivationSpec activation_;
  DataType y_type_;  // FusedMatMul's output_type; undefined: A's type
  ConstantB constant_b_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMatMulKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "MatMul", 1, kOpenEnded, Make<MatMulKernel>(ActivationSpec{}, DataType::kUndefined)));
  return registry.Register(kOnnxflowDomain, internal_ops::kFusedMatMul, internal_ops::kVersion, kOpenEnded,
                           [](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
                             ONNXFLOW_ASSIGN_OR_RETURN(ActivationSpec act, ParseFusedActivation(info));
                             // output_type: Y's type where graph/blocked_half chose it (FLOAT, or
                             // FLOAT16 for a float16 model's stored activations).
                             const int64_t t = info.GetInt("output_type", 0);
                             if (t != 0 && t != 1 && t != 10 && t != 16) {
                               return InvalidArgument("FusedMatMul: output_type must be FLOAT (1), FLOAT16 (10) or "
                                                      "BFLOAT16 (16), got " + std::to_string(t));
                             }
                             const DataType y = t == 0 ? DataType::kUndefined : static_cast<DataType>(t);
                             return std::unique_ptr<OpKernel>(new MatMulKernel(info, act, y));
                           });
}

}  // namespace onnxflow
