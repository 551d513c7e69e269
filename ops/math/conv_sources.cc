#include "ops/math/conv_sources.h"

#include <algorithm>
#include <cstring>

#include "ops/framework/parallel.h"

namespace onnxflow {
namespace {
// Floats readable past the last grid column when the GEMM reads the image in place (a 64-lane
// vector at most).
constexpr int64_t kInPlaceSlack = 64;

// The image plane's size with the convolution's pads around it.
struct PaddedPlane {
  int64_t h, w;
};
PaddedPlane Padded(const ConvGeometry& g) {
  return {g.in_spatial[0] + g.pads_begin[0] + g.pads_end[0], g.in_spatial[1] + g.pads_begin[1] + g.pads_end[1]};
}

// Copies `channels` [H, W] planes of `image` into dst as zero-padded [Hp, Wp] planes (the pads of
// a 2-D convolution), on up to `threads` cores.
void CopyPadded(const ConvGeometry& g, const float* image, int64_t channels, float* dst, int threads) {
  const int64_t h = g.in_spatial[0], w = g.in_spatial[1];
  const int64_t top = g.pads_begin[0], left = g.pads_begin[1];
  const auto [padded_h, padded_w] = Padded(g);
  const int64_t plane = padded_h * padded_w;
  ParallelFor(threads, channels, MacCost(plane), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      float* out = dst + c * plane;
      const float* src = image + c * h * w;
      std::memset(out, 0, top * padded_w * sizeof(float));
      for (int64_t y = 0; y < h; ++y) {
        float* row = out + (top + y) * padded_w;
        std::memset(row, 0, left * sizeof(float));
        std::memcpy(row + left, src + y * w, w * sizeof(float));
        std::memset(row + left + w, 0, (padded_w - left - w) * sizeof(float));
      }
      std::memset(out + (top + h) * padded_w, 0, (padded_h - top - h) * padded_w * sizeof(float));
    }
  });
}

// The same for any rank (a 3-D convolution's volumes): each padded volume zeroed, then every
// innermost row of the image copied to its place.
void CopyPaddedVolume(const ConvGeometry& g, const std::vector<int64_t>& extent, const float* image, int64_t channels,
                      float* dst, int threads) {
  const size_t nd = extent.size();
  int64_t volume = 1, in_volume = 1;
  for (size_t d = 0; d < nd; ++d) {
    volume *= extent[d];
    in_volume *= g.in_spatial[d];
  }
  // An image with a 0-long axis, padded out to a window, is pads alone.
  const int64_t row = g.in_spatial[nd - 1], rows = in_volume == 0 ? 0 : in_volume / row;
  ParallelFor(threads, channels, MacCost(volume), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      float* out = dst + c * volume;
      std::memset(out, 0, volume * sizeof(float));
      for (int64_t r = 0; r < rows; ++r) {
        int64_t rest = r, at = g.pads_begin[nd - 1], scale = extent[nd - 1];
        for (size_t d = nd - 1; d-- > 0;) {
          at += (rest % g.in_spatial[d] + g.pads_begin[d]) * scale;
          rest /= g.in_spatial[d];
          scale *= extent[d];
        }
        std::memcpy(out + at, image + c * in_volume + r * row, row * sizeof(float));
      }
    }
  });
}

}  // namespace

Im2ColSource::Im2ColSource(const ConvGeometry& g, const float* image, int64_t channels)
    : g_(g), image_(image), channels_(channels) {
  if (g.kernel.size() == 2 && g.strides[1] == 2) {
    const int64_t h = g.in_spatial[0], w = g.in_spatial[1];
    column_phases_ = Tensor::Uninitialized(DataType::kFloat, {channels * 2 * h * ((w + 1) / 2)});
    SplitColumnPhases(image, channels, h, w, column_phases_.mutable_data<float>());
  }
}

void Im2ColSource::PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const {
  for (int64_t t = 0; t * nr < cols; ++t) {
    float* strip = dst + t * kc * nr;
    const int64_t width = std::min(nr, cols - t * nr);
    Im2Col(g_, image_, channels_, k0, k0 + kc, j0 + t * nr, j0 + t * nr + width, nr, strip,
           column_phases_.defined() ? column_phases_.data<float>() : nullptr);
    if (width < nr) {
      for (int64_t r = 0; r < kc; ++r) std::memset(strip + r * nr + width, 0, (nr - width) * sizeof(float));
    }
  }
}

bool ShiftedImageSource::Applies(const ConvGeometry& g) {
  if (g.kernel.size() != 2 || g.strides[0] != 1 || g.strides[1] != 1) return false;
  const int64_t padded_h = g.in_spatial[0] + g.pads_begin[0] + g.pads_end[0];
  const int64_t padded_w = g.in_spatial[1] + g.pads_begin[1] + g.pads_end[1];
  // Stride 1 makes the output exactly the positions where the dilated kernel fits the padded image.
  if (g.out_spatial[0] != padded_h - (g.kernel[0] - 1) * g.dilations[0] ||
      g.out_spatial[1] != padded_w - (g.kernel[1] - 1) * g.dilations[1] || g.out_spatial[1] <= 0) {
    return false;
  }
  return 2 * padded_w <= 3 * g.out_spatial[1];
}

ShiftedImageSource::ShiftedImageSource(const ConvGeometry& g, const float* image, int64_t channels, int threads) {
  const PaddedPlane padded = Padded(g);
  const int64_t padded_h = padded.h;
  padded_w_ = padded.w;
  out_h_ = g.out_spatial[0];
  out_w_ = g.out_spatial[1];
  const int64_t plane = padded_h * padded_w_;
  const int64_t wrap = (g.kernel[1] - 1) * g.dilations[1];
  // The wrapped columns of the last row, then slack for a whole vector read past the grid's end.
  const int64_t tail = wrap + kInPlaceSlack;
  padded_ = Tensor::Uninitialized(DataType::kFloat, {channels * plane + tail});
  float* p = padded_.mutable_data<float>();
  CopyPadded(g, image, channels, p, threads);
  std::memset(p + channels * plane, 0, tail * sizeof(float));

  const int64_t ksize = g.kernel[0] * g.kernel[1];
  row_offsets_.resize(channels * ksize);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
        row_offsets_[(c * g.kernel[0] + kh) * g.kernel[1] + kw] =
            c * plane + kh * g.dilations[0] * padded_w_ + kw * g.dilations[1];
      }
    }
  }
}

void ShiftedImageSource::PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr,
                                   float* dst) const {
  const float* p = padded_.data<float>();
  const int64_t strips = (cols + nr - 1) / nr;
  const int64_t tail = cols - (strips - 1) * nr;  // columns in the last strip
  for (int64_t r = 0; r < kc; ++r) {
    const float* src = p + row_offsets_[k0 + r] + j0;
    float* d = dst + r * nr;
    for (int64_t t = 0; t + 1 < strips; ++t) std::memcpy(d + t * kc * nr, src + t * nr, nr * sizeof(float));
    float* last = d + (strips - 1) * kc * nr;
    std::memcpy(last, src + (strips - 1) * nr, tail * sizeof(float));
    std::memset(last + tail, 0, (nr - tail) * sizeof(float));
  }
}

void ShiftedImageSource::CompactBlock(const float* grid, int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                                      float* y, const float* addend, const ActivationSpec& act) const {
  const int64_t plane = out_h_ * out_w_;
  const int64_t col1 = col0 + cols;
  const int64_t out0 = OutputIndex(col0), out1 = OutputIndex(col1);
  for (int64_t r = row0; r < row0 + rows; ++r) {
    const float* src = grid + r * grid_columns();
    float* dst = y + r * plane;
    // Grid row by grid row: the kept part of each that falls inside [col0, col1).
    for (int64_t j = col0; j < col1;) {
      const int64_t row_start = j / padded_w_ * padded_w_;
      const int64_t kept_end = std::min(row_start + out_w_, col1);
      if (j < kept_end) std::memcpy(dst + OutputIndex(j), src + j, (kept_end - j) * sizeof(float));
      j = row_start + padded_w_;
    }
    AddThenActivate(act, addend != nullptr ? addend + r * plane + out0 : nullptr, dst + out0, out1 - out0);
  }
}

// ComputeConvGeometry has already refused negative pads (explicit ones; SAME pads are never negative).
// The padded copy may be at most twice the image and the windows the output reads: pads far past
// the kernel with strides that step over them (a hostile model: a few output pixels over a padded
// volume of terabytes) are left to Im2ColSource, which reads the pads as zeros without storing them.
// In double: the padded volume of such a geometry may pass INT64_MAX.
bool PixelGather::Applies(const ConvGeometry& g) {
  if (g.kernel.empty() || g.kernel.size() > 3) return false;
  double padded = 1, image = 1, window = 1;
  for (size_t d = 0; d < g.kernel.size(); ++d) {
    padded *= static_cast<double>(g.in_spatial[d] + g.pads_begin[d] + g.pads_end[d]);
    image *= static_cast<double>(g.in_spatial[d]);
    window *= static_cast<double>(g.kernel[d]);
  }
  return padded <= 2 * (image + static_cast<double>(g.out_size()) * window);
}

PixelGather::PixelGather(const ConvGeometry& geometry, const float* image, int64_t channels, int threads) {
  const ConvGeometry g = AsPlane(geometry);  // 2-D or 3-D from here
  const size_t nd = g.kernel.size();
  // The padded image's extent per axis, and how far apart its neighbours are along it.
  std::vector<int64_t> extent(nd), step(nd, 1);
  for (size_t d = 0; d < nd; ++d) extent[d] = g.in_spatial[d] + g.pads_begin[d] + g.pads_end[d];
  for (size_t d = nd - 1; d-- > 0;) step[d] = step[d + 1] * extent[d + 1];
  const int64_t plane = step[0] * extent[0];
  base_ = image;
  if (extent != g.in_spatial) {
    padded_ = Tensor::Uninitialized(DataType::kFloat, {channels * plane});
    float* p = padded_.mutable_data<float>();
    if (nd == 2) {
      CopyPadded(g, image, channels, p, threads);
    } else {
      CopyPaddedVolume(g, extent, image, channels, p, threads);
    }
    base_ = p;
  }
  // The output size was computed from the padded size, so every pixel's window lies inside it.
  // Offsets by odometer over the output's (then the window's) axes, the last fastest.
  auto offsets = [&](const std::vector<int64_t>& sizes, const std::vector<int64_t>& scale, int64_t count,
                     std::vector<int64_t>* out) {
    std::vector<int64_t> index(nd, 0);
    out->resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      int64_t at = 0;
      for (size_t d = 0; d < nd; ++d) at += index[d] * scale[d];
      (*out)[static_cast<size_t>(i)] = at;
      for (size_t d = nd; d-- > 0;) {
        if (++index[d] < sizes[d]) break;
        index[d] = 0;
      }
    }
  };
  std::vector<int64_t> pixel_scale(nd), tap_scale(nd);
  // An axis with one output pixel (one tap) never steps: its stride (dilation) may be anything up to
  // INT64_MAX, and times the step it would overflow. Any other step stays inside the padded image.
  for (size_t d = 0; d < nd; ++d) {
    pixel_scale[d] = g.out_spatial[d] > 1 ? g.strides[d] * step[d] : 0;
    tap_scale[d] = g.kernel[d] > 1 ? g.dilations[d] * step[d] : 0;
  }
  out_pixels_ = g.out_size();
  offsets(g.out_spatial, pixel_scale, out_pixels_, &pixel_offsets_);
  std::vector<int64_t> window;
  offsets(g.kernel, tap_scale, g.kernel_size(), &window);
  tap_offsets_.resize(static_cast<size_t>(channels) * window.size());
  for (int64_t c = 0; c < channels; ++c) {
    for (size_t t = 0; t < window.size(); ++t) tap_offsets_[c * window.size() + t] = c * plane + window[t];
  }
}

GemmInputA PixelGather::AsA() const {
  GemmInputA a;
  a.gather_base = base_;
  a.gather_rows = pixel_offsets_.data();
  a.gather_cols = tap_offsets_.data();
  return a;
}

void PixelGather::TransposeBlock(const float* c, int64_t m_total, int64_t p0, int64_t pixels, int64_t m0, int64_t ms,
                                 float* y, const float* addend, const ActivationSpec& act) const {
  // 16 pixels at a time: their rows of C stay in L1 while each channel's run of Y is written.
  constexpr int64_t kPixels = 16;
  for (int64_t pb = p0; pb < p0 + pixels; pb += kPixels) {
    const int64_t pe = std::min(pb + kPixels, p0 + pixels);
    for (int64_t m = m0; m < m0 + ms; ++m) {
      float* dst = y + m * out_pixels_;
      for (int64_t p = pb; p < pe; ++p) dst[p] = c[p * m_total + m];
    }
  }
  if (addend == nullptr && act.kind == Activation::kNone) return;
  for (int64_t m = m0; m < m0 + ms; ++m) {
    const int64_t at = m * out_pixels_ + p0;
    AddThenActivate(act, addend != nullptr ? addend + at : nullptr, y + at, pixels);
  }
}

}  // namespace onnxflow
