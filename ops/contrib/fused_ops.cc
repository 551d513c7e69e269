// com.microsoft FusedConv and FusedGemm (ONNX Runtime's Conv/Gemm + activation fusions at the
// basic and extended levels) run on the com.onnxflow fused kernels of ops/math, whose epilogue
// applies the activation while the output tile is in cache; FusedMatMul and TransposeMatMul
// (MatMul with transposes and a scale folded in) on the float GEMM. Models saved at level 'all'
// carry ONNX Runtime's private NCHWc layout ops: refused with a message that says what to do.
#include <optional>

#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/math/fused_activation.h"
#include "ops/math/gemm.h"
#include "ops/math/matmul.h"

namespace onnxflow {
namespace contrib {
namespace {

// FusedConv's `activation_params` are the com.onnxflow epilogue's activation_alpha / activation_beta
// (FusedActivationSpec::FromOrtParams). The load's rules convert the node the same way
// (graph/ort_saved_forms.h); this adapter serves a run without them.
Status RewriteFusedConv(const onnx::NodeProto& from, onnx::NodeProto* to) {
  ONNXFLOW_ASSIGN_OR_RETURN(FusedActivationSpec spec, FusedActivationSpec::FromOrtParams(from));
  RemoveAttr(to, "activation_params");
  spec.WriteTo(*to);
  return Status::Ok();
}

// Y = alpha * op(A) x op(B), op = transpose of the last two dims when transA/transB; transBatchA/B
// first move dim 0 behind the other batch dims (A [d0, d1.., M, K] is read as [d1.., d0, M, K]...
// as ONNX Runtime defines it: the batch dims rotate, then the matrix dims apply).
class FusedMatMulKernel : public OpKernel {
 public:
  explicit FusedMatMulKernel(const KernelInfo& info)
      : alpha_(info.GetFloat("alpha", 1.0f)),
        trans_a_(info.GetInt("transA", 0) != 0),
        trans_b_(info.GetInt("transB", 0) != 0),
        trans_batch_a_(info.GetInt("transBatchA", 0) != 0),
        trans_batch_b_(info.GetInt("transBatchB", 0) != 0) {
    const Tensor* b = info.constant_input(1);
    if (b != nullptr && b->dtype() == DataType::kFloat && b->rank() == 2 && b->size() > 0 && !trans_batch_b_) {
      const int64_t k = trans_b_ ? b->dim(1) : b->dim(0), n = trans_b_ ? b->dim(0) : b->dim(1);
      packed_b_.emplace(PackB(b->data<float>(), b->dim(1), trans_b_, k, n));
      packed_shape_ = b->shape();
    }
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*a, "FusedMatMul", "A"));
    if (a->dtype() != b->dtype()) {
      return InvalidArgument(std::string("FusedMatMul: A is ") + DataTypeName(a->dtype()) + " but B is " +
                             DataTypeName(b->dtype()));
    }
    FloatIn ain(*a), bin(*b);
    std::vector<float> a_perm, b_perm;
    // transA / transB on a vector mean nothing (ONNX Runtime ignores them there too).
    const bool trans_a = trans_a_ && a->rank() >= 2, trans_b = trans_b_ && b->rank() >= 2;
    ONNXFLOW_ASSIGN_OR_RETURN(Shape sa, Operand(*a, trans_batch_a_, trans_a, ain.data, &a_perm, "A"));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape sb, Operand(*b, trans_batch_b_, trans_b, bin.data, &b_perm, "B"));
    const float* ad = a_perm.empty() ? ain.data : a_perm.data();
    const float* bd = b_perm.empty() ? bin.data : b_perm.data();
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(sa, sb));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, a->dtype(), s.output));
    if (y->size() == 0) return Status::Ok();
    FloatOut out(y);
    if (s.k == 0) {
      std::fill(out.data, out.data + y->size(), 0.0f);
      out.Finish();
      return Status::Ok();
    }
    // Stored operands: A is [K, M] per batch when transposed, B [N, K].
    const int64_t lda = trans_a ? s.m : s.k, ldb = trans_b ? s.k : s.n;
    GemmInputB packed;
    const bool use_packed = packed_b_.has_value() && b->dtype() == DataType::kFloat && b->shape() == packed_shape_;
    if (use_packed) packed.packed = &*packed_b_;
    const std::vector<MatMulBatch> jobs = MatMulBatches(s);
    const int threads = ctx.threads();
    if (ElementCount(s.b_batch) == 1 && !trans_a) {
      // One B for every batch: the batches of A stack into one tall GEMM.
      GemmInputA ia{nullptr, ad, lda, false, alpha_};
      GemmInputB ib = use_packed ? packed : GemmInputB{nullptr, bd, ldb, trans_b};
      Sgemm(ElementCount(s.batch) * s.m, s.n, s.k, ia, ib, out.data, s.n, GemmEpilogue{}, threads);
    } else {
      const int inner = GemmThreadsPerBatch(static_cast<int64_t>(jobs.size()), s.m * s.n * s.k, threads);
      ParallelFor(ctx, static_cast<int64_t>(jobs.size()), inner > 1 ? 1 : s.m * s.n * s.k, [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
          GemmInputA ia{nullptr, ad + jobs[j].a, lda, trans_a, alpha_};
          GemmInputB ib = use_packed ? packed : GemmInputB{nullptr, bd + jobs[j].b, ldb, trans_b};
          Sgemm(s.m, s.n, s.k, ia, ib, out.data + jobs[j].y, s.n, GemmEpilogue{}, inner);
        }
      });
    }
    out.Finish();
    return Status::Ok();
  }

 private:
  // The operand's logical shape (what plain MatMul would see); with transBatch, a rotated copy in
  // `perm` whose batches are contiguous like any other operand's.
  static Result<Shape> Operand(const Tensor& t, bool trans_batch, bool trans, const float* data,
                               std::vector<float>* perm, const char* name) {
    Shape shape = t.shape();
    if ((trans || trans_batch) && shape.size() < 2) {
      return InvalidArgument(std::string("FusedMatMul: ") + name + " of shape " + ShapeToString(shape) +
                             " cannot be transposed (rank < 2)");
    }
    if (trans_batch && shape.size() > 2) {
      // [d0, d1 .. dr-2, dr-1] -> [d1 .. dr-2, d0, dr-1]
      const size_t r = shape.size();
      const int64_t d0 = shape[0], mid = SizeFromDim(shape, 1) / shape[r - 1], last = shape[r - 1];
      perm->resize(static_cast<size_t>(t.size()));
      for (int64_t i = 0; i < d0; ++i) {
        for (int64_t j = 0; j < mid; ++j) {
          std::copy(data + (i * mid + j) * last, data + (i * mid + j + 1) * last, perm->data() + (j * d0 + i) * last);
        }
      }
      Shape rotated(shape.begin() + 1, shape.end() - 1);
      rotated.push_back(d0);
      rotated.push_back(last);
      shape = rotated;
    }
    if (trans) std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    return shape;
  }

  float alpha_;
  bool trans_a_, trans_b_, trans_batch_a_, trans_batch_b_;
  std::optional<PackedB> packed_b_;
  Shape packed_shape_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterFusedOps(KernelRegistry& registry) {
  ONNXFLOW_ASSIGN_OR_RETURN(KernelFactory conv, Adapt(registry, kOnnxflowDomain, "FusedConv", 1, RewriteFusedConv));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "FusedConv", 1, kOpenEnded, conv));
  // FusedGemm's attributes (Gemm's, activation, activation_alpha/beta) are the com.onnxflow op's.
  ONNXFLOW_ASSIGN_OR_RETURN(KernelFactory gemm, Adapt(registry, kOnnxflowDomain, "FusedGemm", 1, nullptr));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "FusedGemm", 1, kOpenEnded, gemm));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "FusedMatMul", 1, kOpenEnded, Make<FusedMatMulKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "TransposeMatMul", 1, kOpenEnded, Make<FusedMatMulKernel>()));
  // NhwcConv: Conv on channels-last X and Y (W stays [M, C/g, kh, kw]), written by ONNX Runtime's
  // layout transformer for some providers; not at the CPU basic/extended levels.

  // ONNX Runtime's NCHWc ops exist only in files saved at level 'all'; their blocked layout is
  // private to its CPU provider.
  static const char* const kNchwcOps[] = {"Conv", "MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool",
                                          "ReorderInput", "ReorderOutput", "Upsample"};
  for (const char* op : kNchwcOps) {
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(
        "com.microsoft.nchwc", op, 1, kOpenEnded, [](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> {
          // One text for every op, so a model's refusal gives it once.
          return Unimplemented("the domain com.microsoft.nchwc is ONNX Runtime's private NCHWc layout, written when a "
                               "model is saved at its 'all' level; save the model at the 'extended' level instead "
                               "(ort_optimize.js IN OUT extended, or GraphOptimizationLevel ORT_ENABLE_EXTENDED)");
        }));
  }
  return Status::Ok();
}

}  // namespace contrib
}  // namespace onnxflow
