// com.microsoft QLinearConcat (version 1): inputs Y_scale, Y_zero_point, then one (X, X_scale,
// X_zero_point) triple per tensor; attribute axis. Each input is requantized into the output's
// scale: a plain copy when its scale and zero point are the output's (the common case after
// QDQ, where the quantizer gives a Concat's inputs its output's parameters), else through a
// 256-entry table.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/quant_ms/register.h"
#include "ops/quant_ms/qparams.h"

namespace onnxflow {
namespace quant_ms {
namespace {

class QLinearConcatKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, info.RequireInt("axis"));
    if (info.input_count() < 5 || (info.input_count() - 2) % 3 != 0) {
      return InvalidArgument("QLinearConcat takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples; got " +
                             std::to_string(info.input_count()) + " inputs");
    }
    return std::unique_ptr<OpKernel>(new QLinearConcatKernel(axis));
  }

  Status Compute(KernelContext& ctx) const override {
    const int count = (ctx.input_count() - 2) / 3;
    std::vector<const Tensor*> xs;
    for (int i = 0; i < count; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(2 + 3 * i));
      xs.push_back(x);
    }
    const DataType t = xs[0]->dtype();
    ONNXFLOW_RETURN_IF_ERROR(CheckQuantType(t, "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qy, ReadQParams(ctx, 0, 1, t, "Y_scale", "Y_zero_point"));
    const int64_t rank = xs[0]->rank();
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank));
    Shape out_shape = xs[0]->shape();
    out_shape[axis] = 0;
    std::vector<std::vector<uint8_t>> tables(count);
    for (int i = 0; i < count; ++i) {
      const Tensor& x = *xs[i];
      bool fits = x.dtype() == t && x.rank() == rank;
      for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || x.dim(d) == xs[0]->dim(d);
      if (!fits) {
        return InvalidArgument("input " + std::to_string(2 + 3 * i) + " (" + DataTypeName(x.dtype()) + " " +
                               ShapeToString(x.shape()) + ") does not concatenate with " + DataTypeName(t) + " " +
                               ShapeToString(xs[0]->shape()) + " on axis " + std::to_string(axis));
      }
      out_shape[axis] += x.dim(axis);
      ONNXFLOW_ASSIGN_OR_RETURN(QParams qx, ReadQParams(ctx, 3 + 3 * i, 4 + 3 * i, t, "X_scale", "X_zero_point"));
      if (qx.scale != qy.scale || qx.zero != qy.zero) {
        tables[i].resize(256);
        BuildTable(t, qx, qy, [](float v) { return v; }, tables[i].data());
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, t, out_shape));
    const int64_t outer = SizeToDim(out_shape, axis), inner = SizeFromDim(out_shape, axis + 1);
    const int64_t out_row = out_shape[axis] * inner;
    uint8_t* py = static_cast<uint8_t*>(y->mutable_raw_data());
    // Input by input over the chunk's rows: a table is loaded once per input and chunk, not once
    // per row (a channels-last concatenation's rows are a pixel's few channels).
    ParallelFor(ctx, outer, out_row * kCopyCostPerElement, [&](int64_t b, int64_t e) {
      int64_t at = 0;  // input i's place in an output row
      for (int i = 0; i < count; ++i) {
        const int64_t row = xs[i]->dim(axis) * inner;
        const uint8_t* src = static_cast<const uint8_t*>(xs[i]->raw_data()) + b * row;
        uint8_t* dst = py + b * out_row + at;
        if (!tables[i].empty()) {
          ApplyByteTableRows(tables[i].data(), src, row, dst, out_row, row, e - b);
        } else if (row == out_row) {
          std::memcpy(dst, src, row * (e - b));
        } else {
          for (int64_t o = 0; o < e - b; ++o) std::memcpy(dst + o * out_row, src + o * row, row);
        }
        at += row;
      }
    });
    return Status::Ok();
  }

 private:
  explicit QLinearConcatKernel(int64_t axis) : axis_(axis) {}
  int64_t axis_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQLinearConcat(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "QLinearConcat", 1, kOpenEnded, Make<QLinearConcatKernel>());
}

}  // namespace quant_ms
}  // namespace onnxflow
