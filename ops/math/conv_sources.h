// Where a convolution's GEMM gets its B operand (the unfolded image) from: Sgemm asks a source for
// one packed block at a time, so the unfolded matrix is built in cache, block by block, and never
// exists whole in memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/gemm.h"

namespace onnxflow {

// Any convolution: each block is unfolded with Im2Col. A 2-D convolution with column stride 2
// (ResNet's and Inception's stems, strided 1x1 projections) first splits the image's even and odd
// columns apart, so that the unfolding copies runs instead of gathering every other element.
class Im2ColSource : public BPanelSource {
 public:
  Im2ColSource(const ConvGeometry& g, const float* image, int64_t channels);
  void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const override;

 private:
  const ConvGeometry& g_;
  const float* image_;
  int64_t channels_;
  Tensor column_phases_;  // undefined unless the column stride is 2
};

// A stride-1 2-D convolution over a zero-padded copy of the image (Hp x Wp per channel). Output
// pixel (oh, ow) becomes column oh * Wp + ow of a grid as wide as the padded image, so the unfolded
// row (c, kh, kw) is the padded image read on from c*Hp*Wp + kh*dh*Wp + kw*dw: one contiguous run,
// packed with plain copies instead of per-pixel index arithmetic. The last (KW-1)*dw columns of
// each grid row wrap into the next row; they are computed too and dropped by CompactBlock.
class ShiftedImageSource : public BPanelSource {
 public:
  // 2-D, stride 1, and the dropped columns cost at most half as much again as the kept ones.
  static bool Applies(const ConvGeometry& g);

  // Copies `channels` planes of `image` into pooled storage, with the padding, on up to `threads` cores.
  ShiftedImageSource(const ConvGeometry& g, const float* image, int64_t channels, int threads);

  // The GEMM's N: output rows times the padded width.
  int64_t grid_columns() const { return out_h_ * padded_w_; }
  // True when no column is dropped (the grid is the output itself).
  bool grid_is_output() const { return padded_w_ == out_w_; }

  void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const override;
  const float* InPlaceRows(const int64_t** offsets) const override {
    *offsets = row_offsets_.data();
    return padded_.data<float>();
  }

  // y[r, oh * OW + ow] = act(grid[r, oh * Wp + ow] + addend[r, oh * OW + ow]) for rows
  // [row0, row0 + rows) (output channels) and the grid columns [col0, col0 + cols) that are kept; the
  // addend may be null. Disjoint blocks of the grid write disjoint parts of y, so the GEMM's tasks
  // compact their own blocks (GemmEpilogue::block_done).
  void CompactBlock(const float* grid, int64_t row0, int64_t rows, int64_t col0, int64_t cols, float* y,
                    const float* addend, const ActivationSpec& act) const;

 private:
  // Where grid column j lands in a dense output row when the dropped columns are squeezed out.
  int64_t OutputIndex(int64_t j) const { return j / padded_w_ * out_w_ + std::min(j % padded_w_, out_w_); }

  int64_t padded_w_ = 0, out_h_ = 0, out_w_ = 0;
  Tensor padded_;                     // channels * Hp * Wp floats and a zero tail for the wrap
  std::vector<int64_t> row_offsets_;  // where unfolded row r starts in padded_
};

// Rows [first_row, first_row + K) of another source, as a source of K rows: one group's part of a
// source that unfolds every group's channels (row (c, kh, kw) of channel c of group grp is row
// grp * (C/group * KH * KW) + ... of the whole).
class RowsOf : public BPanelSource {
 public:
  RowsOf(const BPanelSource& whole, int64_t first_row) : whole_(whole), first_row_(first_row) {}
  void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const override {
    whole_.PackBlock(first_row_ + k0, kc, j0, cols, nr, dst);
  }
  const float* InPlaceRows(const int64_t** offsets) const override {
    const float* base = whole_.InPlaceRows(offsets);
    if (*offsets != nullptr) *offsets += first_row_;
    return base;
  }

 private:
  const BPanelSource& whole_;
  int64_t first_row_;
};

// A 2-D (or 1-D or 3-D) convolution with the output channels in the vector lanes: C [pixels x M] = U [pixels x K] *
// W^T [K x M], where U, the unfolded image, is never built: element (p, k) is read where it lies,
// padded[pixel_offsets[p] + tap_offsets[k]] (GemmInputA's gather). This serves the convolutions the
// image-in-lanes paths serve badly: strided ones (downsampling 3x3), whose B would have to be
// unfolded pixel by pixel, and stride-1 ones on small maps, whose wrapped grid wastes columns. C is
// then transposed into Y block by block (TransposeBlock).
class PixelGather {
 public:
  // 2-D and 3-D, and 1-D as 2-D of height 1.
  static bool Applies(const ConvGeometry& g);

  // Copies `channels` planes of `image` with their padding when there is any (else reads the image
  // itself), on up to `threads` cores.
  PixelGather(const ConvGeometry& g, const float* image, int64_t channels, int threads);

  GemmInputA AsA() const;

  // y[m, p] = act(c[p, m] + addend[m, p]) for pixels [p0, p0 + pixels) and channels [m0, m0 + ms)
  // of an M-channel C; the addend may be null (the bias and the activation may then have been
  // applied in the GEMM's epilogue: pass no activation).
  void TransposeBlock(const float* c, int64_t m_total, int64_t p0, int64_t pixels, int64_t m0, int64_t ms, float* y,
                      const float* addend, const ActivationSpec& act) const;

 private:
  int64_t out_pixels_ = 0;
  Tensor padded_;  // undefined when there is no padding
  const float* base_ = nullptr;
  std::vector<int64_t> pixel_offsets_, tap_offsets_;
};

}  // namespace onnxflow
