#include "ops/math/conv_geometry.h"

#include <algorithm>
#include <cstring>

#include "ops/framework/window_geometry.h"

namespace onnxflow {

Result<AutoPad> ParseAutoPad(const std::string& s) {
  if (s.empty() || s == "NOTSET") return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return InvalidArgument("unknown auto_pad '" + s + "'");
}

Result<ConvAttributes> ParseConvAttributes(const KernelInfo& info) {
  ConvAttributes a;
  ONNXFLOW_ASSIGN_OR_RETURN(a.auto_pad, ParseAutoPad(info.GetString("auto_pad", "NOTSET")));
  a.kernel_shape = info.GetInts("kernel_shape");
  a.strides = info.GetInts("strides");
  a.dilations = info.GetInts("dilations");
  a.pads = info.GetInts("pads");
  a.group = info.GetInt("group", 1);
  if (a.group < 1) return InvalidArgument("group must be positive, got " + std::to_string(a.group));
  for (int64_t v : a.strides) if (v < 1) return InvalidArgument("strides must be positive");
  for (int64_t v : a.dilations) if (v < 1) return InvalidArgument("dilations must be positive");
  for (int64_t v : a.kernel_shape) if (v < 1) return InvalidArgument("kernel_shape must be positive");
  for (int64_t v : a.pads) if (v < 0) return InvalidArgument("pads must be non-negative");
  return a;
}

int64_t ConvGeometry::in_size() const { return ElementCount(in_spatial); }
int64_t ConvGeometry::out_size() const { return ElementCount(out_spatial); }
int64_t ConvGeometry::kernel_size() const { return ElementCount(kernel); }
Shape ConvGeometry::output_shape() const {
  Shape s = {batch, out_channels};
  s.insert(s.end(), out_spatial.begin(), out_spatial.end());
  return s;
}

Result<ConvGeometry> ComputeConvGeometry(const ConvAttributes& attrs, const Shape& x, const Shape& w) {
  if (x.size() < 3) return InvalidArgument("X must have rank >= 3, got " + ShapeToString(x));
  if (w.size() != x.size()) {
    return InvalidArgument("W " + ShapeToString(w) + " must have the rank of X " + ShapeToString(x));
  }
  const size_t nd = x.size() - 2;
  ConvGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.out_channels = w[0];
  g.group = attrs.group;
  if (g.in_channels % g.group != 0 || g.out_channels % g.group != 0) {
    return InvalidArgument("channels of X (" + std::to_string(g.in_channels) + ") and W (" +
                           std::to_string(g.out_channels) + ") must be divisible by group " +
                           std::to_string(g.group));
  }
  if (w[1] != g.in_channels / g.group) {
    return InvalidArgument("W " + ShapeToString(w) + " expects " + std::to_string(w[1] * g.group) +
                           " input channels, X " + ShapeToString(x) + " has " + std::to_string(g.in_channels));
  }
  g.in_spatial.assign(x.begin() + 2, x.end());
  g.kernel = attrs.kernel_shape.empty() ? std::vector<int64_t>(w.begin() + 2, w.end()) : attrs.kernel_shape;
  if (g.kernel.size() != nd) return InvalidArgument("kernel_shape has the wrong rank");
  for (size_t d = 0; d < nd; ++d) {
    if (g.kernel[d] != w[2 + d]) return InvalidArgument("kernel_shape does not match W " + ShapeToString(w));
  }
  g.strides = attrs.strides.empty() ? std::vector<int64_t>(nd, 1) : attrs.strides;
  g.dilations = attrs.dilations.empty() ? std::vector<int64_t>(nd, 1) : attrs.dilations;
  if (g.strides.size() != nd || g.dilations.size() != nd) {
    return InvalidArgument("strides/dilations must have one value per spatial axis");
  }
  if (!attrs.pads.empty() && attrs.pads.size() != 2 * nd) {
    return InvalidArgument("pads must have 2 values per spatial axis");
  }
  g.pads_begin.assign(nd, 0);
  g.pads_end.assign(nd, 0);
  g.out_spatial.assign(nd, 0);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t in = g.in_spatial[d], s = g.strides[d];
    int64_t span = 0;
    if (!CheckedDilatedWindow(g.kernel[d], g.dilations[d], &span)) {
      return InvalidArgument("attribute 'dilations' (" + std::to_string(g.dilations[d]) + ") makes the kernel on spatial axis " +
                             std::to_string(d) + " longer than any input");
    }
    switch (attrs.auto_pad) {
      case AutoPad::kNotSet:
        if (!attrs.pads.empty()) {
          g.pads_begin[d] = attrs.pads[d];
          g.pads_end[d] = attrs.pads[d + nd];
        }
        break;
      case AutoPad::kValid:
        break;
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        const AxisPads same = SamePads(in, s, span, attrs.auto_pad == AutoPad::kSameUpper);
        g.pads_begin[d] = same.begin;
        g.pads_end[d] = same.end;
        break;
      }
    }
    int64_t padded = 0;
    if (__builtin_add_overflow(in, g.pads_begin[d], &padded) || __builtin_add_overflow(padded, g.pads_end[d], &padded)) {
      return InvalidArgument("attribute 'pads' (" + std::to_string(g.pads_begin[d]) + ", " +
                             std::to_string(g.pads_end[d]) + ") on spatial axis " + std::to_string(d) +
                             " makes the padded input longer than any tensor");
    }
    if (padded < span) {
      return InvalidArgument("the kernel (extent " + std::to_string(span) + ") does not fit the padded input (" +
                             std::to_string(padded) + ") on spatial axis " + std::to_string(d));
    }
    g.out_spatial[d] = FloorWindowCount(padded, span, s);
  }
  return g;
}

// Runs of output columns up to this long are unfolded element by element (Im2Col).
constexpr int64_t kShortIm2ColRun = 8;

void Im2Col(const ConvGeometry& g, const float* image, int64_t channels, int64_t row0, int64_t row1, int64_t col0,
            int64_t col1, int64_t ld, float* dst, const float* column_phases) {
  const int64_t nd = static_cast<int64_t>(g.kernel.size());
  const int64_t in_size = g.in_size(), ksize = g.kernel_size();
  row1 = std::min(row1, channels * ksize);
  std::vector<int64_t> kpos(nd), opos(nd);
  auto at = [&](int64_t r, int64_t j) -> float* { return dst + (r - row0) * ld + (j - col0); };
  if (nd == 2) {  // the common case, with the inner loop over output columns
    const int64_t ih_n = g.in_spatial[0], iw_n = g.in_spatial[1], ow_n = g.out_spatial[1];
    const int64_t oh0 = col0 / ow_n, ow0 = col0 % ow_n;
    // Row r is (channel c, tap kh, kw), stepped rather than divided out of r at every row: four
    // divisions a row were most of a small map's unfolding.
    int64_t c = row0 / ksize, kh = row0 % ksize / g.kernel[1], kw = row0 % ksize % g.kernel[1];
    for (int64_t r = row0; r < row1; ++r, ++kw) {
      if (kw == g.kernel[1]) {
        kw = 0;
        if (++kh == g.kernel[0]) {
          kh = 0;
          ++c;
        }
      }
      const float* src = image + c * in_size;
      int64_t oh = oh0, ow = ow0;
      for (int64_t j = col0; j < col1;) {
        const int64_t ih = oh * g.strides[0] - g.pads_begin[0] + kh * g.dilations[0];
        const int64_t run = std::min(ow_n - ow, col1 - j);
        const bool row_inside = ih >= 0 && ih < ih_n;
        float* out_ptr = at(r, j);
        if (run <= kShortIm2ColRun) {
          // A map of a few columns: element by element, no fill and copy calls a row. With the
          // stepped rows above: a face model's head, 2 outputs over 128 channels x 9 taps on a 2 x 2
          // map, 0.020 -> 0.013 ms (the whole model 0.068 -> 0.062).
          const int64_t s = g.strides[1];
          const int64_t iw0 = ow * s - g.pads_begin[1] + kw * g.dilations[1];
          const float* srow = src + (row_inside ? ih : 0) * iw_n;
          for (int64_t q = 0; q < run; ++q) {
            const int64_t iw = iw0 + q * s;
            out_ptr[q] = row_inside && iw >= 0 && iw < iw_n ? srow[iw] : 0.0f;
          }
        } else if (!row_inside) {
          std::fill(out_ptr, out_ptr + run, 0.0f);
        } else {
          // Columns q in [q_lo, q_hi) read inside the row; the rest are padding.
          const float* srow = src + ih * iw_n;
          const int64_t s = g.strides[1];
          const int64_t iw0 = ow * s - g.pads_begin[1] + kw * g.dilations[1];
          // Ceilings of non-negative quotients written without a + s - 1, which a stride near
          // INT64_MAX (one output column) would overflow.
          auto ceil_div = [s](int64_t a) { return a / s + (a % s != 0); };
          const int64_t q_lo = std::min(run, iw0 >= 0 ? int64_t{0} : ceil_div(-iw0));
          const int64_t q_hi = std::max(q_lo, std::min(run, iw0 < iw_n ? ceil_div(iw_n - iw0) : int64_t{0}));
          std::fill(out_ptr, out_ptr + q_lo, 0.0f);
          if (s == 1) {
            std::memcpy(out_ptr + q_lo, srow + iw0 + q_lo, static_cast<size_t>(q_hi - q_lo) * sizeof(float));
          } else if (s == 2 && column_phases != nullptr && q_hi > q_lo) {
            const int64_t iw = iw0 + q_lo * 2;  // first column read; the rest share its parity
            const float* phase_row = column_phases + ((c * 2 + (iw & 1)) * ih_n + ih) * ((iw_n + 1) / 2);
            std::memcpy(out_ptr + q_lo, phase_row + iw / 2, static_cast<size_t>(q_hi - q_lo) * sizeof(float));
          } else {
            const float* sp = srow + iw0 + q_lo * s;
            for (int64_t q = q_lo; q < q_hi; ++q, sp += s) out_ptr[q] = *sp;
          }
          std::fill(out_ptr + q_hi, out_ptr + run, 0.0f);
        }
        j += run;
        ow = 0;
        ++oh;
      }
    }
    return;
  }
  for (int64_t r = row0; r < row1; ++r) {
    const int64_t c = r / ksize;
    int64_t krem = r % ksize;
    for (int64_t d = nd - 1; d >= 0; --d) { kpos[d] = krem % g.kernel[d]; krem /= g.kernel[d]; }
    const float* src = image + c * in_size;
    for (int64_t j = col0; j < col1; ++j) {
      int64_t rem = j, offset = 0;
      bool inside = true;
      for (int64_t d = nd - 1; d >= 0; --d) { opos[d] = rem % g.out_spatial[d]; rem /= g.out_spatial[d]; }
      for (int64_t d = 0; d < nd; ++d) {
        const int64_t i = opos[d] * g.strides[d] - g.pads_begin[d] + kpos[d] * g.dilations[d];
        if (i < 0 || i >= g.in_spatial[d]) { inside = false; break; }
        offset = offset * g.in_spatial[d] + i;
      }
      *at(r, j) = inside ? src[offset] : 0.0f;
    }
  }
}

ConvGeometry AsPlane(const ConvGeometry& g) {
  if (g.kernel.size() != 1) return g;
  ConvGeometry p = g;
  for (auto* v : {&p.in_spatial, &p.out_spatial, &p.kernel, &p.strides, &p.dilations}) v->insert(v->begin(), 1);
  for (auto* v : {&p.pads_begin, &p.pads_end}) v->insert(v->begin(), 0);
  return p;
}

bool IsPointwise(const ConvGeometry& g) {
  for (size_t d = 0; d < g.kernel.size(); ++d) {
    if (g.kernel[d] != 1 || g.strides[d] != 1 || g.pads_begin[d] != 0 || g.pads_end[d] != 0) return false;
  }
  return true;
}

}  // namespace onnxflow
