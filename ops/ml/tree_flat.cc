#include "ops/ml/tree_flat.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace onnxflow {
namespace {

using Kind = FlatForest::Kind;

// Walks stepped together, so a step's latency (node load, feature load, compare) hides behind
// the others'. One thread, tree_models.py's cases: 4 lanes took 1.3x as long as 8 (rf_b1000
// 4.45 vs 3.39 ms, lgbm_b10000 120 vs 90 ms); 16 took 0.95x of 8 (xgb_bin_b1000 5.45 vs 5.72 ms,
// lgbm_b10000 85.5 vs 90.3 ms; rf_b1000 3.2-3.4 ms either way).
constexpr int kLanes = 16;

// The largest float <= v and the smallest float >= v (v not NaN); +-inf beyond the float range.
float RoundDown(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) > v) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}
float RoundUp(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) < v) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

template <typename T, uint32_t K, bool kNan>
inline bool GoesTrue(const FlatForest::Node<T>& node, T v) {
  const uint32_t kind = K == FlatForest::kMixed ? (node.feature >> FlatForest::kKindShift) & 3 : K;
  bool c = kind == FlatForest::kLeq ? v <= node.threshold : kind == FlatForest::kLt ? v < node.threshold : v == node.threshold;
  if (kNan) c |= (v != v) & ((node.feature & FlatForest::kNanTrue) != 0);
  return c;
}

// Both walkers take jobs [0, n): job j starts at node starts[j * start_step] and reads the row
// x + j * x_step; its leaf goes to leaves[j]. kLanes walks step together. Spare lanes stand on
// leaf 0, which points at itself.
//
// In lock step: a group of kLanes jobs steps until every one of them stands on a leaf, without
// a branch per step. Best for rows of a batch on one tree (rows take similar paths).
template <typename T, uint32_t K, bool kNan>
void WalkLockstep(const FlatForest::Node<T>* nodes, int32_t n_nodes, const int32_t* starts, int64_t start_step, const T* x,
                  int64_t x_step, int64_t n, int32_t* leaves) {
  for (int64_t g = 0; g < n; g += kLanes) {
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, n - g));
    int32_t at[kLanes];
    const T* row[kLanes];
    bool any = false;
    for (int i = 0; i < kLanes; ++i) {
      at[i] = i < lanes ? starts[(g + i) * start_step] : n_nodes;
      row[i] = x + (g + std::min(i, lanes - 1)) * x_step;
      any |= at[i] < n_nodes;
    }
    while (any) {
      any = false;
      for (int i = 0; i < kLanes; ++i) {
        const FlatForest::Node<T>& node = nodes[at[i]];
        at[i] = node.child[GoesTrue<T, K, kNan>(node, row[i][node.feature & FlatForest::kFeatureMask])];
        any |= at[i] < n_nodes;
      }
    }
    for (int i = 0; i < lanes; ++i) leaves[g + i] = at[i] - n_nodes;
  }
}

// Refilled: a lane whose walk reached a leaf takes the next job at once, so no lane idles while
// a deeper walk beside it finishes, for a branch per step. Best for the trees of one row (their
// depths differ). One thread: lgbm_b1 10 -> 7 us, xgb_bin_b1 7 -> 6 us, rf_b1 4 -> 3 us; as
// rows of a batch, lgbm_b10000 88 -> 150 ms and rf_b1000 2.8 -> 3.6 ms (xgb_bin_b1000 5.6 -> 4.9).
template <typename T, uint32_t K, bool kNan>
void WalkRefilled(const FlatForest::Node<T>* nodes, int32_t n_nodes, const int32_t* starts, int64_t start_step, const T* x,
                  int64_t x_step, int64_t n, int32_t* leaves) {
  int32_t at[kLanes];
  int64_t job[kLanes];
  const T* row[kLanes];
  int64_t next = 0;
  // Puts the next job that does not start on a leaf into lane i (recording those that do).
  auto take = [&](int i) {
    for (; next < n; ++next) {
      const int32_t start = starts[next * start_step];
      if (start >= n_nodes) {
        leaves[next] = start - n_nodes;
        continue;
      }
      at[i] = start, job[i] = next, row[i] = x + next * x_step;
      ++next;
      return true;
    }
    at[i] = n_nodes, job[i] = -1, row[i] = x;
    return false;
  };
  int active = 0;
  for (int i = 0; i < kLanes; ++i) active += take(i);
  while (active > 0) {
    for (int i = 0; i < kLanes; ++i) {
      const FlatForest::Node<T>& node = nodes[at[i]];
      at[i] = node.child[GoesTrue<T, K, kNan>(node, row[i][node.feature & FlatForest::kFeatureMask])];
      if (at[i] >= n_nodes && job[i] >= 0) {
        leaves[job[i]] = at[i] - n_nodes;
        if (!take(i)) --active;
      }
    }
  }
}

template <typename T>
using WalkFn = void (*)(const FlatForest::Node<T>* nodes, int32_t n_nodes, const int32_t* starts, int64_t start_step,
                        const T* x, int64_t x_step, int64_t n, int32_t* leaves);

template <typename T, uint32_t K, bool kNan>
WalkFn<T> Walker(bool refilled) {
  return refilled ? &WalkRefilled<T, K, kNan> : &WalkLockstep<T, K, kNan>;
}

template <typename T>
WalkFn<T> PickWalk(uint32_t kind, bool nan_flags, bool refilled) {
  switch (kind) {
    case FlatForest::kLeq: return nan_flags ? Walker<T, FlatForest::kLeq, true>(refilled) : Walker<T, FlatForest::kLeq, false>(refilled);
    case FlatForest::kLt: return nan_flags ? Walker<T, FlatForest::kLt, true>(refilled) : Walker<T, FlatForest::kLt, false>(refilled);
    case FlatForest::kEq: return nan_flags ? Walker<T, FlatForest::kEq, true>(refilled) : Walker<T, FlatForest::kEq, false>(refilled);
    default: return nan_flags ? Walker<T, FlatForest::kMixed, true>(refilled) : Walker<T, FlatForest::kMixed, false>(refilled);
  }
}

}  // namespace

std::unique_ptr<FlatForest> FlatForest::Take(TreeModel& model, DataType rows) {
  std::unique_ptr<FlatForest> flat = Build(model);
  if (flat == nullptr) return nullptr;
  model.DropTrees();
  if (flat->compares_float_ && (rows == DataType::kFloat || rows == DataType::kFloat16)) {
    std::vector<Node<double>>().swap(flat->double_nodes_);
  }
  return flat;
}

std::unique_ptr<FlatForest> FlatForest::Build(const TreeModel& m) {
  const int64_t n_nodes = static_cast<int64_t>(m.nodes.size());
  const int64_t n_leaves = static_cast<int64_t>(m.leaves.size());
  if (n_nodes + n_leaves >= std::numeric_limits<int32_t>::max() || m.max_feature() > static_cast<int64_t>(kFeatureMask)) return nullptr;
  std::unique_ptr<FlatForest> f(new FlatForest());
  f->n_nodes_ = static_cast<int32_t>(n_nodes);
  auto flat = [&](int32_t branch) { return branch >= 0 ? branch : static_cast<int32_t>(n_nodes) + ~branch; };
  f->double_nodes_.resize(static_cast<size_t>(n_nodes + n_leaves));
  f->float_nodes_.resize(static_cast<size_t>(n_nodes + n_leaves));
  bool kinds[3] = {false, false, false};
  for (int64_t i = 0; i < n_nodes; ++i) {
    const TreeModel::Node& node = m.nodes[i];
    if (node.mode == NodeMode::kMember || std::isnan(node.split)) return nullptr;
    // x > t goes true exactly when x <= t goes false, NaN aside (the flag settles NaN): the
    // reversed comparison with the children swapped.
    const bool m_true = node.missing_goes_true;
    Kind kind = kLeq;
    bool swap = false, nan_true = m_true;
    switch (node.mode) {
      case NodeMode::kLeq: kind = kLeq; break;
      case NodeMode::kLt: kind = kLt; break;
      case NodeMode::kGt: kind = kLeq, swap = true, nan_true = !m_true; break;
      case NodeMode::kGte: kind = kLt, swap = true, nan_true = !m_true; break;
      case NodeMode::kEq: kind = kEq; break;
      case NodeMode::kNeq: kind = kEq, swap = true, nan_true = false; break;  // NaN != t: NEQ's true side always
      case NodeMode::kMember: return nullptr;
    }
    kinds[kind] = true;
    f->nan_flags_ |= nan_true;
    const int32_t if_true = flat(swap ? node.if_false : node.if_true);
    const int32_t if_false = flat(swap ? node.if_true : node.if_false);
    const uint32_t bits = static_cast<uint32_t>(node.feature) | (static_cast<uint32_t>(kind) << kKindShift) | (nan_true ? kNanTrue : 0);
    f->double_nodes_[i] = {node.split, bits, {if_false, if_true}};
    float t = kind == kLeq ? RoundDown(node.split) : RoundUp(node.split);
    if (kind == kEq && static_cast<double>(static_cast<float>(node.split)) != node.split) f->compares_float_ = false;
    f->float_nodes_[i] = {t, bits, {if_false, if_true}};
  }
  for (int64_t k = 0; k < n_leaves; ++k) {
    const int32_t self = static_cast<int32_t>(n_nodes + k);
    f->double_nodes_[self] = {0.0, 0, {self, self}};
    f->float_nodes_[self] = {0.0f, 0, {self, self}};
  }
  if (!f->compares_float_) f->float_nodes_.clear();
  const int n_kinds = kinds[0] + kinds[1] + kinds[2];
  f->kind_ = n_kinds > 1 ? kMixed : kinds[kLt] ? kLt : kinds[kEq] ? kEq : kLeq;

  for (int32_t root : m.roots) f->roots_.push_back(flat(root));
  f->vote_begin_.push_back(0);
  for (const TreeModel::Leaf& leaf : m.leaves) {
    for (int32_t v = leaf.vote_begin; v < leaf.vote_end; ++v) {
      f->vote_weight_.push_back(m.votes[v].weight);
      f->vote_target_.push_back(static_cast<int32_t>(m.votes[v].target));
    }
    f->vote_begin_.push_back(static_cast<int32_t>(f->vote_weight_.size()));
  }
  f->n_targets_ = m.n_targets;
  f->aggregate_ = m.aggregate;
  f->base_values_ = m.base_values;

  // Mean leaf depth per tree, averaged over the trees.
  double depth_sum = 0;
  std::vector<std::pair<int32_t, int32_t>> stack;
  for (int32_t root : f->roots_) {
    int64_t leaves = 0, depths = 0;
    stack.assign(1, {root, 0});
    while (!stack.empty()) {
      const auto [at, depth] = stack.back();
      stack.pop_back();
      if (at >= f->n_nodes_) {
        ++leaves, depths += depth;
        continue;
      }
      stack.push_back({f->double_nodes_[at].child[0], depth + 1});
      stack.push_back({f->double_nodes_[at].child[1], depth + 1});
    }
    depth_sum += static_cast<double>(depths) / static_cast<double>(std::max<int64_t>(leaves, 1));
  }
  f->mean_depth_ = f->roots_.empty() ? 0 : depth_sum / static_cast<double>(f->roots_.size());
  return f;
}

template <>
const std::vector<FlatForest::Node<float>>& FlatForest::nodes<float>() const { return float_nodes_; }
template <>
const std::vector<FlatForest::Node<double>>& FlatForest::nodes<double>() const { return double_nodes_; }

// What TreeModel::AggregateVotes does per leaf, in the same order and arithmetic.
void FlatForest::AddLeaf(int32_t leaf, double* s, uint8_t* seen) const {
  const int32_t end = vote_begin_[leaf + 1];
  if (aggregate_ == Aggregate::kSum || aggregate_ == Aggregate::kAverage) {
    for (int32_t v = vote_begin_[leaf]; v < end; ++v) s[vote_target_[v]] += vote_weight_[v];
    return;
  }
  for (int32_t v = vote_begin_[leaf]; v < end; ++v) {
    const int32_t t = vote_target_[v];
    const double w = vote_weight_[v];
    if (!seen[t]) {
      s[t] = w;
      seen[t] = 1;
    } else {
      s[t] = aggregate_ == Aggregate::kMin ? std::min(s[t], w) : std::max(s[t], w);
    }
  }
}

void FlatForest::Finish(double* s) const {
  if (aggregate_ == Aggregate::kAverage && !roots_.empty()) {
    for (int64_t t = 0; t < n_targets_; ++t) s[t] /= static_cast<double>(roots_.size());
  }
  if (!base_values_.empty()) {
    for (int64_t t = 0; t < n_targets_; ++t) s[t] += base_values_[t];
  }
}

template <typename T>
void FlatForest::Leaves(const T* x, int64_t t0, int64_t t1, int32_t* leaves) const {
  PickWalk<T>(kind_, nan_flags_, /*refilled=*/true)(nodes<T>().data(), n_nodes_, roots_.data() + t0, 1, x, 0, t1 - t0, leaves + t0);
}

void FlatForest::AggregateLeaves(const int32_t* leaves, double* scores) const {
  std::fill(scores, scores + n_targets_, 0.0);
  std::vector<uint8_t> seen(aggregate_ == Aggregate::kMin || aggregate_ == Aggregate::kMax ? n_targets_ : 0, 0);
  for (size_t t = 0; t < roots_.size(); ++t) AddLeaf(leaves[t], scores, seen.data());
  Finish(scores);
}

template <typename T>
void FlatForest::Score(const T* x, int64_t stride, int64_t n, double* scores) const {
  if (n < kLanes) {
    // Too few rows to fill the lanes: walk each row's trees side by side instead.
    std::vector<int32_t> leaves(roots_.size());
    for (int64_t r = 0; r < n; ++r) {
      Leaves(x + r * stride, 0, n_trees(), leaves.data());
      AggregateLeaves(leaves.data(), scores + r * n_targets_);
    }
    return;
  }
  const WalkFn<T> walk = PickWalk<T>(kind_, nan_flags_, /*refilled=*/false);
  const bool min_max = aggregate_ == Aggregate::kMin || aggregate_ == Aggregate::kMax;
  std::vector<uint8_t> seen(min_max ? kRowBlock * n_targets_ : 0);
  std::vector<int32_t> leaves(static_cast<size_t>(std::min(kRowBlock, n)));
  for (int64_t b0 = 0; b0 < n; b0 += kRowBlock) {
    const int64_t nb = std::min(kRowBlock, n - b0);
    double* s = scores + b0 * n_targets_;
    std::fill(s, s + nb * n_targets_, 0.0);
    std::fill(seen.begin(), seen.end(), 0);
    for (const int32_t& root : roots_) {
      walk(nodes<T>().data(), n_nodes_, &root, 0, x + b0 * stride, stride, nb, leaves.data());
      for (int64_t r = 0; r < nb; ++r) AddLeaf(leaves[r], s + r * n_targets_, min_max ? &seen[r * n_targets_] : nullptr);
    }
    for (int64_t r = 0; r < nb; ++r) Finish(s + r * n_targets_);
  }
}

void FlatForest::ScoreRows(const float* x, int64_t stride, int64_t n, double* scores) const { Score(x, stride, n, scores); }
void FlatForest::ScoreRows(const double* x, int64_t stride, int64_t n, double* scores) const { Score(x, stride, n, scores); }
void FlatForest::FindLeaves(const float* x, int64_t t0, int64_t t1, int32_t* leaves) const { Leaves(x, t0, t1, leaves); }
void FlatForest::FindLeaves(const double* x, int64_t t0, int64_t t1, int32_t* leaves) const { Leaves(x, t0, t1, leaves); }

}  // namespace onnxflow
