// The smaller com.microsoft ops: GatherBlockQuantized (an embedding table in 4- or 8-bit blocks),
// Trilu and Range (the contrib versions ONNX Runtime registered before ONNX had them), Inverse,
// and NhwcMaxPool (channels-last max pooling on 8-bit data, written by ONNX Runtime's NHWC
// transformer around quantized convolutions).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/domains.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/pool_geometry.h"

namespace onnxflow {
namespace contrib {
namespace {

// GatherBlockQuantized(data, indices, scales, zero_points?): data is uint8 holding `bits` 2, 4 or 8
// (four, two or one value a byte along the last axis, the lowest bits first), or int4 / uint4;
// output = (q - zero_point) * scale, in the scales' type. Blocks of `block_size` values along
// quantize_axis share a scale. Zero points have data's type: for uint8, packed as data is along
// the last axis of the scales' shape (each row padded to whole bytes), default 2^(bits - 1); for
// int4 / uint4, one per scale, default 0.
class GatherBlockQuantizedKernel : public OpKernel {
 public:
  explicit GatherBlockQuantizedKernel(const KernelInfo& info)
      : gather_axis_(info.GetInt("gather_axis", 0)),
        quantize_axis_(info.GetInt("quantize_axis", 1)),
        block_size_(info.GetInt("block_size", 128)),
        bits_(info.GetInt("bits", 4)) {}

  Status Compute(KernelContext& ctx) const override {
    const char* op = "GatherBlockQuantized";
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scales, ctx.RequireTensor(2));
    const Tensor* zp = ctx.input_tensor(3);
    const bool bytes = data->dtype() == DataType::kUint8;
    if (!bytes && data->dtype() != DataType::kInt4 && data->dtype() != DataType::kUint4) {
      return InvalidArgument("GatherBlockQuantized: data must be uint8, int4 or uint4, got " +
                             std::string(DataTypeName(data->dtype())));
    }
    if (bytes && bits_ != 2 && bits_ != 4 && bits_ != 8) {
      return InvalidArgument("GatherBlockQuantized: bits must be 2, 4 or 8 for uint8 data, got " + std::to_string(bits_));
    }
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*scales, op, "scales"));
    if (data->rank() < 1 || block_size_ < 16 || (block_size_ & (block_size_ - 1)) != 0) {
      return InvalidArgument("GatherBlockQuantized: block_size must be a power of 2, at least 16");
    }
    // Values per byte of uint8 data (int4 tensors hold one value per element here).
    const int64_t per_byte = bytes ? 8 / bits_ : 1;
    Shape logical = data->shape();
    logical.back() *= per_byte;
    const int64_t rank = static_cast<int64_t>(logical.size());
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t g, NormalizeAxis(gather_axis_, rank));
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t qa, NormalizeAxis(quantize_axis_, rank));
    Shape scale_shape = logical;
    scale_shape[qa] = (logical[qa] + block_size_ - 1) / block_size_;
    if (scales->shape() != scale_shape) {
      return InvalidArgument("GatherBlockQuantized: scales must be " + ShapeToString(scale_shape) + " for data " +
                             ShapeToString(logical) + " in blocks of " + std::to_string(block_size_) + ", got " +
                             ShapeToString(scales->shape()));
    }
    Shape zp_shape = scale_shape;
    zp_shape.back() = (zp_shape.back() + per_byte - 1) / per_byte;
    if (zp != nullptr && (zp->dtype() != data->dtype() || zp->shape() != zp_shape)) {
      return InvalidArgument("GatherBlockQuantized: zero_points must be " + std::string(DataTypeName(data->dtype())) +
                             " " + ShapeToString(zp_shape) + ", got " + DataTypeName(zp->dtype()) + " " +
                             ShapeToString(zp->shape()));
    }
    if (indices->dtype() != DataType::kInt32 && indices->dtype() != DataType::kInt64) {
      return InvalidArgument("GatherBlockQuantized: indices must be int32 or int64");
    }
    Shape out_shape(logical.begin(), logical.begin() + g);
    out_shape.insert(out_shape.end(), indices->shape().begin(), indices->shape().end());
    out_shape.insert(out_shape.end(), logical.begin() + g + 1, logical.end());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, scales->dtype(), out_shape));
    const int64_t outer = SizeToDim(logical, g), axis_len = logical[g], inner = SizeFromDim(logical, g + 1);
    const int64_t count = indices->size();
    std::vector<int64_t> idx(count);
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = indices->dtype() == DataType::kInt32 ? indices->data<int32_t>()[i] : indices->data<int64_t>()[i];
      if (v < 0) v += axis_len;
      if (v < 0 || v >= axis_len) {
        return InvalidArgument("GatherBlockQuantized: index " + std::to_string(v) + " is out of range for a gather axis of " +
                               std::to_string(axis_len));
      }
      idx[i] = v;
    }
    // The flat logical index splits as (.., coordinate along qa, ..): qa_stride is the size of the
    // dims after qa, and the scale's flat index replaces the coordinate by its block.
    const int64_t qa_stride = SizeFromDim(logical, qa + 1), qa_len = logical[qa];
    const int64_t scale_qa_len = scale_shape[qa];
    // One scale per gathered block, read as it is needed (FloatAt): widening all of a float16
    // table's scales (a 4096-token embedding in blocks of 32: 262,144) cost 0.1 ms per decoded
    // token for one row.
    FloatOut out(y);
    // Element e of a tensor of data's type whose last axis holds `row` values.
    const int bits = static_cast<int>(bytes ? bits_ : 8);
    auto value = [&](const Tensor& t, int64_t e, int64_t row) -> int {
      if (t.dtype() == DataType::kInt4) return t.data<Int4>()[e].value;
      if (t.dtype() == DataType::kUint4) return t.data<UInt4>()[e].value;
      if (per_byte == 1) return t.data<uint8_t>()[e];
      const int64_t r = e / row, c = e % row, stride = (row + per_byte - 1) / per_byte;
      return (t.data<uint8_t>()[r * stride + c / per_byte] >> ((c % per_byte) * bits)) & ((1 << bits) - 1);
    };
    const int default_zp = bytes ? 1 << (bits_ - 1) : 0;
    const int64_t data_row = logical.back(), scale_row = scale_shape.back();
    ParallelFor(ctx, outer * count, inner * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t o = r / count, i = r % count;
        const int64_t base = (o * axis_len + idx[i]) * inner;
        float* dst = out.data + r * inner;
        for (int64_t j = 0; j < inner; ++j) {
          const int64_t e = base + j;
          const int64_t before = e / (qa_stride * qa_len), coord = (e / qa_stride) % qa_len, after = e % qa_stride;
          const int64_t s = (before * scale_qa_len + coord / block_size_) * qa_stride + after;
          const int zero = zp != nullptr ? value(*zp, s, scale_row) : default_zp;
          dst[j] = static_cast<float>(value(*data, e, data_row) - zero) * FloatAt(*scales, s);
        }
      }
    });
    out.Finish();
    return Status::Ok();
  }

 private:
  int64_t gather_axis_, quantize_axis_, block_size_, bits_;
};

// Range(start, limit, delta = 1): ceil((limit - start) / delta) values.
class RangeKernel : public OpKernel {
 public:
  explicit RangeKernel(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* start, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* limit, ctx.RequireTensor(1));
    const Tensor* delta = ctx.input_tensor(2);
    if (start->size() != 1 || limit->size() != 1 || limit->dtype() != start->dtype() ||
        (delta != nullptr && (delta->size() != 1 || delta->dtype() != start->dtype()))) {
      return InvalidArgument("Range: start, limit and delta must be single values of one type");
    }
    return DispatchType<float, double, int16_t, int32_t, int64_t>(start->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T s = start->data<T>()[0], l = limit->data<T>()[0], d = delta != nullptr ? delta->data<T>()[0] : T(1);
      if (d == T(0)) return InvalidArgument("Range: delta must not be 0");
      const double n = std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d));
      const int64_t count = n > 0 ? static_cast<int64_t>(n) : 0;
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, start->dtype(), {count}));
      T* p = y->mutable_data<T>();
      for (int64_t i = 0; i < count; ++i) p[i] = static_cast<T>(s + static_cast<T>(i) * d);
      return Status::Ok();
    });
  }
};

// Inverse of each square matrix in the batch (Gauss-Jordan with partial pivoting, in double).
class InverseKernel : public OpKernel {
 public:
  explicit InverseKernel(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() < 2 || x->dim(x->rank() - 1) != x->dim(x->rank() - 2)) {
      return InvalidArgument("Inverse: X must be a batch of square matrices, got " + ShapeToString(x->shape()));
    }
    const int64_t n = x->dim(x->rank() - 1), count = n == 0 ? 0 : x->size() / (n * n);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    return DispatchType<float, double, Float16>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = y->mutable_data<T>();
      std::vector<double> a(n * n), inv(n * n);
      for (int64_t m = 0; m < count; ++m) {
        for (int64_t i = 0; i < n * n; ++i) {
          a[i] = static_cast<double>(ToCompute<T>(src[m * n * n + i]));
          inv[i] = (i / n == i % n) ? 1.0 : 0.0;
        }
        for (int64_t c = 0; c < n; ++c) {
          int64_t piv = c;
          for (int64_t r = c + 1; r < n; ++r) {
            if (std::fabs(a[r * n + c]) > std::fabs(a[piv * n + c])) piv = r;
          }
          if (a[piv * n + c] == 0.0) return InvalidArgument("Inverse: matrix " + std::to_string(m) + " is singular");
          if (piv != c) {
            for (int64_t j = 0; j < n; ++j) {
              std::swap(a[c * n + j], a[piv * n + j]);
              std::swap(inv[c * n + j], inv[piv * n + j]);
            }
          }
          const double d = 1.0 / a[c * n + c];
          for (int64_t j = 0; j < n; ++j) {
            a[c * n + j] *= d;
            inv[c * n + j] *= d;
          }
          for (int64_t r = 0; r < n; ++r) {
            if (r == c || a[r * n + c] == 0.0) continue;
            const double f = a[r * n + c];
            for (int64_t j = 0; j < n; ++j) {
              a[r * n + j] -= f * a[c * n + j];
              inv[r * n + j] -= f * inv[c * n + j];
            }
          }
        }
        for (int64_t i = 0; i < n * n; ++i) dst[m * n * n + i] = FromCompute<T>(static_cast<ComputeType<T>>(inv[i]));
      }
      return Status::Ok();
    });
  }
};

// NhwcMaxPool(x): MaxPool on (N, H, W, C) data (any number of spatial dims), channels innermost.
// MaxPool's attributes and geometry (ops/nn/pool_geometry.h: checked at load and against the
// shape); each output pixel visits only its window's taps inside the input (TapsOf), so pads and
// kernels of a hostile size cost nothing, and a window wholly in the padding gives the type's least.
class NhwcMaxPoolKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<NhwcMaxPoolKernel>(new NhwcMaxPoolKernel());
    ONNXFLOW_ASSIGN_OR_RETURN(k->attrs_, PoolAttributes::Parse(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const size_t dims = attrs_.kernel.size();
    if (x->rank() != static_cast<int64_t>(dims) + 2) {
      return InvalidArgument("NhwcMaxPool: X must have rank " + std::to_string(dims + 2) + ", got " + ShapeToString(x->shape()));
    }
    const int64_t batch = x->dim(0), channels = x->dim(x->rank() - 1);
    Shape nchw = {batch, channels};
    for (size_t d = 0; d < dims; ++d) nchw.push_back(x->dim(d + 1));
    ONNXFLOW_ASSIGN_OR_RETURN(const PoolGeometry g, ComputePoolGeometry(attrs_, nchw));
    Shape out_shape{batch};
    out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
    out_shape.push_back(channels);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), out_shape));
    if (y->size() == 0) return Status::Ok();
    return DispatchType<uint8_t, int8_t, float>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = y->mutable_data<T>();
      const int64_t out_pixels = g.out_plane(), in_pixels = g.in_plane();
      ParallelFor(ctx, batch * out_pixels, channels * g.taps_estimate(), [&](int64_t p0, int64_t p1) {
        std::vector<WindowTaps> taps(dims);
        std::vector<int64_t> k(dims);
        for (int64_t p = p0; p < p1; ++p) {
          bool empty = false;
          for (int64_t d = static_cast<int64_t>(dims) - 1, rem = p % out_pixels; d >= 0; --d) {
            taps[d] = TapsOf(g, static_cast<size_t>(d), rem % g.out[d]);
            empty = empty || taps[d].inside() == 0;
            rem /= g.out[d];
          }
          T* acc = dst + p * channels;
          std::fill(acc, acc + channels, std::numeric_limits<T>::lowest());
          if (empty) continue;
          const T* image = src + (p / out_pixels) * in_pixels * channels;
          for (size_t d = 0; d < dims; ++d) k[d] = taps[d].lo;
          while (true) {
            int64_t pixel = 0;
            for (size_t d = 0; d < dims; ++d) pixel = pixel * g.in[d] + taps[d].start + k[d] * g.dilations[d];
            const T* v = image + pixel * channels;
            for (int64_t c = 0; c < channels; ++c) acc[c] = std::max(acc[c], v[c]);
            size_t d = dims;
            while (d > 0 && ++k[d - 1] == taps[d - 1].hi) {
              --d;
              k[d] = taps[d].lo;
            }
            if (d == 0) break;
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  NhwcMaxPoolKernel() = default;
  PoolAttributes attrs_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMiscOps(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kMsDomain, "GatherBlockQuantized", 1, kOpenEnded, Make<GatherBlockQuantizedKernel>()));
  ONNXFLOW_ASSIGN_OR_RETURN(KernelFactory trilu, Adapt(registry, kOnnxDomain, "Trilu", 14, nullptr));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "Trilu", 1, kOpenEnded, trilu));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "Range", 1, kOpenEnded, Make<RangeKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "Inverse", 1, kOpenEnded, Make<InverseKernel>()));
  return registry.Register(kMsDomain, "NhwcMaxPool", 1, kOpenEnded, Make<NhwcMaxPoolKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
