#include "ops/ml/tree_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace onnxflow {

int32_t TreeModel::AddLeaf(double weight, int64_t target) {
  const int32_t at = static_cast<int32_t>(votes.size());
  votes.push_back({weight, target});
  leaves.push_back({at, at + 1});
  return ~static_cast<int32_t>(leaves.size() - 1);
}

Status TreeModel::Validate() {
  const int64_t n_nodes = static_cast<int64_t>(nodes.size());
  const int64_t n_leaves = static_cast<int64_t>(leaves.size());
  if (n_targets < 1) return InvalidArgument("n_targets must be >= 1, got " + std::to_string(n_targets));
  if (!base_values.empty() && static_cast<int64_t>(base_values.size()) != n_targets) {
    return InvalidArgument("base_values has " + std::to_string(base_values.size()) + " entries for " +
                           std::to_string(n_targets) + " targets");
  }
  auto check_branch = [&](int32_t b, const std::string& what) -> Status {
    if (b >= 0 ? b >= n_nodes : ~b >= n_leaves) {
      return InvalidArgument(what + " points at " + (b >= 0 ? "node " + std::to_string(b) : "leaf " + std::to_string(~b)) +
                             ", which does not exist");
    }
    return Status::Ok();
  };
  max_feature_ = -1;
  for (int64_t i = 0; i < n_nodes; ++i) {
    const Node& node = nodes[i];
    const std::string name = "node " + std::to_string(i);
    if (node.feature < 0) return InvalidArgument(name + " has a negative feature id " + std::to_string(node.feature));
    if (static_cast<uint8_t>(node.mode) > 6) return InvalidArgument(name + " has an unknown mode");
    ONNXFLOW_RETURN_IF_ERROR(check_branch(node.if_true, name + "'s true branch"));
    ONNXFLOW_RETURN_IF_ERROR(check_branch(node.if_false, name + "'s false branch"));
    max_feature_ = std::max(max_feature_, node.feature);
  }
  for (int64_t i = 0; i < n_leaves; ++i) {
    const Leaf& leaf = leaves[i];
    if (leaf.vote_begin < 0 || leaf.vote_begin > leaf.vote_end || leaf.vote_end > static_cast<int64_t>(votes.size())) {
      return Internal("leaf " + std::to_string(i) + " has a bad vote range");
    }
    for (int32_t v = leaf.vote_begin; v < leaf.vote_end; ++v) {
      if (votes[v].target < 0 || votes[v].target >= n_targets) {
        return InvalidArgument("leaf " + std::to_string(i) + " has target " + std::to_string(votes[v].target) +
                               ", outside [0, " + std::to_string(n_targets) + ")");
      }
    }
  }
  // Every node reachable from a root must lead to leaves without coming back: an iterative
  // depth-first walk with three colours (0 unseen, 1 on the current path, 2 done).
  std::vector<uint8_t> colour(nodes.size(), 0);
  std::vector<std::pair<int32_t, int>> stack;  // node, children visited
  for (size_t r = 0; r < roots.size(); ++r) {
    ONNXFLOW_RETURN_IF_ERROR(check_branch(roots[r], "tree root " + std::to_string(r)));
    if (roots[r] < 0 || colour[roots[r]] == 2) continue;
    stack.push_back({roots[r], 0});
    colour[roots[r]] = 1;
    while (!stack.empty()) {
      auto& [node, visited] = stack.back();
      if (visited == 2) {
        colour[node] = 2;
        stack.pop_back();
        continue;
      }
      const int32_t next = visited == 0 ? nodes[node].if_true : nodes[node].if_false;
      ++visited;
      if (next < 0 || colour[next] == 2) continue;
      if (colour[next] == 1) return InvalidArgument("the tree from root " + std::to_string(r) + " has a cycle through node " + std::to_string(next));
      colour[next] = 1;
      stack.push_back({next, 0});
    }
  }
  return Status::Ok();
}

void TreeModel::DropTrees() {
  std::vector<Node>().swap(nodes);
  std::vector<Leaf>().swap(leaves);
  std::vector<Vote>().swap(votes);
  std::vector<int32_t>().swap(roots);
  std::vector<double>().swap(members);
}

bool TreeModel::Goes(const Node& node, double v) const {
  if (std::isnan(v) && node.missing_goes_true) return true;
  switch (node.mode) {
    case NodeMode::kLeq: return v <= node.split;
    case NodeMode::kLt: return v < node.split;
    case NodeMode::kGte: return v >= node.split;
    case NodeMode::kGt: return v > node.split;
    case NodeMode::kEq: return v == node.split;
    case NodeMode::kNeq: return v != node.split;
    case NodeMode::kMember: {
      if (std::isnan(v)) return false;  // no set holds NaN (and NaN would compare "equivalent" below)
      const double* begin = members.data() + node.set_begin;
      const double* end = members.data() + node.set_end;
      return std::binary_search(begin, end, v);
    }
  }
  return false;
}

const TreeModel::Leaf& TreeModel::Descend(int32_t at, const double* x) const {
  while (at >= 0) {
    const Node& node = nodes[at];
    at = Goes(node, x[node.feature]) ? node.if_true : node.if_false;
  }
  return leaves[~at];
}

void TreeModel::AggregateVotes(const double* x, double* scores) const {
  std::fill(scores, scores + n_targets, 0.0);
  if (aggregate == Aggregate::kMin || aggregate == Aggregate::kMax) {
    // A target no tree reaches keeps 0 (as onnxruntime does).
    std::vector<bool> seen(n_targets, false);
    for (int32_t root : roots) {
      const Leaf& leaf = Descend(root, x);
      for (int32_t v = leaf.vote_begin; v < leaf.vote_end; ++v) {
        const Vote& vote = votes[v];
        double& s = scores[vote.target];
        if (!seen[vote.target]) {
          s = vote.weight;
          seen[vote.target] = true;
        } else {
          s = aggregate == Aggregate::kMin ? std::min(s, vote.weight) : std::max(s, vote.weight);
        }
      }
    }
  } else {
    for (int32_t root : roots) {
      const Leaf& leaf = Descend(root, x);
      for (int32_t v = leaf.vote_begin; v < leaf.vote_end; ++v) scores[votes[v].target] += votes[v].weight;
    }
    if (aggregate == Aggregate::kAverage && !roots.empty()) {
      for (int64_t t = 0; t < n_targets; ++t) scores[t] /= static_cast<double>(roots.size());
    }
  }
  if (!base_values.empty()) {
    for (int64_t t = 0; t < n_targets; ++t) scores[t] += base_values[t];
  }
}

}  // namespace onnxflow
