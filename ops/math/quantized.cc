// Integer and quantized linear algebra: MatMulInteger-10, QLinearMatMul-10/21, ConvInteger-10,
// QLinearConv-10. int8/uint8 operands, int32 accumulation of (x - zero_point) products; the
// QLinear ops requantize with round-half-to-even and saturate to the output type.
#include "ops/math/quantized.h"

#include <cmath>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/matmul.h"

namespace onnxflow {
namespace {

// Reads element i of an int8/uint8 tensor as int32 (0 for an absent tensor).
int32_t QuantAt(const Tensor* t, int64_t i) {
  if (t == nullptr) return 0;
  if (t->dtype() == DataType::kInt8) return t->data<int8_t>()[i];
  return t->data<uint8_t>()[i];
}

bool IsQuant8(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// A scale as the float the reference computes with; float16/bfloat16 round after every operation.
float ScaleAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat16: return HalfToFloat(t.data<Float16>()[i].bits);
    case DataType::kBFloat16: return BFloat16ToFloat(t.data<BFloat16>()[i].bits);
    default: return t.data<float>()[i];
  }
}
float RoundToType(DataType t, float v) {
  if (t == DataType::kFloat16) return HalfToFloat(FloatToHalf(v));
  if (t == DataType::kBFloat16) return BFloat16ToFloat(FloatToBFloat16(v));
  return v;
}

// Writes round(v) + zero, saturated, into element i of an int8/uint8 tensor.
void StoreQuant(Tensor* t, int64_t i, double v) {
  const double r = std::nearbyint(v);
  if (t->dtype() == DataType::kInt8) {
    t->mutable_data<int8_t>()[i] = static_cast<int8_t>(std::min(127.0, std::max(-128.0, r)));
  } else {
    t->mutable_data<uint8_t>()[i] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, r)));
  }
}

// A zero point or scale that is one value, or one per row (`rows`) / per column.
Status CheckPerAxis(const Tensor* t, int64_t count, const char* name) {
  if (t == nullptr || t->size() == 1 || t->size() == count) return Status::Ok();
  return InvalidArgument(std::string(name) + " has " + std::to_string(t->size()) + " values; expected 1 or " +
                         std::to_string(count));
}
int64_t PerAxis(const Tensor* t, int64_t i) { return t == nullptr || t->size() == 1 ? 0 : i; }

// int32 product of (a - a_zero) and (b - b_zero) for every matrix of a numpy-style matmul.
Status IntegerMatMul(const Tensor& a, const Tensor* a_zero, const Tensor& b, const Tensor* b_zero,
                     const MatMulShapes& s, std::vector<int32_t>* out) {
  ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(a_zero, s.m, "a_zero_point"));
  ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(b_zero, s.n, "b_zero_point"));
  out->assign(static_cast<size_t>(ElementCount(s.output)), 0);
  for (const MatMulBatch& job : MatMulBatches(s)) {
    for (int64_t i = 0; i < s.m; ++i) {
      const int32_t az = QuantAt(a_zero, PerAxis(a_zero, i));
      for (int64_t kk = 0; kk < s.k; ++kk) {
        const int32_t av = QuantAt(&a, job.a + i * s.k + kk) - az;
        if (av == 0) continue;
        int32_t* row = out->data() + job.y + i * s.n;
        for (int64_t j = 0; j < s.n; ++j) {
          row[j] += av * (QuantAt(&b, job.b + kk * s.n + j) - QuantAt(b_zero, PerAxis(b_zero, j)));
        }
      }
    }
  }
  return Status::Ok();
}

class MatMulIntegerKernel : public OpKernel {
 public:
  explicit MatMulIntegerKernel(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
    const Tensor* az = ctx.input_tensor(2);
    const Tensor* bz = ctx.input_tensor(3);
    if (!IsQuant8(a->dtype()) || !IsQuant8(b->dtype())) return InvalidArgument("MatMulInteger: A and B must be int8 or uint8");
    if ((az != nullptr && az->dtype() != a->dtype()) || (bz != nullptr && bz->dtype() != b->dtype())) {
      return InvalidArgument("MatMulInteger: zero points must have the type of their operand");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a->shape(), b->shape()));
    std::vector<int32_t> acc;
    ONNXFLOW_RETURN_IF_ERROR(IntegerMatMul(*a, az, *b, bz, s, &acc));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kInt32, s.output));
    std::copy(acc.begin(), acc.end(), y->mutable_data<int32_t>());
    return Status::Ok();
  }
};

class QLinearMatMulKernel : public OpKernel {
 public:
  explicit QLinearMatMulKernel(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* in[8];
    for (int i = 0; i < 8; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(in[i], ctx.RequireTensor(i));
    }
    const Tensor &a = *in[0], &as = *in[1], &b = *in[3], &bs = *in[4], &ys = *in[6], &yz = *in[7];
    if (!IsQuant8(a.dtype()) || !IsQuant8(b.dtype()) || !IsQuant8(yz.dtype())) {
      return Unimplemented("QLinearMatMul: only int8/uint8 operands are supported");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a.shape(), b.shape()));
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(&as, s.m, "a_scale"));
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(&bs, s.n, "b_scale"));
    if (ys.size() != 1 || yz.size() != 1) return InvalidArgument("QLinearMatMul: y_scale and y_zero_point must be scalars");
    std::vector<int32_t> acc;
    ONNXFLOW_RETURN_IF_ERROR(IntegerMatMul(a, in[2], b, in[5], s, &acc));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, yz.dtype(), s.output));
    const DataType st = as.dtype();
    const float y_scale = ScaleAt(ys, 0);
    const int32_t y_zero = QuantAt(&yz, 0);
    const int64_t per_matrix = s.m * s.n;
    for (int64_t idx = 0; idx < y->size(); ++idx) {
      const int64_t i = (idx % per_matrix) / s.n, j = idx % s.n;
      const float multiplier =
          RoundToType(st, RoundToType(st, ScaleAt(as, PerAxis(&as, i)) * ScaleAt(bs, PerAxis(&bs, j))) / y_scale);
      StoreQuant(y, idx, static_cast<double>(acc[idx]) * multiplier + y_zero);
    }
    return Status::Ok();
  }
};

// Shared by ConvInteger and QLinearConv: int32 convolution of (x - x_zero) and (w - w_zero[m]).
Status IntegerConv(const ConvAttributes& attrs, const Tensor& x, const Tensor* x_zero, const Tensor& w,
                   const Tensor* w_zero, const Tensor* bias, ConvGeometry* g, std::vector<int32_t>* out) {
  if (!IsQuant8(x.dtype()) || !IsQuant8(w.dtype())) return InvalidArgument("x and w must be int8 or uint8");
  ONNXFLOW_ASSIGN_OR_RETURN(*g, ComputeConvGeometry(attrs, x.shape(), w.shape()));
  if (x_zero != nullptr && x_zero->size() != 1) return InvalidArgument("x_zero_point must be a scalar");
  ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(w_zero, g->out_channels, "w_zero_point"));
  if (bias != nullptr && (bias->dtype() != DataType::kInt32 || bias->size() != g->out_channels)) {
    return InvalidArgument("B must be int32 with one value per output channel");
  }
  std::vector<int32_t> xs(x.size()), ws(w.size()), wz(g->out_channels);
  for (int64_t i = 0; i < x.size(); ++i) xs[i] = QuantAt(&x, i);
  for (int64_t i = 0; i < w.size(); ++i) ws[i] = QuantAt(&w, i);
  for (int64_t m = 0; m < g->out_channels; ++m) wz[m] = QuantAt(w_zero, PerAxis(w_zero, m));
  out->assign(static_cast<size_t>(ElementCount(g->output_shape())), 0);
  DirectConv<int32_t, int32_t, int32_t>(*g, xs.data(), ws.data(), bias != nullptr ? bias->data<int32_t>() : nullptr,
                                        QuantAt(x_zero, 0), wz.data(), out->data());
  return Status::Ok();
}

class ConvIntegerKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(ConvAttributes attrs, ParseConvAttributes(info));
    return std::unique_ptr<OpKernel>(new ConvIntegerKernel(std::move(attrs)));
  }
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
    ConvGeometry g;
    std::vector<int32_t> acc;
    ONNXFLOW_RETURN_IF_ERROR(IntegerConv(attrs_, *x, ctx.input_tensor(2), *w, ctx.input_tensor(3), nullptr, &g, &acc));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kInt32, g.output_shape()));
    std::copy(acc.begin(), acc.end(), y->mutable_data<int32_t>());
    return Status::Ok();
  }

 private:
  explicit ConvIntegerKernel(ConvAttributes attrs) : attrs_(std::move(attrs)) {}
  ConvAttributes attrs_;
};

class QLinearConvKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(ConvAttributes attrs, ParseConvAttributes(info));
    return std::unique_ptr<OpKernel>(new QLinearConvKernel(std::move(attrs)));
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* in[8];
    for (int i = 0; i < 8; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(in[i], ctx.RequireTensor(i));
    }
    const Tensor &xs = *in[1], &ws = *in[4], &ys = *in[6], &yz = *in[7];
    if (!IsQuant8(yz.dtype())) return InvalidArgument("QLinearConv: y_zero_point must be int8 or uint8");
    ConvGeometry g;
    std::vector<int32_t> acc;
    ONNXFLOW_RETURN_IF_ERROR(IntegerConv(attrs_, *in[0], in[2], *in[3], in[5], ctx.input_tensor(8), &g, &acc));
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(&ws, g.out_channels, "w_scale"));
    if (xs.size() != 1 || ys.size() != 1 || yz.size() != 1) {
      return InvalidArgument("QLinearConv: x_scale, y_scale and y_zero_point must be scalars");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, yz.dtype(), g.output_shape()));
    const int64_t out = g.out_size();
    const int32_t y_zero = QuantAt(&yz, 0);
    for (int64_t idx = 0; idx < y->size(); ++idx) {
      const int64_t m = (idx / out) % g.out_channels;
      const float multiplier = ScaleAt(xs, 0) * ScaleAt(ws, PerAxis(&ws, m)) / ScaleAt(ys, 0);
      StoreQuant(y, idx, static_cast<double>(acc[idx]) * multiplier + y_zero);
    }
    return Status::Ok();
  }

 private:
  explicit QLinearConvKernel(ConvAttributes attrs) : attrs_(std::move(attrs)) {}
  ConvAttributes attrs_;
};

}  // namespace

Status RegisterQuantizedMathKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "MatMulInteger", 10, kOpenEnded, Make<MatMulIntegerKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "QLinearMatMul", 10, kOpenEnded, Make<QLinearMatMulKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "ConvInteger", 10, kOpenEnded, Create<ConvIntegerKernel>()));
  return registry.Register(kOnnxDomain, "QLinearConv", 10, kOpenEnded, Create<QLinearConvKernel>());
}

}  // namespace onnxflow
