// A TreeModel compiled once at load into the form rows are descended in: one array of 16-byte
// nodes (24 with double thresholds) where a branch picks child[goes_true] without a jump, every
// leaf is a node that points at itself (so a walk that reached a leaf can keep stepping while the
// other walks beside it finish), and each node's comparison reduced to x <= t, x < t or x == t
// plus "NaN goes true" (GT, GTE and NEQ swap their children). Several walks step together so the
// dependent loads of one hide behind the others': rows of a batch on one tree in lock step, the
// trees of one row with a finished walk's lane taking the next tree.
//
// Results equal TreeModel::AggregateVotes bit for bit: each row adds its trees' votes in tree
// order, in double. Float (and float16) rows are compared in float against thresholds rounded
// toward the side that keeps every comparison's outcome (x <= t is x <= round_down(t) for any
// float x, x < t is x < round_up(t)), so the answer is that of comparing the float widened to
// double with the double threshold, as TreeModel and ONNX Runtime do.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/ml/tree_model.h"

namespace onnxflow {

class FlatForest {
 public:
  // Null when the model has BRANCH_MEMBER nodes or a NaN threshold, or more than 2^28 features
  // or nodes: TreeModel evaluates those itself.
  static std::unique_ptr<FlatForest> Build(const TreeModel& model);
  // Build, then the model's trees dropped (TreeModel::DropTrees) when the forest holds them, so a
  // kernel holds a large forest once; null, and `model` as it was, otherwise. `rows` is X's type
  // as the graph declares it: float or float16 rows that compare in float never read the double
  // nodes, which then go (rf_b1000: 3.2 of its 5.3 MB of nodes); kUndefined keeps both.
  static std::unique_ptr<FlatForest> Take(TreeModel& model, DataType rows);

  // Whether float rows may be compared in float: false when an EQ/NEQ threshold is no float.
  bool compares_float() const { return compares_float_; }
  // Whether rows compared in double can be scored (Take kept the double nodes).
  bool compares_double() const { return !double_nodes_.empty() || roots_.empty(); }
  int64_t n_trees() const { return static_cast<int64_t>(roots_.size()); }
  int64_t n_targets() const { return n_targets_; }
  // Comparisons a row makes on average over the trees (for cost estimates).
  double mean_depth() const { return mean_depth_; }

  // Rows ScoreRows scores together: each tree is walked by all of them before the next tree, so
  // the tree's nodes are fetched once for the block. One thread, rf_b1000 (100 trees of depth
  // 10, 2.1 MB of nodes): 64 rows 3.25 ms, 256 rows 2.75 ms; xgb_bin_b1000 (0.8 MB) and
  // lgbm_b10000 (0.5 MB) the same within 2-4%.
  static constexpr int64_t kRowBlock = 256;

  // Aggregated scores (votes, average, base values; no post transform) of rows
  // x[r * stride, r * stride + features), r in [0, n), into scores[r * n_targets, ...).
  void ScoreRows(const float* x, int64_t stride, int64_t n, double* scores) const;
  void ScoreRows(const double* x, int64_t stride, int64_t n, double* scores) const;

  // One row: the leaf each tree in [t0, t1) sends it to, into leaves[t] (t indexes all trees).
  void FindLeaves(const float* x, int64_t t0, int64_t t1, int32_t* leaves) const;
  void FindLeaves(const double* x, int64_t t0, int64_t t1, int32_t* leaves) const;
  // The row's scores from its leaf in every tree, added in tree order (as ScoreRows does).
  void AggregateLeaves(const int32_t* leaves, double* scores) const;

  // What ScoreRows and FindLeaves descend (public for the walk templates in tree_flat.cc).
  template <typename T>
  struct Node {
    T threshold;
    uint32_t feature;  // kFeatureMask bits, then the comparison and the NaN flag
    int32_t child[2];  // [false, true]; leaves are nodes >= n_nodes that point at themselves
  };
  static constexpr uint32_t kFeatureMask = (1u << 28) - 1;
  static constexpr int kKindShift = 28;    // 2 bits: Kind
  static constexpr uint32_t kNanTrue = 1u << 31;
  enum Kind : uint32_t { kLeq = 0, kLt = 1, kEq = 2, kMixed = 3 };

 private:
  template <typename T>
  const std::vector<Node<T>>& nodes() const;
  template <typename T>
  void Score(const T* x, int64_t stride, int64_t n, double* scores) const;
  template <typename T>
  void Leaves(const T* x, int64_t t0, int64_t t1, int32_t* leaves) const;
  void AddLeaf(int32_t leaf, double* scores, uint8_t* seen) const;
  void Finish(double* scores) const;

  std::vector<Node<float>> float_nodes_;
  std::vector<Node<double>> double_nodes_;
  std::vector<int32_t> roots_;  // flat node index: a leaf when >= n_nodes_
  int32_t n_nodes_ = 0;         // interior nodes; node n_nodes_ + k is leaf k
  Kind kind_ = kLeq;            // the comparison every node makes, or kMixed
  bool nan_flags_ = false;      // some node sends NaN to its true side
  bool compares_float_ = true;
  double mean_depth_ = 0;

  // Leaf k adds vote_weight[v] to target vote_target[v] for v in [vote_begin[k], vote_begin[k + 1]).
  std::vector<int32_t> vote_begin_;
  std::vector<double> vote_weight_;
  std::vector<int32_t> vote_target_;
  int64_t n_targets_ = 1;
  Aggregate aggregate_ = Aggregate::kSum;
  std::vector<double> base_values_;
};

}  // namespace onnxflow
