// com.microsoft QMoE (version 1): MoE with experts quantized to 4 or 8 bits, as ONNX Runtime 1.30's
// CPU kernel computes it.
//
// Inputs: 0 input [rows, hidden] or [batch, seq, hidden] T; 1 router_probs [rows, E] T;
// 2 fc1_experts_weights uint8 [E, fc1, hidden / pack] (fc1 = inter, or 2 * inter for SwiGLU; pack =
// 8 / expert_weight_bits values a byte, the first in the low bits); 3 fc1_scales T; 4
// fc1_experts_bias T [E, fc1] (optional); 5 fc2_experts_weights uint8 [E, hidden, inter / pack];
// 6 fc2_scales; 7 fc2_experts_bias [E, hidden] (optional); 8-10 fc3 (refused); 11 fc1_zero_points,
// 12 fc2_zero_points uint8 (optional); 13 fc3_zero_points (refused); 14 router_weights [rows, E] T
// (optional: the routes' weights, routing.h). T is float or float16 (computed in float).
//
// Scales: block_size 0, one per row (output column): [E, n]; block_size b > 0, one per b values of
// a row: [E, n, ceil(k / b)]. Zero points, default 2^(bits - 1): 8 bits one byte each, laid out as
// the scales; 4 bits two a byte, low nibble first, per expert over the rows ([E, ceil(n / 2)]) or
// per row over the blocks ([E, n, ceil(blocks / 2)]). A weight is scale * (code - zero point).
//
// The codes are repacked once at load (when weights, scales and zero points are initializers) into
// MatMulNBits' float layout, one PackedNBits per expert, and stay 4 or 8 bits in memory; the
// kernels of ops/quant_ms dequantize in registers (experts.h). A row-wise scale is the scale of
// every kernel block of its row (blocks of up to 128 values, the row padded with zero codes).
//
// Refused: fc3 (ONNX Runtime's CPU kernel refuses it too), expert_weight_bits other than 4 and 8,
// a block_size that is not 0 or a power of 2 from 16 (as ONNX Runtime), SwiGLU not interleaved, the
// legacy weight shapes.
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/domains.h"
#include "ops/math/float_view.h"
#include "ops/moe/layer_spec.h"
#include "ops/moe/register.h"
#include "ops/moe/routing.h"

namespace onnxflow {
namespace moe {
namespace {

struct Quantization {
  int bits = 4;
  int64_t block_size = 0;  // the model's: 0 one scale per row
};

// The names of one projection's inputs, for messages.
struct ProjectionNames {
  const char* weights;
  const char* scales;
  const char* zero_points;
};

// The block of the kernel layout for a row of k values: the model's, or for row-wise scales a power
// of 2 from 16 up to 128 (so that a short row is not padded far), every block with the row's scale.
int64_t KernelBlock(const Quantization& q, int64_t k) {
  if (q.block_size > 0) return q.block_size;
  int64_t kb = 16;
  while (kb < 128 && kb < k) kb *= 2;
  return kb;
}

// One projection's codes, scales and zero points (checked) repacked per expert.
Status PackProjection(const ProjectionNames& names, const Quantization& q, const Tensor& w, const Tensor& s,
                      const Tensor* zp, int64_t experts, int64_t n, int64_t k, DataType type,
                      std::shared_ptr<const ExpertWeights>* out) {
  const int pack = 8 / q.bits;
  const int64_t row_bytes = k / pack;
  if (w.dtype() != DataType::kUint8 || w.rank() != 3 || w.dim(0) != experts || w.dim(1) != n ||
      w.dim(2) != row_bytes) {
    return InvalidArgument(std::string("input '") + names.weights + "' must be uint8 [" + std::to_string(experts) +
                           ", " + std::to_string(n) + ", " + std::to_string(row_bytes) + "], got " + Describe(w));
  }
  const int64_t mblocks = q.block_size > 0 ? (k + q.block_size - 1) / q.block_size : 1;
  const Shape scale_shape = q.block_size > 0 ? Shape{experts, n, mblocks} : Shape{experts, n};
  if (s.dtype() != type || s.shape() != scale_shape) {
    return InvalidArgument(std::string("input '") + names.scales + "' must be " + DataTypeName(type) + " " +
                           ShapeToString(scale_shape) + ", got " + Describe(s));
  }
  // Zero point bytes per expert: 8 bits as the scales; 4 bits two a byte along the last axis.
  const Shape zp_shape = q.block_size > 0 ? Shape{experts, n, (mblocks + pack - 1) / pack}
                                          : Shape{experts, (n + pack - 1) / pack};
  if (zp != nullptr && (zp->dtype() != DataType::kUint8 || zp->shape() != zp_shape)) {
    return InvalidArgument(std::string("input '") + names.zero_points + "' must be uint8 " + ShapeToString(zp_shape) +
                           ", got " + Describe(*zp));
  }
  const FloatIn scales(s);
  const uint8_t* codes = w.data<uint8_t>();
  const uint8_t* zeros = zp != nullptr ? zp->data<uint8_t>() : nullptr;
  const int64_t zp_row = q.block_size > 0 ? zp_shape[2] : 0, zp_expert = ElementCount(zp_shape) / experts;
  // The zero point of row j, model block b of expert e.
  auto zero_at = [&](int64_t e, int64_t j, int64_t b) -> uint8_t {
    const int64_t i = q.block_size > 0 ? b : j;
    const uint8_t byte = zeros[e * zp_expert + (q.block_size > 0 ? j * zp_row : 0) + i / pack];
    return q.bits == 8 ? byte : static_cast<uint8_t>((byte >> (4 * (i % 2))) & 15);
  };
  const int64_t kb = KernelBlock(q, k);
  std::vector<quant_ms::PackedNBits> packed(experts);
  for (int64_t e = 0; e < experts; ++e) {
    quant_ms::PackedNBits& p = packed[e];
    p.k = k;
    p.n = n;
    p.bits = q.bits;
    p.block_size = kb;
    p.blocks = (k + kb - 1) / kb;
    p.k_padded = p.blocks * kb;
    quant_ms::PackFloatLayoutCodes({codes + e * n * row_bytes, row_bytes, k, q.bits}, &p);
    p.scales.resize(n * p.blocks);
    if (zeros != nullptr) p.zero_bytes.resize(n * p.blocks);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t b = 0; b < p.blocks; ++b) {
        const int64_t mb = q.block_size > 0 ? b * kb / q.block_size : 0;
        p.scales[j * p.blocks + b] = scales.data[(e * n + j) * mblocks + mb];
        if (zeros != nullptr) p.zero_bytes[j * p.blocks + b] = zero_at(e, j, mb);
      }
    }
    if (zeros == nullptr) p.uniform_zero = 1 << (q.bits - 1);
  }
  *out = std::make_shared<NBitsExperts>(std::move(packed));
  return Status::Ok();
}

// Inputs 2-7, 11, 12 as tensors (null when absent).
struct LayerInputs {
  const Tensor *w1, *s1, *b1, *w2, *s2, *b2, *z1, *z2;
};

Status BuildLayer(const LayerInputs& in, const Quantization& q, const ActivationParams& act, ExpertLayer* layer) {
  const int pack = 8 / q.bits;
  if (in.w1->rank() != 3 || in.w2->rank() != 3) {
    return InvalidArgument("inputs 'fc1_experts_weights' and 'fc2_experts_weights' must be 3-D, got " +
                           Describe(*in.w1) + " and " + Describe(*in.w2));
  }
  const int64_t experts = in.w1->dim(0), hidden = in.w2->dim(1), inter = in.w2->dim(2) * pack;
  const int64_t n1 = act.type == Activation::kSwiGlu ? 2 * inter : inter;
  if (experts < 1 || hidden < 1 || inter < 1 || hidden % pack != 0) {
    return InvalidArgument("input 'fc2_experts_weights' must be uint8 [E, hidden, inter / " + std::to_string(pack) +
                           "] with hidden a multiple of " + std::to_string(pack) + ", got " + Describe(*in.w2));
  }
  if (in.w1->dim(1) == hidden && in.w1->dim(2) * pack == n1 && (in.w1->dim(1) != n1 || in.w1->dim(2) * pack != hidden)) {
    return Unimplemented("QMoE with the legacy weight layout fc1_experts_weights [E, hidden, inter / pack]");
  }
  const DataType type = in.s1->dtype();
  if (type != DataType::kFloat && type != DataType::kFloat16) {
    return InvalidArgument("input 'fc1_scales' must be float or float16, got " + Describe(*in.s1));
  }
  ONNXFLOW_RETURN_IF_ERROR(PackProjection({"fc1_experts_weights", "fc1_scales", "fc1_zero_points"}, q, *in.w1,
                                          *in.s1, in.z1, experts, n1, hidden, type, &layer->fc1));
  ONNXFLOW_RETURN_IF_ERROR(PackProjection({"fc2_experts_weights", "fc2_scales", "fc2_zero_points"}, q, *in.w2,
                                          *in.s2, in.z2, experts, hidden, inter, type, &layer->fc2));
  ONNXFLOW_RETURN_IF_ERROR(ReadBias(in.b1, "fc1_experts_bias", type, experts, n1, &layer->bias1));
  ONNXFLOW_RETURN_IF_ERROR(ReadBias(in.b2, "fc2_experts_bias", type, experts, hidden, &layer->bias2));
  layer->act = act;
  return Status::Ok();
}

// The layer inputs, in the order of LayerInputs.
constexpr int kLayerInputs[] = {2, 3, 4, 5, 6, 7, 11, 12};

class QMoEKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<QMoEKernel>(new QMoEKernel());
    ONNXFLOW_ASSIGN_OR_RETURN(k->attrs_, LayerAttributes::Parse(info, "QMoE"));
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t bits, info.RequireInt("expert_weight_bits"));
    if (bits != 4 && bits != 8) {
      return Unimplemented("QMoE with expert_weight_bits = " + std::to_string(bits) + " (4 and 8 run)");
    }
    k->q_.bits = static_cast<int>(bits);
    k->q_.block_size = info.GetInt("block_size", 0);
    const int64_t bs = k->q_.block_size;
    if (bs < 0 || (bs > 0 && (bs < 16 || (bs & (bs - 1)) != 0))) {  // as ONNX Runtime's CPU kernel
      return InvalidArgument("QMoE: attribute block_size must be 0 or a power of 2 from 16, got " + std::to_string(bs));
    }
    if (info.has_input(8) || info.has_input(9) || info.has_input(10) || info.has_input(13)) {
      return Unimplemented("QMoE with fc3 (fc3_experts_weights / scales / bias / zero points: the gated fc3; "
                           "ONNX Runtime's CPU kernel refuses it too)");
    }
    for (int i : {2, 3, 5, 6}) {
      if (!info.has_input(i)) return InvalidArgument("QMoE needs inputs 2, 3, 5 and 6 (fc1/fc2 weights and scales)");
    }
    const DataType t = info.input_type(0);
    if (t != DataType::kUndefined && t != DataType::kFloat && t != DataType::kFloat16) {
      return InvalidArgument(std::string("QMoE: input 'input' must be float or float16, got ") + DataTypeName(t));
    }
    bool constant = true;
    for (int i : kLayerInputs) constant = constant && (!info.has_input(i) || info.constant_input(i) != nullptr);
    if (constant) {
      auto layer = std::make_shared<ExpertLayer>();
      ONNXFLOW_RETURN_IF_ERROR(BuildLayer(Inputs([&](int i) { return info.constant_input(i); }), k->q_,
                                          k->attrs_.act, layer.get()));
      k->layer_ = std::move(layer);
      k->scale_type_ = info.constant_input(3)->dtype();
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  bool ReadsAtRun(int input) const override { return layer_ == nullptr || input < 2 || input == 14; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* router, ctx.RequireTensor(1));
    const ExpertLayer* layer = layer_.get();
    DataType type = scale_type_;
    ExpertLayer run_layer;
    if (layer == nullptr) {
      for (int i : {2, 3, 5, 6}) ONNXFLOW_RETURN_IF_ERROR(ctx.RequireTensor(i).status());
      ONNXFLOW_RETURN_IF_ERROR(BuildLayer(Inputs([&](int i) { return ctx.input_tensor(i); }), q_, attrs_.act, &run_layer));
      layer = &run_layer;
      type = ctx.input_tensor(3)->dtype();
    }
    if (input->dtype() != type) {
      return InvalidArgument("input 'input' must be of the scales' type " + std::string(DataTypeName(type)) +
                             ", got " + Describe(*input));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(RunDims d,
                              CheckActivations(*input, *router, layer->fc2->n(), layer->fc1->experts(), attrs_.k));
    const Tensor* rw = ctx.input_tensor(14);
    if (rw != nullptr && (rw->dtype() != type || rw->rank() != 2 || rw->dim(0) != d.tokens || rw->dim(1) != d.experts)) {
      return InvalidArgument("input 'router_weights' must be " + std::string(DataTypeName(type)) + " [" +
                             std::to_string(d.tokens) + ", " + std::to_string(d.experts) + "], got " + Describe(*rw));
    }
    return RouteAndRunExperts(ctx, *layer, *input, *router, rw, Routing::kSoftmaxTopK, d, attrs_);
  }

 private:
  QMoEKernel() = default;

  template <typename F>
  static LayerInputs Inputs(F get) {
    return {get(2), get(3), get(4), get(5), get(6), get(7), get(11), get(12)};
  }

  LayerAttributes attrs_;
  Quantization q_;
  std::shared_ptr<const ExpertLayer> layer_;  // null when an input of the layer is not a constant
  DataType scale_type_ = DataType::kUndefined;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQMoE(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "QMoE", 1, kOpenEnded, Make<QMoEKernel>());
}

}  // namespace moe
}  // namespace onnxflow
