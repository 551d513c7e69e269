// MaxPool (1, 8, 10, 11, 12, 22), AveragePool (1, 7, 10, 11, 19, 22), LpPool (1, 2, 11, 18, 22).
//
// 1-, 2- and 3-D windows run through one loop nest (missing dims have size 1). For every output
// coordinate and dim the range of kernel taps that land inside the input is precomputed, so the
// inner loops never test bounds: padding is simply skipped (max ignores it; average divides by
// the taps inside the input, or with count_include_pad by the taps inside the padded input; Lp
// adds nothing for it). MaxPool's optional Indices output holds the flat index of each max in the
// input, in row-major order or, with storage_order = 1, column-major order within each image.
//
// float32 1-D/2-D max and average pools without Indices take a fast path: the output columns whose
// window lies wholly inside the row are computed as a stride-1 SIMD pass over the window's rows
// (then every stride-th value is kept), only the border columns run the scalar loop.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/nn/pool.h"
#include "ops/nn/pool_geometry.h"
#include "ops/nn/pool_rows.h"

namespace onnxflow {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

// Per dim and output index: first input position, and the taps [lo, hi) that are inside the input.
struct TapRange {
  int64_t start, lo, hi, with_pad;  // with_pad: taps inside the padded input
};

struct Dim {
  int64_t in = 1, out = 1, dilation = 1;
  std::vector<TapRange> taps;
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
    for (int64_t o = 0; o < d.out; ++o) {
      TapRange t;
      t.start = o * g.strides[i] - g.pad_begin[i];
      t.lo = 0;
      while (t.lo < g.kernel[i] && t.start + t.lo * d.dilation < 0) ++t.lo;
      t.hi = g.kernel[i];
      while (t.hi > t.lo && t.start + (t.hi - 1) * d.dilation >= d.in) --t.hi;
      t.with_pad = 0;
      for (int64_t k = 0; k < g.kernel[i]; ++k) {
        if (t.start + k * d.dilation < d.in + g.pad_end[i]) ++t.with_pad;
      }
      d.taps.push_back(t);
    }
  }
  return dims;
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
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x->dtype(), out_shape));
    int64_t* indices = nullptr;
    if (kind_ == PoolKind::kMax && ctx.has_output(1)) {
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor* t, ctx.Allocate(1, DataType::kInt64, out_shape));
      indices = t->mutable_data<int64_t>();
    }
    if (y->size() == 0) return Status::Ok();
    const std::vector<Dim> dims = MakeDims(g);
    if (x->dtype() == DataType::kFloat && attrs_.kernel.size() <= 2 && indices == nullptr && kind_ != PoolKind::kLp) {
      RunFloat2D(ctx, g, dims, x->data<float>(), y->mutable_data<float>());
      return Status::Ok();
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

  int64_t KernelTaps() const {
    int64_t n = 1;
    for (int64_t k : attrs_.kernel) n *= k;
    return n;
  }

  // Flat index of spatial position (a, b, c) within one image for the Indices output.
  int64_t IndexOf(const std::vector<Dim>& dims, int64_t a, int64_t b, int64_t c) const {
    if (storage_order_ == 0) return (a * dims[1].in + b) * dims[2].in + c;
    // Column-major: the last spatial dim varies slowest. Missing leading dims have size 1.
    const size_t rank = attrs_.kernel.size();
    if (rank == 1) return c;
    if (rank == 2) return c * dims[1].in + b;
    return (c * dims[1].in + b) * dims[0].in + a;
  }

  void RunFloat2D(const KernelContext& ctx, const PoolGeometry& g, const std::vector<Dim>& dims, const float* x,
                  float* y) const {
    const Dim& dh = dims[1];
    const Dim& dw = dims[2];
    const int64_t W = dw.in, OH = dh.out, OW = dw.out;
    const int64_t kw = attrs_.kernel.back();
    const int64_t sw = attrs_.strides.empty() ? 1 : attrs_.strides.back();
    const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
    const bool max = kind_ == PoolKind::kMax;
    // Interior columns [a, b): every tap inside the row (taps start at a monotone offset).
    auto full = [&](int64_t o) { return dw.taps[o].lo == 0 && dw.taps[o].hi == kw; };
    int64_t a = 0;
    while (a < OW && !full(a)) ++a;
    int64_t b = OW;
    while (b > a && !full(b - 1)) --b;
    ParallelFor(ctx, g.batch * g.channels, out_plane * KernelTaps() / 4 + 1, [&](int64_t begin, int64_t end) {
      std::vector<const float*> rows, shifted;
      std::vector<float> temp;
      for (int64_t plane = begin; plane < end; ++plane) {
        const float* src = x + plane * in_plane;
        float* dst = y + plane * out_plane;
        for (int64_t oh = 0; oh < OH; ++oh) {
          const TapRange& th = dh.taps[oh];
          const int64_t nrows = th.hi - th.lo;
          rows.clear();
          for (int64_t r = th.lo; r < th.hi; ++r) rows.push_back(src + (th.start + r * dh.dilation) * W);
          float* orow = dst + oh * OW;
          auto scalar = [&](int64_t ow) {
            const TapRange& tc = dw.taps[ow];
            float m = -std::numeric_limits<float>::infinity();
            double sum = 0;
            for (const float* row : rows) {
              for (int64_t kc = tc.lo; kc < tc.hi; ++kc) {
                const float v = row[tc.start + kc * dw.dilation];
                m = std::max(m, v);
                sum += v;
              }
            }
            if (max) {
              orow[ow] = m;
            } else {
              const int64_t count = count_include_pad_ ? th.with_pad * tc.with_pad : nrows * (tc.hi - tc.lo);
              orow[ow] = count > 0 ? static_cast<float>(sum / count) : std::numeric_limits<float>::quiet_NaN();
            }
          };
          if (nrows == 0 || b <= a) {
            for (int64_t ow = 0; ow < OW; ++ow) scalar(ow);
            continue;
          }
          for (int64_t ow = 0; ow < a; ++ow) scalar(ow);
          for (int64_t ow = b; ow < OW; ++ow) scalar(ow);
          const int64_t m = (b - a - 1) * sw + 1;
          shifted.clear();
          for (const float* row : rows) shifted.push_back(row + dw.taps[a].start);
          float* target = orow + a;
          if (sw != 1) {
            temp.resize(m);
            target = temp.data();
          }
          if (max) {
            MaxTapsRow(shifted.data(), nrows, kw, dw.dilation, target, m);
          } else {
            const int64_t count = (count_include_pad_ ? th.with_pad : nrows) * kw;
            SumTapsRow(shifted.data(), nrows, kw, dw.dilation, 1.0f / static_cast<float>(count), target, m);
          }
          if (sw != 1) {
            for (int64_t j = 0; j < b - a; ++j) orow[a + j] = temp[j * sw];
          }
        }
      }
    });
  }

  template <typename T>
  void RunMax(const KernelContext& ctx, const PoolGeometry& g, const std::vector<Dim>& dims, const T* x, T* y,
              int64_t* indices) const {
    using C = ComputeType<T>;
    const int64_t in_plane = g.in_plane(), out_plane = g.out_plane();
    const int64_t H = dims[1].in, W = dims[2].in;
    ParallelFor(ctx, g.batch * g.channels, out_plane * KernelTaps() * 2, [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        const T* src = x + plane * in_plane;
        T* dst = y + plane * out_plane;
        int64_t* idx = indices ? indices + plane * out_plane : nullptr;
        int64_t o = 0;
        for (const TapRange& ta : dims[0].taps) {
          for (const TapRange& tb : dims[1].taps) {
            for (const TapRange& tc : dims[2].taps) {
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
    ParallelFor(ctx, g.batch * g.channels, out_plane * KernelTaps() * 2, [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        const T* src = x + plane * in_plane;
        T* dst = y + plane * out_plane;
        int64_t o = 0;
        for (const TapRange& ta : dims[0].taps) {
          for (const TapRange& tb : dims[1].taps) {
            for (const TapRange& tc : dims[2].taps) {
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

Status RegisterPools(KernelRegistry& registry) {
  struct Op { const char* name; PoolKind kind; };
  for (const Op& op : {Op{"MaxPool", PoolKind::kMax}, Op{"AveragePool", PoolKind::kAverage}, Op{"LpPool", PoolKind::kLp}}) {
    const PoolKind kind = op.kind;
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, op.name, 1, kOpenEnded, [kind](const KernelInfo& info) {
      return PoolKernel::Create(info, kind);
    }));
  }
  return Status::Ok();
}

}  // namespace onnxflow
