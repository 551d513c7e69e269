// MaxPool (1, 8, 10, 11, 12, 22), AveragePool (1, 7, 10, 11, 19, 22), LpPool (1, 2, 11, 18, 22).
//
// 1-, 2- and 3-D windows run through one loop nest (missing dims have size 1). For every output
// coordinate and dim the range of kernel taps that land inside the input is precomputed, so the
// inner loops never test bounds: padding is simply skipped (max ignores it; average divides by
// the taps inside the input, or with count_include_pad by the taps inside the padded input; Lp
// adds nothing for it). MaxPool's optional Indices output holds the flat index of each max in the
// input, in row-major order or, with storage_order = 1, column-major order within each image.
//
// float32 1-D/2-D max and average pools without Indices take the SIMD fast path of pool_rows.h
// (separable: window rows combined into a padded scratch row, then the columns reduced along it).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/nn/register.h"
#include "ops/nn/pool_geometry.h"
#include "ops/nn/pool_rows.h"

namespace onnxflow {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

struct Dim {
  int64_t in = 1, out = 1, dilation = 1;
  std::vector<WindowTaps> taps;  // per output index
};

std::vector<Dim> MakeDims(const PoolGeometry& g) {
  std::vector<Dim> dims(3);
  const size_t rank = g.in.size();
  for (size_t j = 0; j < 3; ++j) {
    Dim& d = dims[j];
    if (j + rank < 3) {  // a missing leading dim
      d.taps.push_back({0, 0, 1, 1});
      continue;
    }
    const size_t i = j + rank - 3;
    d.in = g.in[i];
    d.out = g.out[i];
    d.dilation = g.dilations[i];
    for (int64_t o = 0; o < d.out; ++o) d.taps.push_back(TapsOf(g, i, o));
  }
  return dims;
}

// The fast path's scratch row spans the padded input row and every window's reach. Pads or strides
// of 2^40 (a hostile model) would ask for terabytes there, and its horizontal pass walks every tap,
// so such pools take the generic loops, which visit only the taps inside the input. In double: the
// terms may pass INT64_MAX.
bool FitsPoolRows(const PoolGeometry& g) {
  constexpr double kMaxRowFloats = 1 << 20;
  const size_t w = g.in.size() - 1;
  auto d = [](int64_t v) { return static_cast<double>(v); };
  return PoolRowsPlan::RowLength<double>(d(g.pad_begin[w]), d(g.in[w]), d(g.out[w]), d(g.strides[w]), d(g.kernel[w]),
                                         d(g.dilations[w])) <= kMaxRowFloats;
}

class PoolKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, PoolKind kind) {
    ONNXFLOW_ASSIGN_OR_RETURN(PoolAttributes attrs, PoolAttributes::Parse(info));
    if (attrs.kernel.size() > 3) return Unimplemented("pooling over more than 3 spatial dims");
    auto* k = new PoolKernel(std::move(attrs), kind);
    k->count_include_pad_ = info.GetInt("count_include_pad", 0) != 0;
    k->storage_order_ = info.GetInt("storage_order", 0);
    k->p_ = info.opset() < 2 ? static_cast<int64_t>(info.GetFloat("p", 2.0f)) : info.GetInt("p", 2);
    if (kind == PoolKind::kLp && k->p_ <= 0) {
      delete k;
      return InvalidArgument("attribute 'p' must be positive");
    }
    return std::unique_ptr<OpKernel>(k);
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(PoolGeometry g, ComputePoolGeometry(attrs_, x->shape()));
    Shape out_shape = {g.batch, g.channels};
    out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
    // Every path below writes every output element.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.AllocateUninitialized(0, x->dtype(), out_shape));
    int64_t* indices = nullptr;
    if (kind_ == PoolKind::kMax && ctx.has_output(1)) {
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor* t, ctx.AllocateUninitialized(1, DataType::kInt64, out_shape));
      indices = t->mutable_data<int64_t>();
    }
    if (y->size() == 0) return Status::Ok();
    const std::vector<Dim> dims = MakeDims(g);
    const bool rows = attrs_.kernel.size() <= 2 && indices == nullptr && FitsPoolRows(g);
    if (x->dtype() == DataType::kFloat && rows && kind_ != PoolKind::kLp) {
      RunFloatRows(ctx, g, dims, x->data<float>(), y->mutable_data<float>());
      return Status::Ok();
    }
    const bool bytes = x->dtype() == DataType::kUint8 || x->dtype() == DataType::kInt8;
    if (bytes && kind_ == PoolKind::kMax && rows) {
      // 8-bit max pooling (a quantized model's MaxPool runs on its bytes) through the float rows:
      // every byte is a float exactly, and so is their maximum. (The plain loop took 6.5 ms for
      // ResNet-50's 3x3 stride-2 pool of 64 x 112 x 112; widened and pooled in float: see below.)
      return DispatchType<int8_t, uint8_t>(x->dtype(), [&](auto tag) {
        using T = decltype(tag);
        std::vector<float> xf(static_cast<size_t>(x->size())), yf(static_cast<size_t>(y->size()));
        const T* xd = x->data<T>();
        for (size_t i = 0; i < xf.size(); ++i) xf[i] = xd[i];
        RunFloatRows(ctx, g, dims, xf.data(), yf.data());
        T* yd = y->mutable_data<T>();
        for (size_t i = 0; i < yf.size(); ++i) yd[i] = static_cast<T>(yf[i]);
        return Status::Ok();
      });
    }
    if (kind_ == PoolKind::kMax) {
      return DispatchType<float, double, Float16, BFloat16, int8_t, uint8_t>(x->dtype(), [&](auto tag) {
        using T = decltype(tag);
        RunMax<T>(ctx, g, dims, x->data<T>(), y->mutable_data<T>(), indices);
        return Status::Ok();
      });
    }
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      RunSum<T>(ctx, g, dims, x->data<T>(), y->mutable_data<T>());
      return Status::Ok();
    });
  }

 private:
  PoolKernel(PoolAttributes attrs, PoolKind kind) : attrs_(std::move(attrs)), kind_(kind) {}

  // Flat index of spatial position (a, b, c) within one image for the Indices output.
  int64_t IndexOf(const std::vector<Dim>& dims, int64_t a, int64_t b, int64_t c) const {
    if (storage_order_ == 0) return (a * dims[1].in + b) * dims[2].in + c;
    // Column-major: the last spatial dim varies slowest. Missing leading dims have size 1.
    const size_t rank = attrs_.kernel.size();
    if (rank == 1) return c;
    if (rank == 2) return c * dims[1].in + b;
    return (c * dims[1].in + b) * dims[0].in + a;
  }

  // The SIMD fast path (pool_rows.h): float32, 1-D or 2-D, max or average, no Indices. Work is
  // split over output rows of all planes, so one big plane still spreads over the cores.
  void RunFloatRows(const KernelContext& ctx, const PoolGeometry& g, const std::vector<Dim>& dims, const float* x,
                    float* y) const {
    const Dim& dh = dims[1];
    const Dim& dw = dims[2];
    PoolRowsPlan plan;
    plan.max = kind_ == PoolKind::kMax;
    plan.in_h = dh.in;
    plan.in_w = dw.in;
    plan.out_h = dh.out;
    plan.out_w = dw.out;
    plan.kernel_w = attrs_.kernel.back();
    plan.stride_w = g.strides.back();
    plan.dilation_w = dw.dilation;
    plan.dilation_h = dh.dilation;
    plan.pad_left = g.pad_begin.back();
    // 1 / taps counted; a window with none gives inf, and 0 * inf the NaN the generic path returns.
    auto inverse = [&](const WindowTaps& t) {
      return 1.0f / static_cast<float>(count_include_pad_ ? t.with_pad : t.hi - t.lo);
    };
    for (const WindowTaps& t : dh.taps) {
      plan.row_first.push_back(t.start + t.lo * dh.dilation);
      plan.row_count.push_back(t.hi - t.lo);
      if (!plan.max) plan.row_scale.push_back(inverse(t));
    }
    if (!plan.max) {
      for (const WindowTaps& t : dw.taps) plan.col_scale.push_back(inverse(t));
      plan.col_scale.resize(plan.out_w + kPoolRowsSlack, 0.0f);
    }
    const int64_t rows = g.batch * g.channels * plan.out_h;
    // Per output row: a vertical pass over the input row and about one vector op per tap per
    // 16 outputs; counted as a quarter of the taps per output.
    const int64_t cost = plan.out_w * g.taps_estimate() / 4 + plan.in_w + 1;
    ParallelFor(ctx, rows, cost, [&](int64_t begin, int64_t end) {
      std::vector<float> scratch(plan.scratch_length());
      PoolRows(plan, x, y, begin, end, scratch.data());
    });
  }

  template <typename T>
  void RunMax(const KernelContext& ctx, const PoolGeometry& g, const std::vector<Dim>& dims, const T* x, T* y,
              int64_t* indices) const {
    using C = ComputeType<T>;
    const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
    const int64_t H = dims[1].in, W = dims[2].in;
    ParallelFor(ctx, g.batch * g.channels, out_plane * g.taps_estimate() * 2, [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        const T* src = x + plane * in_plane;
        T* dst = y + plane * out_plane;
        int64_t* idx = indices ? indices + plane * out_plane : nullptr;
        int64_t o = 0;
        for (const WindowTaps& ta : dims[0].taps) {
          for (const WindowTaps& tb : dims[1].taps) {
            for (const WindowTaps& tc : dims[2].taps) {
              C best = std::numeric_limits<C>::lowest();
              if constexpr (std::is_floating_point<C>::value) best = -std::numeric_limits<C>::infinity();
              int64_t ba = -1, bb = 0, bc = 0;
              for (int64_t ka = ta.lo; ka < ta.hi; ++ka) {
                const int64_t ia = ta.start + ka * dims[0].dilation;
                for (int64_t kb = tb.lo; kb < tb.hi; ++kb) {
                  const int64_t ib = tb.start + kb * dims[1].dilation;
                  const T* row = src + (ia * H + ib) * W;
                  for (int64_t kc = tc.lo; kc < tc.hi; ++kc) {
                    const int64_t ic = tc.start + kc * dims[2].dilation;
                    const C v = ToCompute(row[ic]);
                    if (v > best || ba < 0) {
                      best = v;
                      ba = ia; bb = ib; bc = ic;
                    }
                  }
                }
              }
              dst[o] = FromCompute<T>(best);
              if (idx) idx[o] = ba < 0 ? -1 : plane * in_plane + IndexOf(dims, ba, bb, bc);
              ++o;
            }
          }
        }
      }
    });
  }

  template <typename T>
  void RunSum(const KernelContext& ctx, const PoolGeometry& g, const std::vector<Dim>& dims, const T* x, T* y) const {
    const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
    const int64_t H = dims[1].in, W = dims[2].in;
    const bool lp = kind_ == PoolKind::kLp;
    const double p = static_cast<double>(p_);
    ParallelFor(ctx, g.batch * g.channels, out_plane * g.taps_estimate() * 2, [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        const T* src = x + plane * in_plane;
        T* dst = y + plane * out_plane;
        int64_t o = 0;
        for (const WindowTaps& ta : dims[0].taps) {
          for (const WindowTaps& tb : dims[1].taps) {
            for (const WindowTaps& tc : dims[2].taps) {
              double sum = 0;
              for (int64_t ka = ta.lo; ka < ta.hi; ++ka) {
                const int64_t ia = ta.start + ka * dims[0].dilation;
                for (int64_t kb = tb.lo; kb < tb.hi; ++kb) {
                  const T* row = src + (ia * H + tb.start + kb * dims[1].dilation) * W;
                  for (int64_t kc = tc.lo; kc < tc.hi; ++kc) {
                    const double v = ToCompute(row[tc.start + kc * dims[2].dilation]);
                    if (!lp) sum += v;
                    else if (p_ == 1) sum += std::fabs(v);
                    else if (p_ == 2) sum += v * v;
                    else sum += std::pow(std::fabs(v), p);
                  }
                }
              }
              double r;
              if (lp) {
                r = p_ == 1 ? sum : p_ == 2 ? std::sqrt(sum) : std::pow(sum, 1.0 / p);
              } else {
                const int64_t count = count_include_pad_ ? ta.with_pad * tb.with_pad * tc.with_pad
                                                         : (ta.hi - ta.lo) * (tb.hi - tb.lo) * (tc.hi - tc.lo);
                r = count > 0 ? sum / count : std::numeric_limits<double>::quiet_NaN();
              }
              dst[o++] = FromCompute<T>(static_cast<ComputeType<T>>(r));
            }
          }
        }
      }
    });
  }

  PoolAttributes attrs_;
  PoolKind kind_;
  bool count_include_pad_ = false;
  int64_t storage_order_ = 0;
  int64_t p_ = 2;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterPools(KernelRegistry& registry) {
  struct Op { const char* name; PoolKind kind; };
  for (const Op& op : {Op{"MaxPool", PoolKind::kMax}, Op{"AveragePool", PoolKind::kAverage}, Op{"LpPool", PoolKind::kLp}}) {
    const PoolKind kind = op.kind;
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, op.name, 1, kOpenEnded, Make<PoolKernel>(kind)));
  }
  return Status::Ok();
}

}  // namespace onnxflow
