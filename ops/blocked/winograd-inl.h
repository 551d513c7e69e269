// SIMD part of the Winograd convolution (winograd.cc): the input and output transforms of
// F(4x4, 3x3), on channel-blocked tensors with the channels in the lanes, so a transform is the
// same few adds on every lane and needs no shuffles. Compiled once per CPU target through
// hwy/foreach_target.h; the driver never touches vectors.
//
// With d a 6x6 input patch and g a 3x3 filter,
//   V = B^T d B,   U = G g G^T (at load; for 16-bit weights by each task), M = sum over input channels of U . V,   Y = A^T M A
// gives the 4x4 outputs of the cross-correlation (ONNX's Conv) of the patch with g. The matrices
// are Toom-Cook's for the points 0, 1, -1, 1/2, -2 and infinity, those of F(4x4, 3x3) with the
// least float error (Barabasz et al., 2020). Against a float64 convolution, 64 -> 64 channels on
// 26x26 (outputs of rms 1): 9.9e-6 at most, where Lavin & Gray's points 0, +-1, +-2 gave 2.4e-5
// and 0, +-1, +-1/2 2.7e-5 (the direct sum: 7.8e-7). Lavin & Gray's made a random-weight
// Inception v3 miss ONNX Runtime's outputs by 5.4e-4 (1e-4 + 1e-3 |x| allowed).

#if defined(ONNXFLOW_OPS_BLOCKED_WINOGRAD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_WINOGRAD_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_WINOGRAD_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_WINOGRAD_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "ops/blocked/load_weights-inl.h"
#include "ops/blocked/winograd_tiles.h"
#include "ops/math/activate-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using WinoD = hn::CappedTag<float, kChannelBlock>;
using WinoV = hn::Vec<WinoD>;

// The transforms, a row per point (0, 1, -1, 1/2, -2, infinity). B^T (input) and A^T (output)
// are exact in float; G (weights) has thirds and fifteenths, rounded.
constexpr float kInputMatrix[kWinogradPatch][kWinogradPatch] = {
    {1, -1.5f, -2, 1.5f, 1, 0},  {0, -1, 0.5f, 2.5f, 1, 0},  {0, 1, -2.5f, 0.5f, 1, 0},
    {0, -2, -1, 2, 1, 0},        {0, 0.5f, -1, -0.5f, 1, 0}, {0, 1, -1.5f, -2, 1.5f, 1}};
constexpr float kOutputMatrix[kWinogradTile][kWinogradPatch] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, 0.5f, -2, 0}, {0, 1, 1, 0.25f, 4, 0}, {0, 1, -1, 0.125f, -8, 1}};
constexpr float kWeightMatrix[kWinogradPatch][3] = {
    {1, 0, 0},          {1.0f / 3, 1.0f / 3, 1.0f / 3},     {-1.0f / 3, 1.0f / 3, -1.0f / 3},
    {-16.0f / 15, -8.0f / 15, -4.0f / 15}, {1.0f / 15, -2.0f / 15, 4.0f / 15}, {0, 0, 1}};

// r = matrix s on one column (or row) of a tile: unrolled over the constant matrix, each row a
// chain of adds and multiply-adds that skips its zeros and multiplies by no +-1.
template <size_t kOut, size_t kIn>
HWY_INLINE void MatrixRows(WinoD d, const float (&matrix)[kOut][kIn], const WinoV* s, WinoV* r) {
  HWY_UNROLL(6)
  for (size_t i = 0; i < kOut; ++i) {
    WinoV sum = hn::Zero(d);
    bool first = true;
    HWY_UNROLL(6)
    for (size_t j = 0; j < kIn; ++j) {
      const float c = matrix[i][j];
      if (c == 0.0f) continue;
      if (first) {
        sum = c == 1.0f ? s[j] : c == -1.0f ? hn::Neg(s[j]) : hn::Mul(hn::Set(d, c), s[j]);
        first = false;
      } else {
        sum = c == 1.0f ? hn::Add(sum, s[j]) : c == -1.0f ? hn::Sub(sum, s[j]) : hn::MulAdd(hn::Set(d, c), s[j], sum);
      }
    }
    r[i] = sum;
  }
}

// B^T on one column (or row) of six: r = B^T d.
HWY_INLINE void InputRows(WinoD d, const WinoV* s, WinoV* r) { MatrixRows(d, kInputMatrix, s, r); }

// A^T on one column (or row) of six: o = A^T m.
HWY_INLINE void OutputRows(WinoD d, const WinoV* m, WinoV* o) { MatrixRows(d, kOutputMatrix, m, o); }
// V = B^T d B of one tile's patch, 16 channels wide at most (`lanes`), from the patch's top-left
// pixel; `Inside` says whether every pixel (h0 + r, w0 + c) is in the image: the rest read as zeros.
template <bool kInside, class T>
HWY_INLINE void InputTile(WinoD d, const T* HWY_RESTRICT x, int64_t height, int64_t width, int64_t h0,
                          int64_t w0, float* HWY_RESTRICT v, int64_t xi_stride) {
  // Columns first: t[i][c] = sum_r B^T[i][r] d[r][c].
  WinoV t[kWinogradPatch][kWinogradPatch];
  HWY_UNROLL(6)
  for (size_t c = 0; c < kWinogradPatch; ++c) {
    WinoV col[kWinogradPatch];
    HWY_UNROLL(6)
    for (size_t r = 0; r < kWinogradPatch; ++r) {
      const int64_t h = h0 + static_cast<int64_t>(r), w = w0 + static_cast<int64_t>(c);
      const bool real = kInside || (h >= 0 && h < height && w >= 0 && w < width);
      col[r] = real ? LoadWeights(d, x + (h * width + w) * kChannelBlock) : hn::Zero(d);
    }
    WinoV rows[kWinogradPatch];
    InputRows(d, col, rows);
    HWY_UNROLL(6)
    for (size_t i = 0; i < kWinogradPatch; ++i) t[i][c] = rows[i];
  }
  // Then rows: V[i][j] = sum_c t[i][c] B^T[j][c].
  HWY_UNROLL(6)
  for (size_t i = 0; i < kWinogradPatch; ++i) {
    WinoV row[kWinogradPatch];
    InputRows(d, t[i], row);
    HWY_UNROLL(6)
    for (size_t j = 0; j < kWinogradPatch; ++j) hn::StoreU(row[j], d, v + (i * kWinogradPatch + j) * xi_stride);
  }
}

// V for tiles [tile0, tile1) of one input block: element (xi, tile, lane) goes to
// v[xi * xi_stride + (tile - first_tile) * 16 + lane]. Pixels outside the image (the padding, and past the
// bottom-right edge) read as zeros.
template <class T>
void WinogradInputTiles(const WinogradInput& in, int64_t tile0, int64_t tile1) {
  const WinoD d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const T* x = static_cast<const T*>(in.x);
  for (int64_t tile = tile0; tile < tile1; ++tile) {
    float* v = in.v + (tile - in.first_tile) * kChannelBlock;
    // A tile writes 36 lines far apart in V, too many streams for the hardware prefetcher: ask
    // for the next tile's while this one is transformed.
    if (tile + 1 < tile1) {
      HWY_UNROLL(36)
      for (size_t xi = 0; xi < kWinogradPoints; ++xi) __builtin_prefetch(v + kChannelBlock + xi * in.xi_stride, /*rw=*/1);
    }
    const int64_t h0 = (tile / in.tiles_w) * kWinogradTile - in.top;
    const int64_t w0 = (tile % in.tiles_w) * kWinogradTile - in.left;
    const bool inside = h0 >= 0 && w0 >= 0 && h0 + kWinogradPatch <= in.height && w0 + kWinogradPatch <= in.width;
    for (int64_t lane = 0; lane < kChannelBlock; lane += lanes) {
      if (inside) {
        InputTile<true>(d, x + lane, in.height, in.width, h0, w0, v + lane, in.xi_stride);
      } else {
        InputTile<false>(d, x + lane, in.height, in.width, h0, w0, v + lane, in.xi_stride);
      }
    }
  }
}

void WinogradInputImpl(const WinogradInput& in, int64_t tile0, int64_t tile1) {
  if (in.half) {
    WinogradInputTiles<hwy::float16_t>(in, tile0, tile1);
  } else {
    WinogradInputTiles<float>(in, tile0, tile1);
  }
}

// One tile of one output block: Y = A^T M A plus the bias and the residual, through the
// activation, into the `rows` x `cols` pixels of the tile that lie inside the output. The kind of
// activation is a template argument: a switch per stored vector costs the common Relu a fifth of
// the transform.
template <EpilogueKind kEpilogue, class T>
HWY_INLINE void OutputTile(WinoD d, const float* HWY_RESTRICT m, int64_t xi_stride, WinoV bias,
                           const T* residual, T* y, int64_t row_stride, int64_t rows, int64_t cols,
                           const ActivationSpec& activation) {
  // Columns first: s[p][j] = sum_i A^T[p][i] M[i][j].
  WinoV s[kWinogradTile][kWinogradPatch];
  HWY_UNROLL(6)
  for (size_t j = 0; j < kWinogradPatch; ++j) {
    WinoV col[kWinogradPatch];
    HWY_UNROLL(6)
    for (size_t i = 0; i < kWinogradPatch; ++i) col[i] = hn::LoadU(d, m + (i * kWinogradPatch + j) * xi_stride);
    WinoV o[kWinogradTile];
    OutputRows(d, col, o);
    HWY_UNROLL(4)
    for (size_t p = 0; p < kWinogradTile; ++p) s[p][j] = o[p];
  }
  for (int64_t p = 0; p < rows; ++p) {
    WinoV out[kWinogradTile];
    OutputRows(d, s[p], out);
    T* row = y + p * row_stride;
    const T* residual_row = residual != nullptr ? residual + p * row_stride : nullptr;
    for (int64_t q = 0; q < cols; ++q) {
      WinoV v = hn::Add(out[q], bias);
      if (residual_row != nullptr) v = hn::Add(v, LoadWeights(d, residual_row + q * kChannelBlock));
      StoreAs(d, ApplyEpilogue<kEpilogue>(d, activation, v), row + q * kChannelBlock);
    }
  }
}

// Y for the task's tiles and output blocks, from M (WinogradOutput), block by block so that
// neighbouring tiles read neighbouring lines of M and write neighbouring pixels.
template <EpilogueKind kEpilogue, class T>
void WinogradOutputBlocks(const WinogradOutput& out) {
  const WinoD d;
  T* y = static_cast<T*>(out.y);
  const T* residual = static_cast<const T*>(out.residual);
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t xi_stride = out.blocks * out.tiles * kChannelBlock;
  const int64_t row_stride = out.width * kChannelBlock;
  for (int64_t b = 0; b < out.blocks; ++b) {
    for (int64_t t = 0; t < out.tiles; ++t) {
      const float* m = out.m + (b * out.tiles + t) * kChannelBlock;
      // The 36 points of a tile are 36 lines far apart in M, too many streams for the hardware
      // prefetcher: ask for the next tile's while this one is transformed.
      if (t + 1 < out.tiles) {
        HWY_UNROLL(36)
        for (size_t xi = 0; xi < kWinogradPoints; ++xi) hwy::Prefetch(m + kChannelBlock + xi * xi_stride);
      }
      const int64_t tile = out.tile0 + t;
      const int64_t h0 = (tile / out.tiles_w) * kWinogradTile, w0 = (tile % out.tiles_w) * kWinogradTile;
      const int64_t rows = std::min(kWinogradTile, out.height - h0), cols = std::min(kWinogradTile, out.width - w0);
      const int64_t at = b * out.y_block_stride + (h0 * out.width + w0) * kChannelBlock;
      for (int64_t lane = 0; lane < kChannelBlock; lane += lanes) {
        const WinoV bias = out.bias != nullptr ? hn::LoadU(d, out.bias + b * kChannelBlock + lane) : hn::Zero(d);
        OutputTile<kEpilogue>(d, m + lane, xi_stride, bias, residual != nullptr ? residual + at + lane : nullptr,
                              y + at + lane, row_stride, rows, cols, out.activation);
      }
    }
  }
}

void WinogradOutputImpl(const WinogradOutput& out) {
  WithEpilogueKind(out.activation, [&](auto tag) {
    if (out.half) {
      WinogradOutputBlocks<decltype(tag)::value, hwy::float16_t>(out);
    } else {
      WinogradOutputBlocks<decltype(tag)::value, float>(out);
    }
  });
}

// r = G s on one column (or row) of three filter taps s (kWeightMatrix, rounded to float).
HWY_INLINE void WeightRows(WinoD d, const WinoV* s, WinoV* r) { MatrixRows(d, kWeightMatrix, s, r); }

// U of a group (WinogradWeights), an input channel at a time: its 36 points for every output
// channel go to a scratch first, then to U point by point, whole rows of `width` at once (the 36
// points are 36 far-apart rows of U; stored a vector at a time they contend for the same cache
// sets, and the transform took 10x its arithmetic).
template <class TW>
void GroupWeights(const WinogradWeights& p) {
  const WinoD d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t point_stride = p.in_width * p.width;
  const TW* HWY_RESTRICT g = static_cast<const TW*>(p.g);
  HWY_ALIGN float points[kWinogradPoints * kGroupChannels];
  for (int64_t c = 0; c < p.in_width; ++c) {
    for (int64_t o = 0; o < p.width; o += lanes) {
      // t[i][b] = sum_a G[i][a] g[a][b]: G on each column of the filter.
      WinoV t[kWinogradPatch][3];
      HWY_UNROLL(3)
      for (size_t b = 0; b < 3; ++b) {
        WinoV col[3], rows[kWinogradPatch];
        HWY_UNROLL(3)
        for (size_t a = 0; a < 3; ++a) col[a] = LoadWeights(d, g + (c * 9 + static_cast<int64_t>(a * 3 + b)) * p.ldg + o);
        WeightRows(d, col, rows);
        HWY_UNROLL(6)
        for (size_t i = 0; i < kWinogradPatch; ++i) t[i][b] = rows[i];
      }
      // U[i][j] = sum_b t[i][b] G[j][b]: G on each row of t.
      HWY_UNROLL(6)
      for (size_t i = 0; i < kWinogradPatch; ++i) {
        WinoV row[kWinogradPatch];
        WeightRows(d, t[i], row);
        HWY_UNROLL(6)
        for (size_t j = 0; j < kWinogradPatch; ++j) hn::Store(row[j], d, points + (i * kWinogradPatch + j) * kGroupChannels + o);
      }
    }
    for (int64_t xi = 0; xi < kWinogradPoints; ++xi) {
      std::copy_n(points + xi * kGroupChannels, p.width, p.u + xi * point_stride + c * p.width);
    }
  }
}

void WinogradWeightsImpl(const WinogradWeights& p) {
  WithWeightType(p.type, [&](auto weight) { GroupWeights<decltype(weight)>(p); });
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_WINOGRAD_INL_H_
