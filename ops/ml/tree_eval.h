// Running a tree ensemble over the rows of X, shared by TreeEnsemble-5 and the opset 1-4
// regressor and classifier: the FlatForest when the model has one (else TreeModel, a row at a
// time), rows read in place when their type is the one compared in (float or double) and
// converted a block at a time otherwise, batches split over the cores by rows, and one row's
// trees split over the cores when that pays. Each row's scores (votes aggregated, base values
// added, no post transform) go to emit(row, scores), scores writable and n_targets long; they do
// not depend on the number of threads: a row's votes are always added in tree order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/ml/numeric_rows.h"
#include "ops/ml/tree_flat.h"
#include "ops/ml/tree_model.h"

namespace onnxflow {

// Operations counted per comparison a row makes, for ParallelFor's cost: with 16 walks side by
// side a comparison took 2.3-3.1 ns on one core (xgb_bin_b1000 2.4M in 5.6 ms, rf_b1000 0.97M
// in 2.8 ms, lgbm_b10000 28M in 88 ms), some 8 cycles.
inline constexpr int64_t kTreeStepCost = 8;
// A single row's trees are split over the cores from this many comparisons in all. Measured on
// the 500-tree LightGBM model of tree_models.py (~2800 comparisons a row) repeated, 1 -> 2
// threads: 500 trees 7 -> 7-8 us, 1000 trees 14 -> 14-16 us, 2000 trees 32 -> 25 us, 5000
// trees 89 -> 58 us: waking the other core costs about what 1000 such trees take.
inline constexpr int64_t kTreeSplitSteps = 8192;
// Trees per task when one row's trees are split: 4 fills of the 16 lanes, several tasks per core
// (the leaves are added afterwards in tree order, so the split never changes a result).
inline constexpr int64_t kTreesPerTask = 64;

template <typename Emit>
Status EvaluateTreeRows(const KernelContext& ctx, const TreeModel& model, const FlatForest* flat, const Tensor& x,
                        int64_t rows, int64_t cols, bool allow_float16, Emit&& emit) {
  ONNXFLOW_ASSIGN_OR_RETURN(RowLoader load, NumericRowLoader(x.dtype(), "X", allow_float16));
  if (rows > 0 && model.max_feature() >= cols) {
    return OutOfRange("a node reads feature " + std::to_string(model.max_feature()) + " but X has " +
                      std::to_string(cols) + " features");
  }
  const int64_t n_targets = model.n_targets;
  if (flat == nullptr) {
    const int64_t cost = static_cast<int64_t>(model.roots.size()) * 16 + cols;
    ParallelFor(ctx, rows, cost, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(cols));
      std::vector<double> scores(static_cast<size_t>(n_targets));
      for (int64_t r = begin; r < end; ++r) {
        load(x.raw_data(), r * cols, cols, row.data());
        model.AggregateVotes(row.data(), scores.data());
        emit(r, scores.data());
      }
    });
    return Status::Ok();
  }
  // Float rows compare in float (float16 widened to float first); every other type in double.
  const bool in_float = flat->compares_float() && (x.dtype() == DataType::kFloat || x.dtype() == DataType::kFloat16);
  if (!in_float && !flat->compares_double()) {
    return InvalidArgument(std::string("X is ") + DataTypeName(x.dtype()) + ", but the model was loaded for float rows");
  }
  const float* direct_float = in_float && x.dtype() == DataType::kFloat ? x.data<float>() : nullptr;
  const double* direct_double = x.dtype() == DataType::kDouble ? x.data<double>() : nullptr;
  // Rows [r0, r0 + n) in the compared type: in place, or converted into `fbuf` / `dbuf`. One of
  // the two pointers is set.
  struct Rows {
    const float* f = nullptr;
    const double* d = nullptr;
  };
  auto rows_at = [&](int64_t r0, int64_t n, std::vector<float>& fbuf, std::vector<double>& dbuf) {
    if (direct_float != nullptr) return Rows{direct_float + r0 * cols, nullptr};
    if (direct_double != nullptr) return Rows{nullptr, direct_double + r0 * cols};
    dbuf.resize(static_cast<size_t>(n * cols));
    load(x.raw_data(), r0 * cols, n * cols, dbuf.data());
    if (!in_float) return Rows{nullptr, dbuf.data()};
    fbuf.assign(dbuf.begin(), dbuf.end());  // float16 widened through double: exact
    return Rows{fbuf.data(), nullptr};
  };

  const double steps = static_cast<double>(flat->n_trees()) * std::max(flat->mean_depth(), 1.0);
  if (rows == 1 && ctx.threads() > 1 && steps >= static_cast<double>(kTreeSplitSteps)) {
    std::vector<float> fbuf;
    std::vector<double> dbuf;
    const Rows row = rows_at(0, 1, fbuf, dbuf);
    const int64_t trees = flat->n_trees();
    std::vector<int32_t> leaves(static_cast<size_t>(trees));
    ParallelChunks((trees + kTreesPerTask - 1) / kTreesPerTask, 1, [&](int64_t c0, int64_t c1) {
      const int64_t t0 = c0 * kTreesPerTask, t1 = std::min(trees, c1 * kTreesPerTask);
      if (row.f != nullptr) flat->FindLeaves(row.f, t0, t1, leaves.data());
      else flat->FindLeaves(row.d, t0, t1, leaves.data());
    });
    std::vector<double> scores(static_cast<size_t>(n_targets));
    flat->AggregateLeaves(leaves.data(), scores.data());
    emit(int64_t{0}, scores.data());
    return Status::Ok();
  }

  // Blocks of up to FlatForest::kRowBlock rows, at least one per core while each keeps a lane
  // group full, split over the cores by ParallelFor.
  const int64_t cost = static_cast<int64_t>(steps) * kTreeStepCost + cols;
  const int64_t min_blocks = std::min<int64_t>(ctx.threads(), (rows + 15) / 16);
  const int64_t wanted = std::max((rows + FlatForest::kRowBlock - 1) / FlatForest::kRowBlock, min_blocks);
  const int64_t per_block = wanted > 0 ? (rows + wanted - 1) / wanted : 1;
  const int64_t blocks = (rows + per_block - 1) / per_block;  // none empty
  ParallelFor(ctx, blocks, cost * per_block, [&](int64_t b0, int64_t b1) {
    std::vector<float> fbuf;
    std::vector<double> dbuf;
    std::vector<double> scores(static_cast<size_t>(per_block * n_targets));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * per_block, n = std::min(per_block, rows - r0);
      const Rows block = rows_at(r0, n, fbuf, dbuf);
      if (block.f != nullptr) flat->ScoreRows(block.f, cols, n, scores.data());
      else flat->ScoreRows(block.d, cols, n, scores.data());
      for (int64_t i = 0; i < n; ++i) emit(r0 + i, scores.data() + i * n_targets);
    }
  });
  return Status::Ok();
}

}  // namespace onnxflow
