// Transpose, and the two ops that are a reshape + transpose + reshape: DepthToSpace, SpaceToDepth.
#include <string>
#include <vector>

#include "ops/tensor/register.h"
#include "ops/tensor/permute.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

class TransposeKernel : public OpKernel {
 public:
  explicit TransposeKernel(const KernelInfo& info)
      : has_perm_(info.has_attribute("perm")), perm_(info.GetInts("perm")) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const int64_t rank = x->rank();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(rank);
      for (int64_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;  // default: reverse the dims
    }
    ONNXFLOW_RETURN_IF_ERROR(ValidatePermutation(perm, rank));
    Shape out_shape(rank);
    for (int64_t i = 0; i < rank; ++i) out_shape[i] = x->dim(perm[i]);
    // When the dims larger than 1 keep their relative order, the bytes are already in output
    // order: share them under the new shape.
    bool keeps_order = true;
    int64_t previous = -1;
    for (int64_t i = 0; i < rank; ++i) {
      if (x->dim(perm[i]) == 1) continue;
      keeps_order = keeps_order && perm[i] > previous;
      previous = perm[i];
    }
    if (keeps_order) {
      ctx.SetOutput(0, Value(x->Reshaped(std::move(out_shape))));
      return Status::Ok();
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), out_shape));
    return Permute(ctx, *x, x->shape(), perm, y);
  }

 private:
  bool has_perm_;
  std::vector<int64_t> perm_;
};

// The input must be 4-D [N, C, H, W] and a whole number of blocks.
Status CheckBlockInput(const Tensor& x, int64_t blocksize) {
  if (x.rank() != 4) return InvalidArgument("input must be 4-D [N,C,H,W], got " + ShapeToString(x.shape()));
  if (blocksize <= 0) return InvalidArgument("blocksize must be positive, got " + std::to_string(blocksize));
  return Status::Ok();
}

// DepthToSpace: DCR mode reads the channel as (blocky, blockx, c); CRD as (c, blocky, blockx).
class DepthToSpaceKernel : public OpKernel {
 public:
  explicit DepthToSpaceKernel(const KernelInfo& info)
      : blocksize_(info.GetInt("blocksize", 0)), crd_(info.GetString("mode", "DCR") == "CRD") {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(CheckBlockInput(*x, blocksize_));
    const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3), b = blocksize_;
    if (c % (b * b) != 0) {
      return InvalidArgument("channels " + std::to_string(c) + " are not a multiple of blocksize^2 = " +
                             std::to_string(b * b));
    }
    const int64_t oc = c / (b * b);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), {n, oc, h * b, w * b}));
    if (crd_) return Permute(ctx, *x, {n, oc, b, b, h, w}, {0, 1, 4, 2, 5, 3}, y);
    return Permute(ctx, *x, {n, b, b, oc, h, w}, {0, 3, 4, 1, 5, 2}, y);
  }

 private:
  int64_t blocksize_;
  bool crd_;
};

class SpaceToDepthKernel : public OpKernel {
 public:
  explicit SpaceToDepthKernel(const KernelInfo& info) : blocksize_(info.GetInt("blocksize", 0)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(CheckBlockInput(*x, blocksize_));
    const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3), b = blocksize_;
    if (h % b != 0 || w % b != 0) {
      return InvalidArgument("spatial dims " + std::to_string(h) + "x" + std::to_string(w) +
                             " are not multiples of blocksize " + std::to_string(b));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), {n, c * b * b, h / b, w / b}));
    return Permute(ctx, *x, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, y);
  }

 private:
  int64_t blocksize_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterTransposeKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Transpose", 1, kOpenEnded, Make<TransposeKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "DepthToSpace", 1, kOpenEnded, Make<DepthToSpaceKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "SpaceToDepth", 1, kOpenEnded, Make<SpaceToDepthKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
