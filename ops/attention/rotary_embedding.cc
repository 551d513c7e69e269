// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim numbers of every head by
// position-dependent angles given as cos/sin caches.
//
// input is (B, H, S, D) or (B, S, H*D) (then num_heads is required). With position_ids (B, S) the
// caches are tables (max_position, rot/2) looked up per token; without, they are (B, S, rot/2).
// Pairs are (x[i], x[i + rot/2]) or, with interleaved=1, (x[2i], x[2i+1]):
//   x1' = cos * x1 - sin * x2,   x2' = sin * x1 + cos * x2.
#include <memory>
#include <string>
#include <vector>

#include "ops/attention/common.h"
#include "ops/attention/register.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/parallel.h"

namespace onnxflow {
namespace attention {
namespace {

class RotaryEmbeddingKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<RotaryEmbeddingKernel>();
    k->interleaved_ = info.GetInt("interleaved", 0) != 0;
    k->num_heads_ = info.GetInt("num_heads", 0);
    k->rotary_dim_ = info.GetInt("rotary_embedding_dim", 0);
    if (k->num_heads_ < 0) return InvalidArgument("num_heads must be positive, got " + std::to_string(k->num_heads_));
    if (k->rotary_dim_ < 0 || k->rotary_dim_ % 2 != 0) {
      return InvalidArgument("rotary_embedding_dim must be even and nonnegative, got " + std::to_string(k->rotary_dim_));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    return DispatchType<float, Float16, BFloat16, double>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      return ComputeTyped<T>(ctx);
    });
  }

 private:
  template <typename T>
  Status ComputeTyped(KernelContext& ctx) const;

  bool interleaved_ = false;
  int64_t num_heads_ = 0;
  int64_t rotary_dim_ = 0;
};

template <typename T>
Status RotaryEmbeddingKernel::ComputeTyped(KernelContext& ctx) const {
  using C = ComputeType<T>;
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* cos_cache, ctx.RequireTensor(1));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* sin_cache, ctx.RequireTensor(2));
  const Tensor* position_ids = ctx.input_tensor(3);

  int64_t batch, seq, heads, head_size;
  const bool rank3 = x->rank() == 3;
  if (rank3) {
    if (num_heads_ <= 0) return InvalidArgument("a 3D input needs the num_heads attribute");
    batch = x->dim(0);
    seq = x->dim(1);
    heads = num_heads_;
    if (x->dim(2) % heads != 0) {
      return InvalidArgument("input's hidden size " + std::to_string(x->dim(2)) + " is not a multiple of num_heads " +
                             std::to_string(heads));
    }
    head_size = x->dim(2) / heads;
  } else if (x->rank() == 4) {
    batch = x->dim(0);
    heads = x->dim(1);
    seq = x->dim(2);
    head_size = x->dim(3);
  } else {
    return InvalidArgument("input must be 3D or 4D, got shape " + ShapeToString(x->shape()));
  }
  const int64_t rot = rotary_dim_ == 0 ? head_size : rotary_dim_;
  if (rot > head_size || rot % 2 != 0) {
    return InvalidArgument("rotary_embedding_dim " + std::to_string(rot) + " must be even and at most the head size " +
                           std::to_string(head_size));
  }
  const int64_t half = rot / 2;

  if (cos_cache->shape() != sin_cache->shape()) {
    return InvalidArgument("cos_cache " + ShapeToString(cos_cache->shape()) + " and sin_cache " +
                           ShapeToString(sin_cache->shape()) + " must have the same shape");
  }
  const int64_t* pos = nullptr;
  int64_t max_pos = 0;
  if (position_ids != nullptr) {
    if (position_ids->dtype() != DataType::kInt64 || position_ids->shape() != Shape{batch, seq}) {
      return InvalidArgument("position_ids must be int64 of shape " + ShapeToString({batch, seq}) + ", got " +
                             ShapeToString(position_ids->shape()));
    }
    if (cos_cache->rank() != 2 || cos_cache->dim(1) != half) {
      return InvalidArgument("with position_ids, cos_cache must be (max_position, " + std::to_string(half) +
                             "), got " + ShapeToString(cos_cache->shape()));
    }
    pos = position_ids->data<int64_t>();
    max_pos = cos_cache->dim(0);
    for (int64_t i = 0; i < batch * seq; ++i) {
      if (pos[i] < 0 || pos[i] >= max_pos) {
        return OutOfRange("position_ids value " + std::to_string(pos[i]) + " is outside the cache's " +
                          std::to_string(max_pos) + " positions");
      }
    }
  } else if (cos_cache->shape() != Shape{batch, seq, half}) {
    return InvalidArgument("without position_ids, cos_cache must be " + ShapeToString({batch, seq, half}) + ", got " +
                           ShapeToString(cos_cache->shape()));
  }
  if (cos_cache->dtype() != x->dtype() || sin_cache->dtype() != x->dtype()) {
    return InvalidArgument("cos_cache and sin_cache must have the input's type");
  }

  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), x->shape()));
  const T* in = x->data<T>();
  T* out = y->mutable_data<T>();
  const T* cos_data = cos_cache->data<T>();
  const T* sin_data = sin_cache->data<T>();
  const int64_t head_stride = rank3 ? head_size : seq * head_size;
  const bool interleaved = interleaved_;

  ParallelFor(ctx, batch * seq, heads * head_size * 4, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / seq, s = row % seq;
      const int64_t cache_row = pos != nullptr ? pos[row] : row;
      const T* cos_row = cos_data + cache_row * half;
      const T* sin_row = sin_data + cache_row * half;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t base = rank3 ? (b * seq + s) * heads * head_size + h * head_size
                                   : (b * heads + h) * head_stride + s * head_size;
        const T* xi = in + base;
        T* yo = out + base;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = interleaved ? 2 * i : i;
          const int64_t i2 = interleaved ? 2 * i + 1 : i + half;
          const C c = ToCompute<T>(cos_row[i]), sn = ToCompute<T>(sin_row[i]);
          const C x1 = ToCompute<T>(xi[i1]), x2 = ToCompute<T>(xi[i2]);
          yo[i1] = FromCompute<T>(c * x1 - sn * x2);
          yo[i2] = FromCompute<T>(sn * x1 + c * x2);
        }
        for (int64_t i = rot; i < head_size; ++i) yo[i] = xi[i];
      }
    }
  });
  return Status::Ok();
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterRotaryEmbedding(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "RotaryEmbedding", 23, kOpenEnded, Make<RotaryEmbeddingKernel>());
}

}  // namespace attention
}  // namespace onnxflow
