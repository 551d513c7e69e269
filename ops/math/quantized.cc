// Integer and quantized linear algebra: MatMulInteger-10, QLinearMatMul-10/21, ConvInteger-10,
// QLinearConv-10, and com.microsoft MatMulIntegerToFloat-1, DynamicQuantizeMatMul-1 and QGemm-1.
// int8/uint8 operands, int32 accumulation of (x - zero_point) products on the integer GEMM
// (qgemm.h), constant weights packed once at load; the QLinear ops requantize with
// round-half-to-even and saturate to the output type.
#include "ops/math/register.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "ops/framework/dispatch.h"
#include "ops/framework/domains.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shared_weights.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/float_view.h"
#include "ops/math/gemm.h"
#include "ops/math/gemm_op.h"
#include "ops/math/integer_depthwise.h"
#include "ops/math/matmul.h"
#include "ops/math/qgemm.h"
#include "ops/quant/quant_simd.h"

namespace onnxflow {
namespace {

// Reads element i of an int8/uint8 tensor as int32 (0 for an absent tensor).
int32_t QuantAt(const Tensor* t, int64_t i) {
  if (t == nullptr) return 0;
  if (t->dtype() == DataType::kInt8) return t->data<int8_t>()[i];
  return t->data<uint8_t>()[i];
}

bool IsQuant8(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// Scales are read with FloatAt (float_view.h); float16/bfloat16 round after every operation.
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

// Zero points as int32 (one 0 for an absent tensor).
std::vector<int32_t> ZeroPoints(const Tensor* t) {
  if (t == nullptr) return {0};
  std::vector<int32_t> z(static_cast<size_t>(std::max<int64_t>(t->size(), 1)), 0);
  for (int64_t i = 0; i < t->size(); ++i) z[i] = QuantAt(t, i);
  return z;
}

bool IsSigned8(const Tensor& t) { return t.dtype() == DataType::kInt8; }

// A constant 2-D 8-bit B (a MatMul's weight), packed at load.
struct PackedWeightB {
  QPackedB packed;
  DataType dtype = DataType::kUndefined;
  Shape shape;
  // B's type and shape without data: what the kernel checks in B's place, for a B packed at load
  // is not read at run (ReadsAtRun), and the session lets the int8 weights go.
  Tensor described;
};
// Shared by content with every kernel (of any session) packing the same B (shared_weights.h).
std::shared_ptr<const PackedWeightB> PackConstantB(const Tensor* b) {
  if (b == nullptr || !IsQuant8(b->dtype()) || b->rank() != 2 || b->size() == 0) return nullptr;
  return SharedWeights::Get<PackedWeightB>(WeightKey("QuantMatMul.B").Add(*b), [&] {
    PackedWeightB p;
    p.packed = QPackB(b->raw_data(), IsSigned8(*b), b->dim(1), false, b->dim(0), b->dim(1));
    p.dtype = b->dtype();
    p.shape = b->shape();
    p.described = Tensor(p.dtype, p.shape, /*storage=*/nullptr, /*data=*/nullptr);
    return p;
  });
}
const QPackedB* Usable(const std::shared_ptr<const PackedWeightB>& p, const Tensor& b) {
  return p != nullptr && p->dtype == b.dtype() && p->shape == b.shape() ? &p->packed : nullptr;
}
// Input `index`, B: the packed B's description when B was packed at load, else the input itself.
Result<const Tensor*> WeightB(KernelContext& ctx, int index, const std::shared_ptr<const PackedWeightB>& p) {
  if (p != nullptr) return &p->described;
  return ctx.RequireTensor(index);
}

// Y = epilogue((A - a_zero) * (B - b_zero)) for a numpy-style matmul of 8-bit A and B. scale_row,
// when set, holds one value per row of A's matrices (M).
// Zero points: one value, one per row of A / column of B, or one row (column) set per batch matrix
// of a batched operand ([D.., M, 1] / [D.., 1, N], as the spec allows).
Status QuantMatMul(KernelContext& ctx, const Tensor& a, const Tensor* a_zero, const Tensor& b, const Tensor* b_zero,
                   const QPackedB* packed_b, const MatMulShapes& s, QEpilogue ep, const std::vector<float>* scale_row,
                   void* y, size_t elem) {
  const int64_t a_mats = ElementCount(s.a_batch), b_mats = ElementCount(s.b_batch);
  const bool a_zero_batched = a_zero != nullptr && a_mats > 1 && a_zero->size() == a_mats * s.m;
  const bool b_zero_batched = b_zero != nullptr && b_mats > 1 && b_zero->size() == b_mats * s.n;
  if (!a_zero_batched) ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(a_zero, s.m, "a_zero_point"));
  if (!b_zero_batched) ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(b_zero, s.n, "b_zero_point"));
  if (ElementCount(s.output) == 0) return Status::Ok();
  const std::vector<int32_t> za = ZeroPoints(a_zero), zb = ZeroPoints(b_zero);
  const int threads = ctx.threads();
  const uint8_t* ad = static_cast<const uint8_t*>(a.raw_data());
  const uint8_t* bd = static_cast<const uint8_t*>(b.raw_data());
  uint8_t* yd = static_cast<uint8_t*>(y);
  if (b_mats == 1 && a_mats == ElementCount(s.batch) && !a_zero_batched) {
    // One B for every batch: the batches of A stack into one tall GEMM; per-row values repeat.
    const int64_t rows = ElementCount(s.batch) * s.m;
    std::vector<int32_t> za_rows;
    std::vector<float> scale_rows;
    QZeroPoints zero{za.data(), static_cast<int64_t>(za.size()), zb.data(), static_cast<int64_t>(zb.size())};
    if (za.size() > 1 && rows != s.m) {
      za_rows.resize(rows);
      for (int64_t i = 0; i < rows; ++i) za_rows[i] = za[i % s.m];
      zero.a = za_rows.data();
      zero.a_count = rows;
    }
    if (scale_row != nullptr) {
      scale_rows.resize(rows);
      for (int64_t i = 0; i < rows; ++i) scale_rows[i] = (*scale_row)[i % s.m];
      ep.scale_row = scale_rows.data();
    }
    const QPackedA pa = QPackA(ad, IsSigned8(a), s.k, rows, s.k, threads);
    QPackedB local;
    if (packed_b == nullptr) {
      local = QPackB(bd, IsSigned8(b), s.n, false, s.k, s.n, threads);
      packed_b = &local;
    }
    QGemm(pa, *packed_b, zero, ep, y, s.n, threads);
    return Status::Ok();
  }
  if (scale_row != nullptr) ep.scale_row = scale_row->data();
  for (const MatMulBatch& job : MatMulBatches(s)) {
    QZeroPoints zero{za.data(), static_cast<int64_t>(za.size()), zb.data(), static_cast<int64_t>(zb.size())};
    if (a_zero_batched) {  // the job's matrix of A (job.a is its element offset)
      zero.a = za.data() + job.a / (s.m * s.k) * s.m;
      zero.a_count = s.m;
    }
    if (b_zero_batched) {
      zero.b = zb.data() + job.b / (s.k * s.n) * s.n;
      zero.b_count = s.n;
    }
    const QPackedA pa = QPackA(ad + job.a, IsSigned8(a), s.k, s.m, s.k, threads);
    const QPackedB pb = QPackB(bd + job.b, IsSigned8(b), s.n, false, s.k, s.n, threads);
    QGemm(pa, pb, zero, ep, yd + job.y * elem, s.n, threads);
  }
  return Status::Ok();
}

class MatMulIntegerKernel : public OpKernel {
 public:
  explicit MatMulIntegerKernel(const KernelInfo& info) : packed_b_(PackConstantB(info.constant_input(1))) {}
  bool ReadsAtRun(int input) const override { return input != 1 || packed_b_ == nullptr; }
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, WeightB(ctx, 1, packed_b_));
    const Tensor* az = ctx.input_tensor(2);
    const Tensor* bz = ctx.input_tensor(3);
    if (!IsQuant8(a->dtype()) || !IsQuant8(b->dtype())) return InvalidArgument("MatMulInteger: A and B must be int8 or uint8");
    if ((az != nullptr && az->dtype() != a->dtype()) || (bz != nullptr && bz->dtype() != b->dtype())) {
      return InvalidArgument("MatMulInteger: zero points must have the type of their operand");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a->shape(), b->shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kInt32, s.output));
    return QuantMatMul(ctx, *a, az, *b, bz, Usable(packed_b_, *b), s, QEpilogue{}, nullptr, y->mutable_raw_data(), 4);
  }

 private:
  std::shared_ptr<const PackedWeightB> packed_b_;
};

class QLinearMatMulKernel : public OpKernel {
 public:
  explicit QLinearMatMulKernel(const KernelInfo& info) : packed_b_(PackConstantB(info.constant_input(3))) {}
  bool ReadsAtRun(int input) const override { return input != 3 || packed_b_ == nullptr; }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* in[8];
    for (int i = 0; i < 8; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(in[i], i == 3 ? WeightB(ctx, 3, packed_b_) : ctx.RequireTensor(i));
    }
    const Tensor &a = *in[0], &as = *in[1], &b = *in[3], &bs = *in[4], &ys = *in[6], &yz = *in[7];
    if (!IsQuant8(a.dtype()) || !IsQuant8(b.dtype()) || !IsQuant8(yz.dtype())) {
      return Unimplemented("QLinearMatMul: only int8/uint8 operands are supported");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a.shape(), b.shape()));
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(&as, s.m, "a_scale"));
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(&bs, s.n, "b_scale"));
    if (ys.size() != 1 || yz.size() != 1) return InvalidArgument("QLinearMatMul: y_scale and y_zero_point must be scalars");
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, yz.dtype(), s.output));
    // multiplier(i, j) = a_scale * b_scale / y_scale; with one a_scale the product is formed per
    // column in the scales' type, as the reference does.
    const DataType st = as.dtype();
    std::vector<float> scale_col(s.n), scale_row;
    if (as.size() == 1) {
      for (int64_t j = 0; j < s.n; ++j) scale_col[j] = RoundToType(st, FloatAt(as, 0) * FloatAt(bs, PerAxis(&bs, j)));
    } else {
      for (int64_t j = 0; j < s.n; ++j) scale_col[j] = FloatAt(bs, PerAxis(&bs, j));
      scale_row.resize(s.m);
      for (int64_t i = 0; i < s.m; ++i) scale_row[i] = FloatAt(as, i);
    }
    QEpilogue ep;
    ep.kind = yz.dtype() == DataType::kInt8 ? QOutput::kInt8 : QOutput::kUint8;
    ep.scale_col = scale_col.data();
    ep.out_scale = FloatAt(ys, 0);
    ep.out_zero = QuantAt(&yz, 0);
    return QuantMatMul(ctx, a, in[2], b, in[5], Usable(packed_b_, b), s, ep, scale_row.empty() ? nullptr : &scale_row,
                       y->mutable_raw_data(), 1);
  }

 private:
  std::shared_ptr<const PackedWeightB> packed_b_;
};

// com.microsoft MatMulIntegerToFloat: (A - a_zero)(B - b_zero) * a_scale * b_scale (+ bias), in the
// scales' type (float, or float16 / bfloat16 computed in float).
class MatMulIntegerToFloatKernel : public OpKernel {
 public:
  explicit MatMulIntegerToFloatKernel(const KernelInfo& info) : packed_b_(PackConstantB(info.constant_input(1))) {}
  bool ReadsAtRun(int input) const override { return input != 1 || packed_b_ == nullptr; }
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, WeightB(ctx, 1, packed_b_));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* as, ctx.RequireTensor(2));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* bs, ctx.RequireTensor(3));
    if (!IsQuant8(a->dtype()) || !IsQuant8(b->dtype())) {
      return InvalidArgument("MatMulIntegerToFloat: A and B must be int8 or uint8");
    }
    if (!IsFloatLike(as->dtype()) || bs->dtype() != as->dtype()) {
      return InvalidArgument(std::string("MatMulIntegerToFloat: a_scale and b_scale must both be float, float16 or "
                                         "bfloat16, got ") + DataTypeName(as->dtype()) + " and " + DataTypeName(bs->dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a->shape(), b->shape()));
    if (as->size() != 1) return InvalidArgument("MatMulIntegerToFloat: a_scale must be a scalar");
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(bs, s.n, "b_scale"));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, as->dtype(), s.output));
    return RunToFloat(ctx, *a, ctx.input_tensor(4), *b, ctx.input_tensor(5), FloatIn(*as).data[0], *bs,
                      ctx.input_tensor(6), Usable(packed_b_, *b), s, y);
  }

  // Shared with DynamicQuantizeMatMul. y (and bias) have b_scale's float-like type.
  static Status RunToFloat(KernelContext& ctx, const Tensor& a, const Tensor* az, const Tensor& b, const Tensor* bz,
                           float a_scale, const Tensor& bs, const Tensor* bias, const QPackedB* packed,
                           const MatMulShapes& s, Tensor* y) {
    const FloatIn b_scale(bs);
    std::vector<float> scale_col(s.n);
    for (int64_t j = 0; j < s.n; ++j) scale_col[j] = a_scale * b_scale.data[PerAxis(&bs, j)];
    QEpilogue ep;
    ep.kind = QOutput::kFloat;
    ep.scale_col = scale_col.data();
    std::optional<FloatIn> bias_in;
    if (bias != nullptr) {
      if (bias->dtype() != y->dtype() || bias->size() != s.n) {
        return InvalidArgument("bias must be " + std::string(DataTypeName(y->dtype())) + " with " +
                               std::to_string(s.n) + " values, got " + DataTypeName(bias->dtype()) + " " +
                               ShapeToString(bias->shape()));
      }
      ep.fbias_col = bias_in.emplace(*bias).data;
    }
    FloatOut out(y);
    ONNXFLOW_RETURN_IF_ERROR(QuantMatMul(ctx, a, az, b, bz, packed, s, ep, nullptr, out.data, 4));
    out.Finish();
    return Status::Ok();
  }

 private:
  std::shared_ptr<const PackedWeightB> packed_b_;
};

// com.microsoft DynamicQuantizeMatMul: A (float) quantized to uint8 as DynamicQuantizeLinear does,
// then MatMulIntegerToFloat with B, b_scale, b_zero_point and bias.
class DynamicQuantizeMatMulKernel : public OpKernel {
 public:
  explicit DynamicQuantizeMatMulKernel(const KernelInfo& info) : packed_b_(PackConstantB(info.constant_input(1))) {}
  bool ReadsAtRun(int input) const override { return input != 1 || packed_b_ == nullptr; }
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, WeightB(ctx, 1, packed_b_));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* bs, ctx.RequireTensor(2));
    if (a->dtype() != DataType::kFloat) return InvalidArgument("DynamicQuantizeMatMul: A must be float");
    if (!IsQuant8(b->dtype())) return InvalidArgument("DynamicQuantizeMatMul: B must be int8 or uint8");
    if (bs->dtype() != DataType::kFloat) return InvalidArgument("DynamicQuantizeMatMul: b_scale must be float");
    const Tensor* bz = ctx.input_tensor(3);
    if (bz != nullptr && bz->dtype() != b->dtype()) {
      return InvalidArgument("DynamicQuantizeMatMul: b_zero_point must have B's type");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a->shape(), b->shape()));
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(bs, s.n, "b_scale"));
    // DynamicQuantizeLinear's arithmetic: the range widened to 0, scale = range / 255, zero point
    // round(-min / scale), values round-half-even and saturated.
    const int64_t n = a->size();
    float lo = 0.0f, hi = 0.0f;
    FloatRangeWithZero(a->data<float>(), n, &lo, &hi);
    float scale = 1.0f, zero_point = 0.0f;
    DynamicUint8Params(lo, hi, &scale, &zero_point);
    Tensor qa(DataType::kUint8, a->shape());
    uint8_t* qd = qa.mutable_data<uint8_t>();
    const float* ad = a->data<float>();
    ParallelFor(ctx.threads(), n, MacCost(4), [&](int64_t begin, int64_t end) {
      QuantizeFloatToUint8(ad + begin, end - begin, scale, zero_point, qd + begin);
    });
    Tensor az(DataType::kUint8, Shape{});
    az.mutable_data<uint8_t>()[0] = static_cast<uint8_t>(zero_point);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, s.output));
    return MatMulIntegerToFloatKernel::RunToFloat(ctx, qa, &az, *b, bz, scale, *bs, ctx.input_tensor(4),
                                                  Usable(packed_b_, *b), s, y);
  }

 private:
  std::shared_ptr<const PackedWeightB> packed_b_;
};

// A convolution's weight packed per group as the GEMM's A (rows = output channels of the group,
// K = channels x kernel taps).
struct PackedConvWeight {
  std::vector<QPackedA> groups;
  DataType dtype = DataType::kUndefined;
  Shape shape;
};
std::vector<QPackedA> PackConvWeight(const Tensor& w, int64_t group) {
  const int64_t m = w.dim(0), mg = m / group, k = w.size() / std::max<int64_t>(m, 1);
  std::vector<QPackedA> out;
  const uint8_t* wd = static_cast<const uint8_t*>(w.raw_data());
  for (int64_t g = 0; g < group; ++g) out.push_back(QPackA(wd + g * mg * k, IsSigned8(w), k, mg, k));
  return out;
}
// Shared by content with every kernel (of any session) packing the same W (shared_weights.h).
std::shared_ptr<const PackedConvWeight> PackConstantConvWeight(const Tensor* w, int64_t group) {
  if (w == nullptr || !IsQuant8(w->dtype()) || w->rank() < 3 || w->size() == 0 || group <= 0 || w->dim(0) % group != 0) {
    return nullptr;
  }
  return SharedWeights::Get<PackedConvWeight>(WeightKey("QuantConv.W").Add(*w).Add(group), [&] {
    PackedConvWeight p;
    p.groups = PackConvWeight(*w, group);
    p.dtype = w->dtype();
    p.shape = w->shape();
    return p;
  });
}

// Unfolds columns [p0, p0 + cols) (output positions) of one group of one image into dst, row r =
// (channel, tap) of cols bytes; positions outside the image hold `pad` (the input's zero point,
// which contributes nothing).
void Im2ColBytes(const ConvGeometry& g, const uint8_t* image, int64_t channels, int64_t p0, int64_t cols, uint8_t pad,
                 uint8_t* dst) {
  const int64_t nd = static_cast<int64_t>(g.kernel.size());
  const int64_t ksize = g.kernel_size(), in_size = g.in_size();
  if (nd == 2) {
    const int64_t ih_n = g.in_spatial[0], iw_n = g.in_spatial[1], ow_n = g.out_spatial[1];
    const int64_t kw_n = g.kernel[1], sh = g.strides[0], sw = g.strides[1];
    for (int64_t r = 0; r < channels * ksize; ++r) {
      const int64_t c = r / ksize, kh = (r % ksize) / kw_n, kw = r % kw_n;
      const uint8_t* img = image + c * in_size;
      uint8_t* d = dst + r * cols;
      int64_t oh = p0 / ow_n, ow = p0 % ow_n;
      for (int64_t j = 0; j < cols;) {
        const int64_t run = std::min(ow_n - ow, cols - j);
        const int64_t ih = oh * sh - g.pads_begin[0] + kh * g.dilations[0];
        const int64_t iw0 = ow * sw - g.pads_begin[1] + kw * g.dilations[1];
        if (ih < 0 || ih >= ih_n) {
          std::memset(d + j, pad, run);
        } else if (sw == 1) {
          const uint8_t* row = img + ih * iw_n;
          // Positions t with 0 <= iw0 + t < iw_n copy; the rest pad.
          const int64_t lo = std::clamp<int64_t>(-iw0, 0, run), hi = std::clamp<int64_t>(iw_n - iw0, lo, run);
          if (lo > 0) std::memset(d + j, pad, lo);
          if (hi > lo) std::memcpy(d + j + lo, row + iw0 + lo, hi - lo);
          if (run > hi) std::memset(d + j + hi, pad, run - hi);
        } else {
          const uint8_t* row = img + ih * iw_n;
          for (int64_t t = 0; t < run; ++t) {
            const int64_t iw = iw0 + t * sw;
            d[j + t] = iw >= 0 && iw < iw_n ? row[iw] : pad;
          }
        }
        j += run;
        ow = 0;
        ++oh;
      }
    }
    return;
  }
  std::vector<int64_t> kpos(nd), opos(nd);
  for (int64_t r = 0; r < channels * ksize; ++r) {
    const int64_t c = r / ksize;
    int64_t krem = r % ksize;
    for (int64_t d = nd - 1; d >= 0; --d) { kpos[d] = krem % g.kernel[d]; krem /= g.kernel[d]; }
    for (int64_t j = 0; j < cols; ++j) {
      int64_t rem = p0 + j, offset = 0;
      for (int64_t d = nd - 1; d >= 0; --d) { opos[d] = rem % g.out_spatial[d]; rem /= g.out_spatial[d]; }
      bool inside = true;
      for (int64_t d = 0; d < nd && inside; ++d) {
        const int64_t i = opos[d] * g.strides[d] - g.pads_begin[d] + kpos[d] * g.dilations[d];
        inside = i >= 0 && i < g.in_spatial[d];
        offset = offset * g.in_spatial[d] + i;
      }
      dst[r * cols + j] = inside ? image[c * in_size + offset] : pad;
    }
  }
}

// Each thread's unfolded block and its packed form, grown to the largest seen.
thread_local std::vector<uint8_t> tls_columns;
thread_local QPackedB tls_packed_cols;

// Output channels per group up to which a convolution's column blocks, not its rows, go to the
// cores when there are few blocks: a dynamic-uint8 MobileNetV2 (16..144 channels at 112 x 112 and
// 56 x 56) 3.6% faster at two threads (5 alternated rounds); wider layers keep the row split.
constexpr int64_t kFewChannels = 128;

// y = epilogue(conv(x - x_zero, w - w_zero)) on the integer GEMM: per image and group, W (M/group
// x K) times the unfolded input in blocks of output positions that fit L2. ep's per-row arrays
// hold one value per output channel.
Status QuantConv(KernelContext& ctx, const ConvGeometry& g, const Tensor& x, const Tensor* x_zero, const Tensor& w,
                 const Tensor* w_zero, const std::vector<QPackedA>* packed_w, const QEpilogue& ep, void* y,
                 size_t elem) {
  const int64_t m = g.out_channels, mg = m / g.group, cg = g.in_channels / g.group;
  const int64_t ksize = g.kernel_size(), k = cg * ksize, out = g.out_size(), in_size = g.in_size();
  if (ElementCount(g.output_shape()) == 0) return Status::Ok();
  const bool plain_int32 = ep.kind == QOutput::kInt32 && ep.bias_row == nullptr && ep.bias_col == nullptr;
  if (plain_int32 && UsesIntegerDepthwise(g)) {  // ConvInteger's depthwise layers
    IntegerDepthwiseConv(g, x, QuantAt(x_zero, 0), w, ZeroPoints(w_zero), static_cast<int32_t*>(y), ctx.threads());
    return Status::Ok();
  }
  std::vector<QPackedA> local_w;
  if (packed_w == nullptr) {
    local_w = PackConvWeight(w, g.group);
    packed_w = &local_w;
  }
  const std::vector<int32_t> wz = ZeroPoints(w_zero);
  const int32_t xz = QuantAt(x_zero, 0);
  const bool x_signed = IsSigned8(x);
  const bool pointwise = IsPointwise(g);
  const int threads = ctx.threads();
  int64_t chunk = std::max<int64_t>(kQNr, (int64_t{256} << 10) / std::max<int64_t>(k, 1) / kQNr * kQNr);
  // Unfolding and packing a block of columns is serial within its job and, for the few output
  // channels of a mobile network's wide layers (K and M 16..96 at 112 x 112), costs more than the
  // products: with fewer jobs than two per core, smaller blocks, so that every core packs.
  const int64_t planes = g.batch * g.group;
  if (threads > 1 && mg <= kFewChannels && planes * ((out + chunk - 1) / chunk) < 2 * threads) {
    const int64_t per_plane = (2 * threads + planes - 1) / planes;
    chunk = std::max(kQNr, ((out + per_plane - 1) / per_plane + kQNr - 1) / kQNr * kQNr);
  }
  const int64_t chunks = (out + chunk - 1) / chunk;
  const int64_t jobs = planes * chunks;
  const bool jobs_parallel = threads > 1 && jobs >= 2 * threads;
  const int inner = jobs_parallel ? 1 : threads;
  const uint8_t* xd = static_cast<const uint8_t*>(x.raw_data());
  auto body = [&](int64_t j0, int64_t j1) {
    for (int64_t job = j0; job < j1; ++job) {
      const int64_t ch = job % chunks, gi = (job / chunks) % g.group, n = job / chunks / g.group;
      const int64_t p0 = ch * chunk, cols = std::min(chunk, out - p0);
      const uint8_t* xg = xd + (n * g.in_channels + gi * cg) * in_size;
      if (pointwise) {
        QPackBInto(xg + p0, x_signed, in_size, false, k, cols, &tls_packed_cols);
      } else {
        if (tls_columns.size() < static_cast<size_t>(k * cols)) tls_columns.resize(k * cols);
        Im2ColBytes(g, xg, cg, p0, cols, static_cast<uint8_t>(xz), tls_columns.data());
        QPackBInto(tls_columns.data(), x_signed, cols, false, k, cols, &tls_packed_cols);
      }
      QEpilogue e = ep;
      if (e.bias_row != nullptr) e.bias_row += gi * mg;
      if (e.scale_row != nullptr) e.scale_row += gi * mg;
      const QZeroPoints zero{wz.size() > 1 ? wz.data() + gi * mg : wz.data(), wz.size() > 1 ? mg : 1, &xz, 1};
      uint8_t* yo = static_cast<uint8_t*>(y) + ((n * m + gi * mg) * out + p0) * elem;
      QGemm((*packed_w)[gi], tls_packed_cols, zero, e, yo, out, inner);
    }
  };
  if (jobs_parallel) {
    ParallelFor(threads, jobs, MacCost(mg * k * chunk), body);
  } else {
    body(0, jobs);
  }
  return Status::Ok();
}

// Checks shared by ConvInteger and QLinearConv.
Status CheckConvOperands(const ConvGeometry& g, const Tensor& x, const Tensor* x_zero, const Tensor& w,
                         const Tensor* w_zero) {
  if (!IsQuant8(x.dtype()) || !IsQuant8(w.dtype())) return InvalidArgument("x and w must be int8 or uint8");
  if (x_zero != nullptr && x_zero->size() != 1) return InvalidArgument("x_zero_point must be a scalar");
  return CheckPerAxis(w_zero, g.out_channels, "w_zero_point");
}

class ConvIntegerKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(ConvAttributes attrs, ParseConvAttributes(info));
    // A depthwise W is read as it is (IntegerDepthwiseConv), not packed for the GEMM.
    const Tensor* w = info.constant_input(1);
    const bool depthwise = w != nullptr && IsIntegerDepthwiseWeight(w->shape(), attrs.group);
    auto packed = depthwise ? nullptr : PackConstantConvWeight(w, attrs.group);
    return std::unique_ptr<OpKernel>(new ConvIntegerKernel(std::move(attrs), std::move(packed)));
  }
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
    const Tensor* xz = ctx.input_tensor(2);
    const Tensor* wz = ctx.input_tensor(3);
    ONNXFLOW_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs_, x->shape(), w->shape()));
    ONNXFLOW_RETURN_IF_ERROR(CheckConvOperands(g, *x, xz, *w, wz));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kInt32, g.output_shape()));
    const bool use_packed = packed_ != nullptr && packed_->dtype == w->dtype() && packed_->shape == w->shape();
    return QuantConv(ctx, g, *x, xz, *w, wz, use_packed ? &packed_->groups : nullptr, QEpilogue{},
                     y->mutable_raw_data(), 4);
  }

 private:
  ConvIntegerKernel(ConvAttributes attrs, std::shared_ptr<const PackedConvWeight> packed)
      : attrs_(std::move(attrs)), packed_(std::move(packed)) {}
  ConvAttributes attrs_;
  std::shared_ptr<const PackedConvWeight> packed_;
};

class QLinearConvKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(ConvAttributes attrs, ParseConvAttributes(info));
    auto packed = PackConstantConvWeight(info.constant_input(3), attrs.group);
    return std::unique_ptr<OpKernel>(new QLinearConvKernel(std::move(attrs), std::move(packed)));
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor* in[8];
    for (int i = 0; i < 8; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(in[i], ctx.RequireTensor(i));
    }
    const Tensor &x = *in[0], &xs = *in[1], &w = *in[3], &ws = *in[4], &ys = *in[6], &yz = *in[7];
    if (!IsQuant8(yz.dtype())) return InvalidArgument("QLinearConv: y_zero_point must be int8 or uint8");
    ONNXFLOW_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs_, x.shape(), w.shape()));
    ONNXFLOW_RETURN_IF_ERROR(CheckConvOperands(g, x, in[2], w, in[5]));
    const Tensor* bias = ctx.input_tensor(8);
    if (bias != nullptr && (bias->dtype() != DataType::kInt32 || bias->size() != g.out_channels)) {
      return InvalidArgument("B must be int32 with one value per output channel");
    }
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(&ws, g.out_channels, "w_scale"));
    if (xs.size() != 1 || ys.size() != 1 || yz.size() != 1) {
      return InvalidArgument("QLinearConv: x_scale, y_scale and y_zero_point must be scalars");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, yz.dtype(), g.output_shape()));
    std::vector<float> scale_row(g.out_channels);
    for (int64_t m = 0; m < g.out_channels; ++m) scale_row[m] = FloatAt(xs, 0) * FloatAt(ws, PerAxis(&ws, m));
    QEpilogue ep;
    ep.kind = yz.dtype() == DataType::kInt8 ? QOutput::kInt8 : QOutput::kUint8;
    ep.bias_row = bias != nullptr ? bias->data<int32_t>() : nullptr;
    ep.scale_row = scale_row.data();
    ep.out_scale = FloatAt(ys, 0);
    ep.out_zero = QuantAt(&yz, 0);
    const bool use_packed = packed_ != nullptr && packed_->dtype == w.dtype() && packed_->shape == w.shape();
    return QuantConv(ctx, g, x, in[2], w, in[5], use_packed ? &packed_->groups : nullptr, ep, y->mutable_raw_data(), 1);
  }

 private:
  QLinearConvKernel(ConvAttributes attrs, std::shared_ptr<const PackedConvWeight> packed)
      : attrs_(std::move(attrs)), packed_(std::move(packed)) {}
  ConvAttributes attrs_;
  std::shared_ptr<const PackedConvWeight> packed_;
};

// com.microsoft QGemm: alpha * a_scale * b_scale[j] * ((A - a_zero)(B - b_zero) + C), C int32 and
// broadcast to (M, N); float out, or requantized with y_scale and y_zero_point when they are given
// (ONNX Runtime writes it for a QDQ Gemm).
class QGemmKernel : public OpKernel {
 public:
  explicit QGemmKernel(const KernelInfo& info)
      : trans_a_(info.GetInt("transA", 0) != 0),
        trans_b_(info.GetInt("transB", 0) != 0),
        alpha_(info.GetFloat("alpha", 1.0f)) {
    const Tensor* b = info.constant_input(3);
    if (b != nullptr && IsQuant8(b->dtype()) && b->rank() == 2 && b->size() > 0) {
      const int64_t k = trans_b_ ? b->dim(1) : b->dim(0), n = trans_b_ ? b->dim(0) : b->dim(1);
      // Shared by content with every QGemm (of any session) packing the same B the same way.
      packed_b_ = SharedWeights::Get<PackedWeightB>(WeightKey("QGemm.B").Add(*b).Add(int64_t{trans_b_}), [&] {
        return PackedWeightB{QPackB(b->raw_data(), IsSigned8(*b), b->dim(1), trans_b_, k, n), b->dtype(), b->shape()};
      });
    }
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* as, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(3));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* bs, ctx.RequireTensor(4));
    const Tensor *az = ctx.input_tensor(2), *bz = ctx.input_tensor(5), *c = ctx.input_tensor(6);
    const Tensor *ys = ctx.input_tensor(7), *yz = ctx.input_tensor(8);
    if (!IsQuant8(a->dtype()) || !IsQuant8(b->dtype())) return InvalidArgument("QGemm: A and B must be int8 or uint8");
    if ((az != nullptr && az->dtype() != a->dtype()) || (bz != nullptr && bz->dtype() != b->dtype())) {
      return InvalidArgument("QGemm: zero points must have the type of their operand");
    }
    if (a->rank() != 2 || b->rank() != 2) {
      return InvalidArgument("QGemm: A " + ShapeToString(a->shape()) + " and B " + ShapeToString(b->shape()) +
                             " must be matrices");
    }
    const int64_t m = trans_a_ ? a->dim(1) : a->dim(0), k = trans_a_ ? a->dim(0) : a->dim(1);
    const int64_t kb = trans_b_ ? b->dim(1) : b->dim(0), n = trans_b_ ? b->dim(0) : b->dim(1);
    if (k != kb) {
      return InvalidArgument("QGemm: inner dimensions differ, A " + ShapeToString(a->shape()) + " and B " +
                             ShapeToString(b->shape()));
    }
    if (as->dtype() != DataType::kFloat || as->size() != 1 || bs->dtype() != DataType::kFloat) {
      return InvalidArgument("QGemm: a_scale must be one float and b_scale float");
    }
    if (az != nullptr && az->size() != 1) return InvalidArgument("QGemm: a_zero_point must be a scalar");
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(bs, n, "b_scale"));
    ONNXFLOW_RETURN_IF_ERROR(CheckPerAxis(bz, n, "b_zero_point"));
    if ((ys != nullptr && (ys->dtype() != DataType::kFloat || ys->size() != 1)) ||
        (yz != nullptr && (!IsQuant8(yz->dtype()) || yz->size() != 1))) {
      return InvalidArgument("QGemm: y_scale must be one float and y_zero_point one int8 or uint8");
    }
    BiasShape bias;
    if (c != nullptr) {
      if (c->dtype() != DataType::kInt32) return InvalidArgument("QGemm: C must be int32");
      ONNXFLOW_ASSIGN_OR_RETURN(bias, ResolveBias("QGemm", c->shape(), m, n));
    }
    const bool quantized = ys != nullptr;
    const DataType out_type = !quantized ? DataType::kFloat : yz != nullptr ? yz->dtype() : DataType::kUint8;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, out_type, {m, n}));
    if (y->size() == 0) return Status::Ok();

    std::vector<float> scale_col(n);
    for (int64_t j = 0; j < n; ++j) scale_col[j] = alpha_ * as->data<float>()[0] * bs->data<float>()[PerAxis(bs, j)];
    QEpilogue ep;
    ep.kind = !quantized ? QOutput::kFloat : out_type == DataType::kInt8 ? QOutput::kInt8 : QOutput::kUint8;
    ep.scale_col = scale_col.data();
    ep.out_scale = quantized ? ys->data<float>()[0] : 1.0f;
    ep.out_zero = quantized ? QuantAt(yz, 0) : 0;
    // C as the epilogue's int32 row or column bias; a full (M, N) C is added to the int32 sums.
    std::vector<int32_t> bias_col, bias_row, sums;
    const int32_t* cd = c != nullptr ? c->data<int32_t>() : nullptr;
    const bool full_c = cd != nullptr && bias.rows == m && bias.cols == n && m > 1 && n > 1;
    if (cd != nullptr && !full_c) {
      if (bias.rows == m && m > 1) {
        bias_row.assign(cd, cd + m);
        ep.bias_row = bias_row.data();
      } else {
        bias_col.resize(n);
        for (int64_t j = 0; j < n; ++j) bias_col[j] = cd[bias.cols == 1 ? 0 : j];
        ep.bias_col = bias_col.data();
      }
    }

    std::vector<uint8_t> a_rows;
    const void* ad = a->raw_data();
    if (trans_a_) {  // QPackA reads rows of A: transpose (K, M) first
      a_rows.resize(static_cast<size_t>(m * k));
      const uint8_t* src = static_cast<const uint8_t*>(ad);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t q = 0; q < k; ++q) a_rows[i * k + q] = src[q * m + i];
      }
      ad = a_rows.data();
    }
    const int threads = ctx.threads();
    const QPackedA pa = QPackA(ad, IsSigned8(*a), k, m, k, threads);
    const QPackedB* pb = Usable(packed_b_, *b);
    QPackedB local;
    if (pb == nullptr) {
      local = QPackB(b->raw_data(), IsSigned8(*b), b->dim(1), trans_b_, k, n, threads);
      pb = &local;
    }
    const std::vector<int32_t> za = ZeroPoints(az), zb = ZeroPoints(bz);
    const QZeroPoints zero{za.data(), 1, zb.data(), static_cast<int64_t>(zb.size())};
    if (!full_c) {
      QGemm(pa, *pb, zero, ep, y->mutable_raw_data(), n, threads);
      return Status::Ok();
    }
    // Sums first, then C and the scales, one element at a time, as the epilogue would.
    sums.resize(static_cast<size_t>(m * n));
    QGemm(pa, *pb, zero, QEpilogue{}, sums.data(), n, threads);
    for (int64_t i = 0; i < m * n; ++i) {
      const float v = static_cast<float>(sums[i] + cd[i]);
      if (!quantized) {
        y->mutable_data<float>()[i] = v * scale_col[i % n];
      } else {
        StoreQuant(y, i, static_cast<double>(std::nearbyint(v * (scale_col[i % n] / ep.out_scale))) + ep.out_zero);
      }
    }
    return Status::Ok();
  }

 private:
  bool trans_a_, trans_b_;
  float alpha_;
  std::shared_ptr<const PackedWeightB> packed_b_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQuantizedMathKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "QGemm", 1, kOpenEnded, Make<QGemmKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "MatMulInteger", 10, kOpenEnded, Make<MatMulIntegerKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "QLinearMatMul", 10, kOpenEnded, Make<QLinearMatMulKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "ConvInteger", 10, kOpenEnded, Make<ConvIntegerKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "QLinearConv", 10, kOpenEnded, Make<QLinearConvKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kMsDomain, "MatMulIntegerToFloat", 1, kOpenEnded, Make<MatMulIntegerToFloatKernel>()));
  return registry.Register(kMsDomain, "DynamicQuantizeMatMul", 1, kOpenEnded, Make<DynamicQuantizeMatMulKernel>());
}

}  // namespace onnxflow
