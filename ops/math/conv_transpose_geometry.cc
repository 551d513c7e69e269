#include "ops/math/conv_transpose_geometry.h"

#include <string>

#include "ops/framework/shape.h"
#include "ops/framework/window_geometry.h"

namespace onnxflow {
namespace {

// stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1: the output before pads, refused
// when hostile strides, dilations or output_padding would carry it past INT64_MAX.
Result<int64_t> FullOutput(const TransposeGeometry& g, const std::vector<int64_t>& out_pad, size_t d) {
  int64_t step = 0, window = 0, full = 0;
  if (!CheckedDilatedWindow(g.kernel[d], g.dilations[d], &window) ||
      __builtin_mul_overflow(g.strides[d], g.in_spatial[d] - 1, &step) ||
      __builtin_add_overflow(step, out_pad[d], &full) || __builtin_add_overflow(full, window, &full)) {
    return InvalidArgument("ConvTranspose: attributes 'strides', 'dilations' and 'output_padding' make spatial axis " +
                           std::to_string(d) + " of the output longer than any tensor");
  }
  return full;
}

}  // namespace

int64_t TransposeGeometry::in_size() const { return ElementCount(in_spatial); }
int64_t TransposeGeometry::out_size() const { return ElementCount(out_spatial); }
int64_t TransposeGeometry::kernel_size() const { return ElementCount(kernel); }

Result<TransposeAttributes> ParseTransposeAttributes(const KernelInfo& info) {
  TransposeAttributes a;
  ONNXFLOW_ASSIGN_OR_RETURN(a.conv, ParseConvAttributes(info));
  a.output_padding = info.GetInts("output_padding");
  a.output_shape = info.GetInts("output_shape");
  return a;
}

Result<TransposeGeometry> ComputeTransposeGeometry(const TransposeAttributes& attrs, const Shape& x, const Shape& w) {
  const ConvAttributes& conv = attrs.conv;
  if (x.size() < 3 || w.size() != x.size()) {
    return InvalidArgument("ConvTranspose: X " + ShapeToString(x) + " and W " + ShapeToString(w) +
                           " must have the same rank >= 3");
  }
  const size_t nd = x.size() - 2;
  TransposeGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.group = conv.group;
  if (g.group <= 0 || w[0] != g.in_channels || g.in_channels % g.group != 0) {
    return InvalidArgument("ConvTranspose: W " + ShapeToString(w) + " does not match the " +
                           std::to_string(g.in_channels) + " channels of X in " + std::to_string(g.group) + " groups");
  }
  g.out_channels = w[1] * g.group;
  g.in_spatial.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  if (!conv.kernel_shape.empty() && conv.kernel_shape != g.kernel) {
    return InvalidArgument("ConvTranspose: kernel_shape does not match W " + ShapeToString(w));
  }
  g.strides = conv.strides.empty() ? std::vector<int64_t>(nd, 1) : conv.strides;
  g.dilations = conv.dilations.empty() ? std::vector<int64_t>(nd, 1) : conv.dilations;
  std::vector<int64_t> out_pad = attrs.output_padding.empty() ? std::vector<int64_t>(nd, 0) : attrs.output_padding;
  if (g.strides.size() != nd || g.dilations.size() != nd || out_pad.size() != nd ||
      (!conv.pads.empty() && conv.pads.size() != 2 * nd)) {
    return InvalidArgument("ConvTranspose: strides, dilations, output_padding and pads need one value per axis");
  }
  std::vector<int64_t> requested = attrs.output_shape;
  if (requested.size() == nd + 2) requested.erase(requested.begin(), requested.begin() + 2);
  if (!requested.empty() && requested.size() != nd) {
    return InvalidArgument("ConvTranspose: output_shape needs one value per spatial axis");
  }
  const bool same = conv.auto_pad == AutoPad::kSameUpper || conv.auto_pad == AutoPad::kSameLower;
  g.pads_begin.assign(nd, 0);
  g.out_spatial.assign(nd, 0);
  for (size_t d = 0; d < nd; ++d) {
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t full, FullOutput(g, out_pad, d));
    const std::string axis = " on spatial axis " + std::to_string(d);
    if (!requested.empty() || same) {
      int64_t target = 0, total = 0;
      if (!requested.empty()) {
        target = requested[d];
        if (target < 0) return InvalidArgument("ConvTranspose: attribute 'output_shape' is negative" + axis);
      } else if (__builtin_mul_overflow(g.in_spatial[d], g.strides[d], &target)) {
        return InvalidArgument("ConvTranspose: attribute 'strides' makes the output too long" + axis);
      }
      if (__builtin_sub_overflow(full, target, &total)) {
        return InvalidArgument("ConvTranspose: attribute 'output_shape' is too far from the full output" + axis);
      }
      g.pads_begin[d] = conv.auto_pad == AutoPad::kSameUpper ? FloorDiv(total, 2) : total - FloorDiv(total, 2);
      g.out_spatial[d] = target;
    } else {
      int64_t pb = 0, pe = 0;
      if (!conv.pads.empty() && conv.auto_pad != AutoPad::kValid) {
        pb = conv.pads[d];
        pe = conv.pads[d + nd];
      }
      g.pads_begin[d] = pb;
      if (__builtin_sub_overflow(full, pb, &g.out_spatial[d]) ||
          __builtin_sub_overflow(g.out_spatial[d], pe, &g.out_spatial[d]) || g.out_spatial[d] < 0) {
        return InvalidArgument("ConvTranspose: attribute 'pads' (" + std::to_string(pb) + ", " + std::to_string(pe) +
                               ") leaves a negative output size" + axis);
      }
    }
  }
  return g;
}

}  // namespace onnxflow
