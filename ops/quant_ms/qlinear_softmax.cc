// com.microsoft QLinearSoftmax (version 1): Y = quantize(Softmax(dequantize(X))). Inputs X,
// X_scale, x_zero_point?, y_scale, y_zero_point?; attributes axis and opset (the version of the
// Softmax the quantizer replaced): below 13 the input is a matrix [outer, D] split at axis, from 13
// on the softmax runs along axis alone. Without axis, -1 at every opset: ONNX Runtime fills in its
// schema's default (-1) when it resolves the graph, before the kernel, whose own fallback to 1 below
// opset 13 never sees a node without axis. (An opset-11 Softmax of rank 3 or more that relied on its
// default of 1 therefore runs on the last axis once quantized; this does what ONNX Runtime does.)
//
// The arithmetic is ONNX Runtime's (contrib_ops/cpu/quantization/qlinear_softmax.cc), so a model
// gives the bytes it gives there:
//  - exp(s * (x - max)) for the 256 possible distances max - x, in double, stored as float, each
//    multiplied by e^L with L = max(0, ln(FLT_MAX / D) - 5) so that the sum of a row of D stays
//    finite and far from underflow (s is X_scale; the zero point cancels out of x - max);
//  - per row a float sum in element order, then y = round_half_even(e * floor(1 / y_scale) / sum)
//    + y_zero_point saturated. The multiplier is floor(1 / y_scale), not 1 / y_scale: the
//    quantizer gives every Softmax output the scale 1/256, for which both are 256.
// One departure: ONNX Runtime's int8 path wraps a value above 127 around (with the quantizer's
// zero point -128, a probability of 1 comes out as -128); here it saturates to 127.
//
// The loops are lookups, one gather per element, so they stay scalar; rows (or, when axis is not
// the last, blocks of columns walked side by side) are split over cores.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/quant_ms/qparams.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace quant_ms {
namespace {

constexpr int64_t kSoftmaxPerAxisSince = 13;

// table[k] = e^L * exp(s * (k - 255)): k = 255 - (max - x) for every element x of a row.
void BuildExpTable(float x_scale, int64_t reduce_len, float table[256]) {
  const double headroom = std::log(FLT_MAX / static_cast<float>(reduce_len));
  const double shift = std::max(0.0, headroom - 5) / x_scale;
  for (int k = 0; k < 256; ++k) {
    table[k] = static_cast<float>(std::exp((static_cast<double>(k) - 255 + shift) * static_cast<double>(x_scale)));
  }
}

struct OutputParams {
  float multiplier;     // floor(1 / y_scale)
  float zero;           // y_zero_point
  float below, above;   // the type's range less the zero point
};

int32_t Quantize(float e, float sum, const OutputParams& p) {
  return RoundSaturateFinite(e * p.multiplier / sum, p.zero, p.below, p.above);
}

// `rows` contiguous rows of `len` elements.
template <typename T>
void SoftmaxRows(const T* x, T* y, int64_t rows, int64_t len, const float* table, const OutputParams& p) {
  for (int64_t r = 0; r < rows; ++r, x += len, y += len) {
    int32_t mx = x[0];
    for (int64_t i = 1; i < len; ++i) mx = std::max<int32_t>(mx, x[i]);
    const int32_t base = 255 - mx;  // base + x is in [0, 255] for every x <= mx
    float sum = 0;
    for (int64_t i = 0; i < len; ++i) sum += table[base + x[i]];
    for (int64_t i = 0; i < len; ++i) y[i] = static_cast<T>(Quantize(table[base + x[i]], sum, p));
  }
}

// Columns [0, cols) of a [len, stride] block: each column is one softmax, walked side by side so
// every read is a row of contiguous bytes. Each column sums in its own element order, as a row does.
constexpr int64_t kColumnBlock = 64;

template <typename T>
void SoftmaxColumns(const T* x, T* y, int64_t cols, int64_t len, int64_t stride, const float* table,
                    const OutputParams& p) {
  int32_t mx[kColumnBlock];
  float sum[kColumnBlock];
  for (int64_t j = 0; j < cols; ++j) mx[j] = x[j], sum[j] = 0;
  for (int64_t d = 1; d < len; ++d) {
    for (int64_t j = 0; j < cols; ++j) mx[j] = std::max<int32_t>(mx[j], x[d * stride + j]);
  }
  for (int64_t d = 0; d < len; ++d) {
    for (int64_t j = 0; j < cols; ++j) sum[j] += table[255 - mx[j] + x[d * stride + j]];
  }
  for (int64_t d = 0; d < len; ++d) {
    for (int64_t j = 0; j < cols; ++j) {
      y[d * stride + j] = static_cast<T>(Quantize(table[255 - mx[j] + x[d * stride + j]], sum[j], p));
    }
  }
}

// A scale the table can be built from: ONNX Runtime divides by both.
Status CheckScale(float scale, const char* name) {
  if (std::isfinite(scale) && scale > 0) return Status::Ok();
  return InvalidArgument(std::string("input '") + name + "' must be positive and finite, got " + std::to_string(scale));
}

class QLinearSoftmaxKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (!info.has_attribute("opset")) {
      return InvalidArgument("QLinearSoftmax requires attribute 'opset' (the version of the Softmax it replaces)");
    }
    const int64_t opset = info.GetInt("opset", 0);
    const int64_t axis = info.GetInt("axis", -1);
    return std::unique_ptr<OpKernel>(new QLinearSoftmaxKernel(opset >= kSoftmaxPerAxisSince, axis));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const DataType t = x->dtype();
    ONNXFLOW_RETURN_IF_ERROR(CheckQuantType(t, "X"));
    // x_zero_point is read for its checks only: it cancels out of x - max.
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qx, ReadQParams(ctx, 1, 2, t, "X_scale", "x_zero_point"));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qy, ReadQParams(ctx, 3, 4, t, "y_scale", "y_zero_point"));
    ONNXFLOW_RETURN_IF_ERROR(CheckScale(qx.scale, "X_scale"));
    ONNXFLOW_RETURN_IF_ERROR(CheckScale(qy.scale, "y_scale"));
    const Shape& shape = x->shape();
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, static_cast<int64_t>(shape.size())));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, t, shape));
    if (x->size() == 0) return Status::Ok();
    const int64_t outer = SizeToDim(shape, axis);
    const int64_t len = per_axis_ ? shape[axis] : SizeFromDim(shape, axis);
    const int64_t inner = per_axis_ ? SizeFromDim(shape, axis + 1) : 1;
    float table[256];
    BuildExpTable(qx.scale, len, table);
    OutputParams p;
    p.multiplier = std::floor(1.0f / qy.scale);
    p.zero = qy.zero;
    p.below = TypeMin(t) - qy.zero;
    p.above = TypeMax(t) - qy.zero;
    if (t == DataType::kUint8) return Run<uint8_t>(ctx, *x, y, outer, len, inner, table, p);
    return Run<int8_t>(ctx, *x, y, outer, len, inner, table, p);
  }

 private:
  QLinearSoftmaxKernel(bool per_axis, int64_t axis) : per_axis_(per_axis), axis_(axis) {}

  template <typename T>
  static Status Run(const KernelContext& ctx, const Tensor& x, Tensor* y, int64_t outer, int64_t len, int64_t inner,
                    const float* table, const OutputParams& p) {
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    // Three passes over each element: max, sum, quantize (a lookup and a division).
    const int64_t cost = 8 * len;
    if (inner == 1) {
      ParallelFor(ctx, outer, cost, [&](int64_t b, int64_t e) {
        SoftmaxRows(px + b * len, py + b * len, e - b, len, table, p);
      });
      return Status::Ok();
    }
    const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
    ParallelFor(ctx, outer * blocks, cost * std::min(inner, kColumnBlock), [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e; ++u) {
        const int64_t o = u / blocks, c0 = (u % blocks) * kColumnBlock;
        const int64_t base = o * len * inner + c0;
        SoftmaxColumns(px + base, py + base, std::min(kColumnBlock, inner - c0), len, inner, table, p);
      }
    });
    return Status::Ok();
  }

  bool per_axis_;
  int64_t axis_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQLinearSoftmax(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "QLinearSoftmax", 1, kOpenEnded, Make<QLinearSoftmaxKernel>());
}

}  // namespace quant_ms
}  // namespace onnxflow
