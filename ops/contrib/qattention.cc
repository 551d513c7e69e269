// com.microsoft QAttention: Attention whose QKV projection is on 8-bit input and weights (what ONNX
// Runtime's dynamic quantization writes for an Attention node, after a DynamicQuantizeLinear of
// its input). Inputs: input (uint8/int8, (batch, seq, in)), weight (uint8/int8, (in, 3 * hidden)),
// bias (float or float16, 3 * hidden), input_scale (one value), weight_scale (1 or 3 * hidden),
// mask_index?, input_zero_point?, weight_zero_point? (1 or 3 * hidden), past?; outputs output
// (bias's type) and present?. The projection is the integer GEMM (ops/math/qgemm.h), dequantized
// as it stores: float(sum (x - zx)(w - zw)) * (input_scale * weight_scale[j]) + bias[j], the
// arithmetic of ONNX Runtime's kernel; the rest is Attention's (self_attention.h).
#include <memory>
#include <string>
#include <vector>

#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/contrib/self_attention.h"
#include "ops/framework/domains.h"
#include "ops/framework/shared_weights.h"
#include "ops/math/qgemm.h"

namespace onnxflow {
namespace contrib {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

int32_t ByteAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

struct PackedWeight {
  QPackedB packed;
  Tensor described;  // the weight's type and shape without data, checked in its place at run
};

class QAttentionKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<QAttentionKernel>(new QAttentionKernel());
    ONNXFLOW_ASSIGN_OR_RETURN(k->config_, SelfAttentionConfig::Parse(info, "QAttention"));
    const Tensor* w = info.constant_input(1);
    if (w != nullptr && Is8Bit(w->dtype()) && w->rank() == 2 && w->size() > 0) {
      k->packed_ = SharedWeights::Get<PackedWeight>(WeightKey("QAttention.W").Add(*w), [&] {
        PackedWeight p;
        p.packed = QPackB(w->raw_data(), w->dtype() == DataType::kInt8, w->dim(1), false, w->dim(0), w->dim(1));
        p.described = Tensor(w->dtype(), w->shape(), /*storage=*/nullptr, /*data=*/nullptr);
        return p;
      });
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }
  bool ReadsAtRun(int input) const override { return input != 1 || packed_ == nullptr; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const Tensor* w = packed_ != nullptr ? &packed_->described : nullptr;
    if (w == nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(w, ctx.RequireTensor(1));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* bias, ctx.RequireTensor(2));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireTensor(3));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* ws, ctx.RequireTensor(4));
    const Tensor *xz = ctx.input_tensor(6), *wz = ctx.input_tensor(7);
    if (!Is8Bit(x->dtype()) || !Is8Bit(w->dtype())) {
      return InvalidArgument("QAttention: input and weight must be uint8 or int8, got " + std::string(DataTypeName(x->dtype())) +
                             " and " + DataTypeName(w->dtype()));
    }
    if (x->rank() != 3 || w->rank() != 2 || w->dim(0) != x->dim(2)) {
      return InvalidArgument("QAttention: input must be (batch, sequence, hidden) and weight (hidden, 3 * hidden); got " +
                             ShapeToString(x->shape()) + " and " + ShapeToString(w->shape()));
    }
    const int64_t batch = x->dim(0), seq = x->dim(1), in = x->dim(2), width = w->dim(1);
    SelfAttentionConfig::Projected proj;
    ONNXFLOW_RETURN_IF_ERROR(config_.Split(width, &proj.qh, &proj.kh, &proj.vh));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*bias, "QAttention", "bias"));
    if (bias->size() != width) return InvalidArgument("QAttention: bias must have " + std::to_string(width) + " values");
    if (xs->size() != 1 || !IsFloatLike(xs->dtype())) return InvalidArgument("QAttention: input_scale must be one float");
    if ((ws->size() != 1 && ws->size() != width) || !IsFloatLike(ws->dtype())) {
      return InvalidArgument("QAttention: weight_scale must hold 1 or " + std::to_string(width) + " floats");
    }
    if (xz != nullptr && (xz->dtype() != x->dtype() || xz->size() != 1)) {
      return InvalidArgument("QAttention: input_zero_point must be one value of input's type");
    }
    if (wz != nullptr && (wz->dtype() != w->dtype() || (wz->size() != 1 && wz->size() != width))) {
      return InvalidArgument("QAttention: weight_zero_point must hold 1 or " + std::to_string(width) + " values of weight's type");
    }

    const FloatIn xsf(*xs), wsf(*ws), bf(*bias);
    std::vector<float> scale(width);
    for (int64_t j = 0; j < width; ++j) scale[j] = xsf.data[0] * wsf.data[ws->size() == 1 ? 0 : j];
    const int32_t za = xz != nullptr ? ByteAt(*xz, 0) : 0;
    std::vector<int32_t> zb(wz != nullptr ? wz->size() : 1, 0);
    for (int64_t j = 0; wz != nullptr && j < wz->size(); ++j) zb[j] = ByteAt(*wz, j);
    const QPackedA a = QPackA(x->raw_data(), x->dtype() == DataType::kInt8, in, batch * seq, in, ctx.threads());
    QPackedB local;
    if (packed_ == nullptr) local = QPackB(w->raw_data(), w->dtype() == DataType::kInt8, width, false, in, width, ctx.threads());
    QEpilogue ep;
    ep.kind = QOutput::kFloat;
    ep.scale_col = scale.data();
    ep.fbias_col = bf.data;
    std::vector<float> qkv(static_cast<size_t>(batch * seq * width));
    QGemm(a, packed_ != nullptr ? packed_->packed : local, QZeroPoints{&za, 1, zb.data(), static_cast<int64_t>(zb.size())}, ep,
          qkv.data(), width, ctx.threads());

    proj.qkv = qkv.data();
    proj.batch = batch;
    proj.seq = seq;
    proj.type = bias->dtype();
    proj.mask = ctx.input_tensor(5);
    proj.past = ctx.input_tensor(8);
    return config_.Attend(ctx, proj);
  }

 private:
  QAttentionKernel() = default;
  SelfAttentionConfig config_;
  std::shared_ptr<const PackedWeight> packed_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQAttention(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "QAttention", 1, kOpenEnded, Make<QAttentionKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
