#include "ops/tensor/permute.h"

#include <algorithm>
#include <string>

#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/tensor/tensor_util.h"
#include "ops/tensor/transpose_bytes.h"
#include "ops/tensor/transpose_words.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

// Elements per side of one tile of the blocked 2-D transpose: a 32x32 tile of 4-byte elements
// is 4 KB read plus 4 KB written, well inside L1, and each output row of a tile is two cache lines.
constexpr int64_t kTile = 32;

// The permutation with size-1 dims dropped and runs of dims that stay adjacent merged into one.
struct SimplePermutation {
  Shape in_shape;                 // merged input dims
  std::vector<int64_t> perm;      // over the merged dims
};

SimplePermutation Simplify(const Shape& shape, const std::vector<int64_t>& perm) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  // Input dims that survive (size != 1), renumbered.
  std::vector<int64_t> new_index(rank, -1);
  Shape kept;
  for (int64_t a = 0; a < rank; ++a) {
    if (shape[a] != 1) {
      new_index[a] = static_cast<int64_t>(kept.size());
      kept.push_back(shape[a]);
    }
  }
  std::vector<int64_t> p;
  for (int64_t a : perm) {
    if (new_index[a] >= 0) p.push_back(new_index[a]);
  }
  // Merge output neighbours that read neighbouring input dims: group[k] = first input dim of a run.
  std::vector<std::vector<int64_t>> runs;  // in output order, each a run of consecutive input dims
  for (int64_t a : p) {
    if (!runs.empty() && runs.back().back() + 1 == a) {
      runs.back().push_back(a);
    } else {
      runs.push_back({a});
    }
  }
  // Order the runs by their first input dim to number the merged input dims.
  std::vector<int64_t> order(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return runs[x][0] < runs[y][0]; });
  SimplePermutation s;
  s.in_shape.resize(runs.size());
  s.perm.resize(runs.size());
  for (size_t merged = 0; merged < order.size(); ++merged) {
    const auto& run = runs[order[merged]];
    int64_t size = 1;
    for (int64_t a : run) size *= kept[a];
    s.in_shape[merged] = size;
    s.perm[order[merged]] = static_cast<int64_t>(merged);
  }
  return s;
}

// out[b][c][r] = in[b][r][c] for `batches` matrices of rows x cols, tiled for the cache.
template <typename T>
void BatchedTranspose2D(const KernelContext& ctx, const T* in, T* out, int64_t batches, int64_t rows, int64_t cols) {
  // Bytes of few rows (a 3-channel image into channels-last) take wider tiles, about 4 KB each,
  // so that transpose_bytes.h's interleave runs whole vectors (a 32-column tile of 3 rows is 96
  // bytes, under one AVX-512 vector a row).
  const int64_t tile = sizeof(T) == 1 ? std::max(kTile, 4096 / std::max<int64_t>(rows, 1)) : kTile;
  const int64_t col_tiles = (cols + tile - 1) / tile;
  // One work item = one tile column of one matrix (`tile` output rows).
  ParallelFor(ctx, batches * col_tiles, tile * rows * kCopyCostPerElement, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / col_tiles;
      const int64_t c0 = (item % col_tiles) * tile;
      const int64_t c1 = std::min(c0 + tile, cols);
      const T* src = in + b * rows * cols;
      T* dst = out + b * rows * cols;
      if constexpr (sizeof(T) == 1) {  // transpose_bytes.h: SIMD tiles
        TransposeBytes(reinterpret_cast<const uint8_t*>(src) + c0, cols, reinterpret_cast<uint8_t*>(dst) + c0 * rows,
                       rows, rows, c1 - c0);
        continue;
      }
      for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
        const int64_t r1 = std::min(r0 + kTile, rows);
        if constexpr (sizeof(T) == 4) {  // transpose_words.h: 16 x 16 tiles in registers
          TransposeWords(reinterpret_cast<const uint32_t*>(src + r0 * cols + c0), cols,
                         reinterpret_cast<uint32_t*>(dst + c0 * rows + r0), rows, r1 - r0, c1 - c0);
          continue;
        }
        for (int64_t c = c0; c < c1; ++c) {
          for (int64_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
        }
      }
    }
  });
}

// Any permutation that keeps the input's last dim last: each output row is one contiguous copy.
template <typename T>
void PermuteRows(const KernelContext& ctx, const T* in, T* out, const Shape& out_shape,
                 const std::vector<int64_t>& src_stride) {
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  const int64_t inner = out_shape[rank - 1];
  const int64_t rows = SizeToDim(out_shape, rank - 1);
  ParallelFor(ctx, rows, inner * kCopyCostPerElement, [&](int64_t begin, int64_t end) {
    // Multi-index of row `begin` over the output's leading dims, then step it like an odometer.
    std::vector<int64_t> idx(rank - 1, 0);
    int64_t offset = 0;
    int64_t rest = begin;
    for (int64_t d = rank - 2; d >= 0; --d) {
      idx[d] = rest % out_shape[d];
      rest /= out_shape[d];
      offset += idx[d] * src_stride[d];
    }
    for (int64_t row = begin; row < end; ++row) {
      std::copy_n(in + offset, inner, out + row * inner);
      for (int64_t d = rank - 2; d >= 0; --d) {
        offset += src_stride[d];
        if (++idx[d] < out_shape[d]) break;
        offset -= idx[d] * src_stride[d];
        idx[d] = 0;
      }
    }
  });
}

// Any other permutation: output dim `a` reads the input's contiguous dim and the output's last
// dim reads some strided input dim. For every index of the remaining dims this is a 2-D
// transpose between those two dims, done in cache tiles so that both the reads (along a) and the
// writes (along the last dim) use whole cache lines.
template <typename T>
void PermuteTiled(const KernelContext& ctx, const T* in, T* out, const Shape& out_shape,
                  const std::vector<int64_t>& src_stride, int64_t a) {
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  const int64_t b = rank - 1;
  const std::vector<int64_t> dst_stride = Strides(out_shape);
  const int64_t na = out_shape[a], nb = out_shape[b];
  const int64_t src_b = src_stride[b];   // input stride along the output's last dim
  const int64_t dst_a = dst_stride[a];   // output stride along dim a
  const int64_t a_tiles = (na + kTile - 1) / kTile;
  // Dims other than a and b, outermost first.
  std::vector<int64_t> rest_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != a && d != b) rest_dims.push_back(d);
  }
  int64_t outer = 1;
  for (int64_t d : rest_dims) outer *= out_shape[d];
  // One work item = one tile row (kTile values of dim a, all of dim b) of one outer index.
  ParallelFor(ctx, outer * a_tiles, kTile * nb * kCopyCostPerElement, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t o = item / a_tiles;
      const int64_t a0 = (item % a_tiles) * kTile;
      const int64_t a1 = std::min(a0 + kTile, na);
      int64_t src_base = 0, dst_base = 0;
      for (size_t k = rest_dims.size(); k-- > 0;) {
        const int64_t d = rest_dims[k];
        const int64_t i = o % out_shape[d];
        o /= out_shape[d];
        src_base += i * src_stride[d];
        dst_base += i * dst_stride[d];
      }
      for (int64_t b0 = 0; b0 < nb; b0 += kTile) {
        const int64_t b1 = std::min(b0 + kTile, nb);
        for (int64_t ia = a0; ia < a1; ++ia) {
          const T* src = in + src_base + ia;  // input stride along a is 1
          T* dst = out + dst_base + ia * dst_a;
          for (int64_t ib = b0; ib < b1; ++ib) dst[ib] = src[ib * src_b];
        }
      }
    }
  });
}

template <typename T>
void GeneralPermute(const KernelContext& ctx, const T* in, T* out, const Shape& in_shape,
                    const std::vector<int64_t>& perm) {
  const int64_t rank = static_cast<int64_t>(perm.size());
  const std::vector<int64_t> in_strides = Strides(in_shape);
  Shape out_shape(rank);
  std::vector<int64_t> src_stride(rank);  // input stride for each output dim
  int64_t a = rank - 1;                   // the output dim that reads the input's last dim
  for (int64_t i = 0; i < rank; ++i) {
    out_shape[i] = in_shape[perm[i]];
    src_stride[i] = in_strides[perm[i]];
    if (perm[i] == rank - 1) a = i;
  }
  if (a == rank - 1) {
    PermuteRows(ctx, in, out, out_shape, src_stride);
  } else {
    PermuteTiled(ctx, in, out, out_shape, src_stride, a);
  }
}

}  // namespace

Status ValidatePermutation(const std::vector<int64_t>& perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank) {
    return InvalidArgument("perm has " + std::to_string(perm.size()) + " entries but the input has rank " +
                           std::to_string(rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t a : perm) {
    if (a < 0 || a >= rank || seen[a]) {
      return InvalidArgument("perm " + ShapeToString(perm) + " is not a permutation of [0, " + std::to_string(rank) + ")");
    }
    seen[a] = true;
  }
  return Status::Ok();
}

Status Permute(const KernelContext& ctx, const Tensor& in, const Shape& in_shape, const std::vector<int64_t>& perm,
               Tensor* out) {
  if (in.size() == 0) return Status::Ok();
  const SimplePermutation s = Simplify(in_shape, perm);
  return DispatchBySize(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = in.data<T>();
    T* dst = out->mutable_data<T>();
    const size_t rank = s.perm.size();
    if (rank <= 1) {
      // Only the order of size-1 dims changed: the bytes are identical.
      ParallelFor(ctx, in.size(), kCopyCostPerElement, [&](int64_t b, int64_t e) { std::copy(src + b, src + e, dst + b); });
    } else if (rank == 2 && s.perm[0] == 1) {
      BatchedTranspose2D(ctx, src, dst, 1, s.in_shape[0], s.in_shape[1]);
    } else if (rank == 3 && s.perm[0] == 0 && s.perm[1] == 2 && s.perm[2] == 1) {
      BatchedTranspose2D(ctx, src, dst, s.in_shape[0], s.in_shape[1], s.in_shape[2]);
    } else {
      GeneralPermute(ctx, src, dst, s.in_shape, s.perm);
    }
    return Status::Ok();
  });
}

}  // namespace tensor_ops
}  // namespace onnxflow
