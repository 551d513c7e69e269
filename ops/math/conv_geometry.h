// Attributes and output geometry shared by the convolution ops (Conv, ConvInteger, QLinearConv,
// DeformConv, FusedConv): kernel shape, strides, dilations, pads and auto_pad, checked against the
// input and weight shapes of one run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel_info.h"

namespace onnxflow {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

struct ConvAttributes {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape;  // empty: taken from W
  std::vector<int64_t> strides;       // empty: all 1
  std::vector<int64_t> dilations;     // empty: all 1
  std::vector<int64_t> pads;          // empty: all 0; else begin..., end...
  int64_t group = 1;
};

Result<ConvAttributes> ParseConvAttributes(const KernelInfo& info);
Result<AutoPad> ParseAutoPad(const std::string& s);

// Everything one convolution run needs to know about sizes. Spatial vectors have one entry per
// spatial axis.
struct ConvGeometry {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  std::vector<int64_t> in_spatial, out_spatial, kernel, strides, dilations, pads_begin, pads_end;
  int64_t in_size() const;      // product of in_spatial
  int64_t out_size() const;     // product of out_spatial
  int64_t kernel_size() const;  // product of kernel
  Shape output_shape() const;   // [batch, out_channels, out_spatial...]
};

// X is [N, C, D1..Dn], W is [M, C/group, k1..kn]. Errors name the mismatch.
Result<ConvGeometry> ComputeConvGeometry(const ConvAttributes& attrs, const Shape& x, const Shape& w);

// [N, D1..Dn, C] -> [N, C, D1..Dn] (the shape the geometry reads of a channels-last tensor), and back.
inline Shape ChannelsFirst(const Shape& s) {
  Shape r = {s[0], s.back()};
  r.insert(r.end(), s.begin() + 1, s.end() - 1);
  return r;
}
inline Shape ChannelsLast(const Shape& s) {
  Shape r = {s[0]};
  r.insert(r.end(), s.begin() + 2, s.end());
  r.push_back(s[1]);
  return r;
}

// A 1x1 window, stride 1 and no pads: output pixel p reads input pixel p alone.
bool IsPointwise(const ConvGeometry& g);

// A 1-D convolution as the 2-D one of height 1 it is, for the paths written for images; any other
// geometry as it is.
ConvGeometry AsPlane(const ConvGeometry& g);

// Unfolds one group of one image into the GEMM's B operand: row r = (c, k1..kn) of
// channels * kernel_size rows, column p = output position; values outside the image are 0.
// Writes rows [row0, row1) of columns [col0, col1): element (r, j) goes to
// dst[(r - row0) * ld + j - col0], so one packed B strip is (col0 = t*nr, ld = nr) and a whole
// row-major matrix is (0, rows, 0, N, N).
// For a 2-D convolution with column stride 2, `column_phases` may hold the image's even and odd
// columns apart (SplitColumnPhases): every strided run then reads contiguous memory.
void Im2Col(const ConvGeometry& g, const float* image, int64_t channels, int64_t row0, int64_t row1, int64_t col0,
            int64_t col1, int64_t ld, float* dst, const float* column_phases = nullptr);

// Element (c, h, 2q + p) of a [channels, H, W] image goes to phases[((c * 2 + p) * H + h) * ((W + 1) / 2) + q]:
// the layout Im2Col's column_phases expects. `phases` holds channels * 2 * H * ((W + 1) / 2) floats.
void SplitColumnPhases(const float* image, int64_t channels, int64_t height, int64_t width, float* phases);

// Direct convolution in any arithmetic, for double/integer types and as the tests' reference:
// y[n, m, p] = sum (x - x_zero) * (w - w_zero[m]) over the window, plus bias[m] when given.
template <typename TX, typename TW, typename TAcc>
void DirectConv(const ConvGeometry& g, const TX* x, const TW* w, const TAcc* bias, TAcc x_zero,
                const TAcc* w_zero /* per output channel or null */, TAcc* y) {
  const int64_t nd = static_cast<int64_t>(g.kernel.size());
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const int64_t in_size = g.in_size(), out_size = g.out_size(), ksize = g.kernel_size();
  std::vector<int64_t> opos(nd), kpos(nd);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.out_channels; ++m) {
      const int64_t grp = m / mg;
      const TAcc wz = w_zero != nullptr ? w_zero[m] : TAcc(0);
      for (int64_t p = 0; p < out_size; ++p) {
        int64_t rem = p;
        for (int64_t d = nd - 1; d >= 0; --d) { opos[d] = rem % g.out_spatial[d]; rem /= g.out_spatial[d]; }
        TAcc sum = bias != nullptr ? bias[m] : TAcc(0);
        for (int64_t c = 0; c < cg; ++c) {
          const TX* xc = x + (n * g.in_channels + grp * cg + c) * in_size;
          const TW* wc = w + (m * cg + c) * ksize;
          for (int64_t kk = 0; kk < ksize; ++kk) {
            int64_t krem = kk, offset = 0;
            bool inside = true;
            for (int64_t d = nd - 1; d >= 0; --d) { kpos[d] = krem % g.kernel[d]; krem /= g.kernel[d]; }
            for (int64_t d = 0; d < nd; ++d) {
              const int64_t i = opos[d] * g.strides[d] - g.pads_begin[d] + kpos[d] * g.dilations[d];
              if (i < 0 || i >= g.in_spatial[d]) { inside = false; break; }
              offset = offset * g.in_spatial[d] + i;
            }
            if (!inside) continue;
            sum += (static_cast<TAcc>(xc[offset]) - x_zero) * (static_cast<TAcc>(wc[kk]) - wz);
          }
        }
        y[(n * g.out_channels + m) * out_size + p] = sum;
      }
    }
  }
}

}  // namespace onnxflow

namespace onnxflow {

// The adjoint of Im2Col: adds col [channels * kernel_size, prod(grid)] into image [channels,
// prod(image_spatial)]. Column p is a position on `grid`; its window starts at
// p * stride - pads_begin and steps by dilation. Values that land outside the image are dropped.
template <typename T>
void Col2ImAdd(const std::vector<int64_t>& image_spatial, const std::vector<int64_t>& grid,
               const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
               const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads_begin, int64_t channels,
               const T* col, T* image) {
  const int64_t nd = static_cast<int64_t>(kernel.size());
  int64_t ksize = 1, positions = 1, image_size = 1;
  for (int64_t d = 0; d < nd; ++d) {
    ksize *= kernel[d];
    positions *= grid[d];
    image_size *= image_spatial[d];
  }
  std::vector<int64_t> kpos(nd), gpos(nd);
  for (int64_t r = 0; r < channels * ksize; ++r) {
    const int64_t c = r / ksize;
    int64_t krem = r % ksize;
    for (int64_t d = nd - 1; d >= 0; --d) { kpos[d] = krem % kernel[d]; krem /= kernel[d]; }
    T* img = image + c * image_size;
    const T* src = col + r * positions;
    std::fill(gpos.begin(), gpos.end(), 0);
    for (int64_t p = 0; p < positions; ++p) {
      int64_t offset = 0;
      bool inside = true;
      for (int64_t d = 0; d < nd; ++d) {
        const int64_t i = gpos[d] * strides[d] - pads_begin[d] + kpos[d] * dilations[d];
        if (i < 0 || i >= image_spatial[d]) { inside = false; break; }
        offset = offset * image_spatial[d] + i;
      }
      if (inside) img[offset] += src[p];
      for (int64_t d = nd - 1; d >= 0; --d) {
        if (++gpos[d] < grid[d]) break;
        gpos[d] = 0;
      }
    }
  }
}

}  // namespace onnxflow
