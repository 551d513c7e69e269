#include "ops/nn/pool_geometry.h"

#include <algorithm>

#include "ops/framework/window_geometry.h"

namespace onnxflow {

Result<PoolAttributes> PoolAttributes::Parse(const KernelInfo& info) {
  PoolAttributes a;
  a.kernel = info.GetInts("kernel_shape");
  a.strides = info.GetInts("strides");
  a.dilations = info.GetInts("dilations");
  a.pads = info.GetInts("pads");
  a.auto_pad = info.GetString("auto_pad", "NOTSET");
  a.ceil_mode = info.GetInt("ceil_mode", 0) != 0;
  if (a.kernel.empty()) return InvalidArgument("attribute 'kernel_shape' is required");
  const size_t rank = a.kernel.size();
  for (int64_t k : a.kernel) if (k <= 0) return InvalidArgument("kernel_shape values must be positive");
  if (!a.strides.empty() && a.strides.size() != rank) return InvalidArgument("'strides' must have one value per kernel dim");
  if (!a.dilations.empty() && a.dilations.size() != rank) return InvalidArgument("'dilations' must have one value per kernel dim");
  if (!a.pads.empty() && a.pads.size() != 2 * rank) return InvalidArgument("'pads' must have two values per kernel dim");
  for (int64_t s : a.strides) if (s <= 0) return InvalidArgument("strides must be positive");
  for (int64_t d : a.dilations) if (d <= 0) return InvalidArgument("dilations must be positive");
  for (int64_t p : a.pads) if (p < 0) return InvalidArgument("pads must not be negative");
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER") {
    return InvalidArgument("unknown auto_pad '" + a.auto_pad + "'");
  }
  return a;
}

int64_t PoolGeometry::in_plane() const { return ElementCount(in); }
int64_t PoolGeometry::out_plane() const { return ElementCount(out); }
int64_t PoolGeometry::taps_estimate() const {
  constexpr int64_t kCap = int64_t{1} << 20;
  int64_t taps = 1;
  for (size_t i = 0; i < kernel.size(); ++i) taps = std::min(kCap, taps * std::min({kernel[i], in[i], kCap}));
  return std::max<int64_t>(taps, 1);
}

Result<PoolGeometry> ComputePoolGeometry(const PoolAttributes& a, const Shape& input) {
  const size_t rank = a.kernel.size();
  if (input.size() != rank + 2) {
    return InvalidArgument("input shape " + ShapeToString(input) + " does not match a " + std::to_string(rank) +
                           "-D kernel (expected [N, C] + " + std::to_string(rank) + " spatial dims)");
  }
  PoolGeometry g;
  g.batch = input[0];
  g.channels = input[1];
  g.in.assign(input.begin() + 2, input.end());
  g.kernel = a.kernel;
  g.strides = a.strides.empty() ? std::vector<int64_t>(rank, 1) : a.strides;
  g.dilations = a.dilations.empty() ? std::vector<int64_t>(rank, 1) : a.dilations;
  g.pad_begin.assign(rank, 0);
  g.pad_end.assign(rank, 0);
  g.out.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = g.in[i], s = g.strides[i];
    // Attributes near 2^62 (a hostile model) must not wrap any of these sums: checked, or written so
    // that no step passes INT64_MAX.
    int64_t window = 0;
    if (!CheckedDilatedWindow(g.kernel[i], g.dilations[i], &window)) {
      return InvalidArgument("attribute 'dilations' (" + std::to_string(g.dilations[i]) +
                             ") makes the pooling window on spatial axis " + std::to_string(i) + " longer than any input");
    }
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      g.out[i] = in / s + (in % s != 0);
      const AxisPads same = SamePads(in, s, window, a.auto_pad == "SAME_UPPER");
      g.pad_begin[i] = same.begin;
      g.pad_end[i] = same.end;
    } else {
      if (a.auto_pad == "NOTSET" && !a.pads.empty()) {
        g.pad_begin[i] = a.pads[i];
        g.pad_end[i] = a.pads[i + rank];
      }
      int64_t padded = 0;
      if (__builtin_add_overflow(in, g.pad_begin[i], &padded) || __builtin_add_overflow(padded, g.pad_end[i], &padded)) {
        return InvalidArgument("attribute 'pads' (" + std::to_string(g.pad_begin[i]) + ", " + std::to_string(g.pad_end[i]) +
                               ") on spatial axis " + std::to_string(i) + " makes the padded input longer than any tensor");
      }
      if (padded < window) {
        // ONNX's formula floors (padded - window) / stride + 1, 0 here. ONNX Runtime truncates the
        // quotient toward zero instead, so a window longer than the padded input by less than a
        // stride still has one output, over the part of it that holds input (with ceil_mode too).
        // Models exported for it rely on that: PP-OCR's text-direction classifier pools 2 x 2 by
        // 2 a map 1 high when its crops are 32 px high or less. Short by one to two strides: no
        // output; by more, refused as ONNX Runtime refuses it.
        const int64_t outputs = 1 - (window - padded) / s;
        if (in < 1 || outputs < 0) {
          return InvalidArgument("pooling window " + std::to_string(window) + " is larger than padded input dim " +
                                 std::to_string(padded));
        }
        g.out[i] = outputs;
        continue;
      }
      if (a.ceil_mode) {
        const int64_t span = padded - window;
        g.out[i] = span / s + (span % s != 0) + 1;
        // A last window that starts in the right padding is dropped (past INT64_MAX it surely does).
        int64_t last = 0;
        if (__builtin_mul_overflow(g.out[i] - 1, s, &last) || last >= in + g.pad_begin[i]) --g.out[i];
      } else {
        g.out[i] = FloorWindowCount(padded, window, s);
      }
    }
  }
  return g;
}

WindowTaps TapsOf(int64_t start, int64_t kernel, int64_t dilation, int64_t in, int64_t pad_end) {
  const auto taps_before = [&](int64_t limit) {  // taps k with start + k * dilation < limit
    return start >= limit ? int64_t{0} : std::min(kernel, (limit - 1 - start) / dilation + 1);
  };
  WindowTaps t;
  t.start = start;
  t.lo = taps_before(0);
  t.hi = std::max(t.lo, taps_before(in));
  t.with_pad = taps_before(in + pad_end);
  return t;
}

WindowTaps TapsOf(const PoolGeometry& g, size_t axis, int64_t o) {
  return TapsOf(o * g.strides[axis] - g.pad_begin[axis], g.kernel[axis], g.dilations[axis], g.in[axis],
                g.pad_end[axis]);
}

}  // namespace onnxflow
