// A tree ensemble in the form TreeEnsemble-5 describes, checked once at load and evaluated
// per row: interior nodes compare one feature with a threshold (or test set membership) and
// branch to a node or a leaf; each tree's leaf adds a weight to one target; the targets'
// aggregates go through a post transform.
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/status.h"
#include "ops/ml/post_transform.h"

namespace onnxflow {

enum class NodeMode : uint8_t { kLeq = 0, kLt = 1, kGte = 2, kGt = 3, kEq = 4, kNeq = 5, kMember = 6 };
enum class Aggregate { kAverage = 0, kSum = 1, kMin = 2, kMax = 3 };

struct TreeModel {
  // A branch target: a node index (>= 0) or a leaf, encoded as ~leaf (< 0).
  struct Node {
    double split = 0;
    int64_t feature = 0;
    int32_t if_true = 0;
    int32_t if_false = 0;
    NodeMode mode = NodeMode::kLeq;
    bool missing_goes_true = false;
    int32_t set_begin = 0;  // members[set_begin, set_end), sorted, for kMember
    int32_t set_end = 0;
  };
  // What a leaf adds: a weight for one target. A leaf of the opset-3 ops may vote for several
  // targets: its votes are leaf_votes[vote_begin, vote_end).
  struct Vote {
    double weight = 0;
    int64_t target = 0;
  };
  struct Leaf {
    int32_t vote_begin = 0;
    int32_t vote_end = 0;
  };

  std::vector<Node> nodes;
  std::vector<Leaf> leaves;
  std::vector<Vote> votes;
  std::vector<int32_t> roots;  // node index or ~leaf, like a branch
  std::vector<double> members;
  int64_t n_targets = 1;
  Aggregate aggregate = Aggregate::kSum;
  PostTransform post_transform = PostTransform::kNone;
  std::vector<double> base_values;  // added per target before the transform (opset-3 ops); may be empty

  // Appends a leaf with one vote; returns its branch encoding (~leaf).
  int32_t AddLeaf(double weight, int64_t target);

  // Checks indices, targets and that every tree is finite (no cycles); computes max_feature.
  Status Validate();
  // Frees nodes, leaves, votes, members and roots once a FlatForest evaluates them (a large
  // forest would otherwise be held twice); n_targets, aggregate, post_transform, base_values and
  // max_feature() stay. Descend, AggregateVotes and Score must not be called after.
  void DropTrees();
  int64_t max_feature() const { return max_feature_; }

  // The leaf a tree sends the row `x` to.
  const Leaf& Descend(int32_t root, const double* x) const;
  // Aggregates every tree's leaf votes into scores[n_targets] and adds base_values.
  void AggregateVotes(const double* x, double* scores) const;
  // AggregateVotes, then the post transform.
  void Score(const double* x, double* scores) const {
    AggregateVotes(x, scores);
    ApplyPostTransform(post_transform, scores, n_targets);
  }

 private:
  bool Goes(const Node& node, double value) const;
  int64_t max_feature_ = -1;
};

}  // namespace onnxflow
