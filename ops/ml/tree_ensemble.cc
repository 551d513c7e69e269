// TreeEnsemble-5 (ai.onnx.ml): regression over a forest given as parallel nodes_* and leaf_*
// attributes. X is [N, F] float/double/float16; Y is [N, n_targets] of the same type. Scores are
// accumulated in double and rounded once to the output type.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/ml/register.h"
#include "ops/ml/tree_eval.h"
#include "ops/ml/tree_flat.h"
#include "ops/ml/tree_model.h"

namespace onnxflow {
namespace {

// The values of a float/double/float16 tensor attribute as doubles.
Result<std::vector<double>> ReadReals(const KernelInfo& info, const std::string& name) {
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor t, info.GetTensor(name));
  std::vector<double> out(static_cast<size_t>(t.size()));
  Status s = DispatchType<float, double, Float16>(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t.size(); ++i) out[i] = static_cast<double>(ToCompute(t.data<T>()[i]));
    return Status::Ok();
  });
  if (!s.ok()) return s.WithContext("attribute '" + name + "'");
  return out;
}

Result<std::vector<int64_t>> ReadModes(const KernelInfo& info) {
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor t, info.GetTensor("nodes_modes"));
  std::vector<int64_t> out(static_cast<size_t>(t.size()));
  Status s = DispatchType<uint8_t, int8_t, int32_t, int64_t>(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t.size(); ++i) out[i] = static_cast<int64_t>(t.data<T>()[i]);
    return Status::Ok();
  });
  if (!s.ok()) return s.WithContext("attribute 'nodes_modes'");
  return out;
}

Status CheckLength(const std::string& name, size_t got, size_t want) {
  if (got == want) return Status::Ok();
  return InvalidArgument("attribute '" + name + "' has " + std::to_string(got) + " entries, expected " + std::to_string(want));
}

// Encodes a branch (node index or leaf index) as TreeModel does.
Result<int32_t> Branch(int64_t id, int64_t is_leaf) {
  if (id < 0 || id > INT32_MAX - 1) return InvalidArgument("branch id " + std::to_string(id) + " is out of range");
  return is_leaf ? ~static_cast<int32_t>(id) : static_cast<int32_t>(id);
}

Result<TreeModel> ParseTreeEnsemble(const KernelInfo& info) {
  TreeModel m;
  const std::vector<int64_t> features = info.GetInts("nodes_featureids");
  const std::vector<int64_t> true_ids = info.GetInts("nodes_truenodeids");
  const std::vector<int64_t> false_ids = info.GetInts("nodes_falsenodeids");
  const std::vector<int64_t> true_leafs = info.GetInts("nodes_trueleafs");
  const std::vector<int64_t> false_leafs = info.GetInts("nodes_falseleafs");
  const std::vector<int64_t> missing = info.GetInts("nodes_missing_value_tracks_true");
  const std::vector<int64_t> targets = info.GetInts("leaf_targetids");
  const std::vector<int64_t> roots = info.GetInts("tree_roots");
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> modes, ReadModes(info));
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<double> splits, ReadReals(info, "nodes_splits"));
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<double> weights, ReadReals(info, "leaf_weights"));
  std::vector<double> members;
  if (info.has_attribute("membership_values")) {
    ONNXFLOW_ASSIGN_OR_RETURN(members, ReadReals(info, "membership_values"));
  }

  const size_t n = features.size();
  ONNXFLOW_RETURN_IF_ERROR(CheckLength("nodes_truenodeids", true_ids.size(), n));
  ONNXFLOW_RETURN_IF_ERROR(CheckLength("nodes_falsenodeids", false_ids.size(), n));
  ONNXFLOW_RETURN_IF_ERROR(CheckLength("nodes_trueleafs", true_leafs.size(), n));
  ONNXFLOW_RETURN_IF_ERROR(CheckLength("nodes_falseleafs", false_leafs.size(), n));
  ONNXFLOW_RETURN_IF_ERROR(CheckLength("nodes_modes", modes.size(), n));
  ONNXFLOW_RETURN_IF_ERROR(CheckLength("nodes_splits", splits.size(), n));
  if (!missing.empty()) ONNXFLOW_RETURN_IF_ERROR(CheckLength("nodes_missing_value_tracks_true", missing.size(), n));
  ONNXFLOW_RETURN_IF_ERROR(CheckLength("leaf_weights", weights.size(), targets.size()));
  if (roots.empty()) return InvalidArgument("attribute 'tree_roots' is required");

  const int64_t aggregate = info.GetInt("aggregate_function", 1);
  if (aggregate < 0 || aggregate > 3) return InvalidArgument("aggregate_function must be in [0, 3], got " + std::to_string(aggregate));
  m.aggregate = static_cast<Aggregate>(aggregate);
  ONNXFLOW_ASSIGN_OR_RETURN(m.post_transform, PostTransformFromInt(info.GetInt("post_transform", 0)));
  int64_t max_target = -1;
  for (int64_t t : targets) max_target = std::max(max_target, t);
  m.n_targets = info.GetInt("n_targets", max_target + 1);

  // Membership sets follow the MEMBER nodes in order, each ended by a NaN.
  size_t member_at = 0;
  for (size_t i = 0; i < n; ++i) {
    TreeModel::Node node;
    if (modes[i] < 0 || modes[i] > 6) return InvalidArgument("nodes_modes[" + std::to_string(i) + "] = " + std::to_string(modes[i]) + " is not a mode");
    node.mode = static_cast<NodeMode>(modes[i]);
    node.split = splits[i];
    node.feature = features[i];
    node.missing_goes_true = !missing.empty() && missing[i] != 0;
    ONNXFLOW_ASSIGN_OR_RETURN(node.if_true, Branch(true_ids[i], true_leafs[i]));
    ONNXFLOW_ASSIGN_OR_RETURN(node.if_false, Branch(false_ids[i], false_leafs[i]));
    if (node.mode == NodeMode::kMember) {
      node.set_begin = static_cast<int32_t>(m.members.size());
      while (member_at < members.size() && !std::isnan(members[member_at])) m.members.push_back(members[member_at++]);
      if (member_at >= members.size()) {
        return InvalidArgument("membership_values has fewer NaN-ended sets than there are BRANCH_MEMBER nodes");
      }
      ++member_at;  // the NaN
      node.set_end = static_cast<int32_t>(m.members.size());
      std::sort(m.members.begin() + node.set_begin, m.members.end());
    }
    m.nodes.push_back(node);
  }
  for (size_t i = 0; i < targets.size(); ++i) m.AddLeaf(weights[i], targets[i]);
  for (int64_t r : roots) {
    if (r < 0 || r >= static_cast<int64_t>(n)) return InvalidArgument("tree root " + std::to_string(r) + " is not a node");
    // A tree that is a single leaf: both branches name the same leaf.
    if (true_leafs[r] && false_leafs[r] && true_ids[r] == false_ids[r]) {
      ONNXFLOW_ASSIGN_OR_RETURN(int32_t leaf, Branch(true_ids[r], 1));
      m.roots.push_back(leaf);
    } else {
      m.roots.push_back(static_cast<int32_t>(r));
    }
  }
  ONNXFLOW_RETURN_IF_ERROR(m.Validate());
  return m;
}

class TreeEnsemble final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(TreeModel model, ParseTreeEnsemble(info));
    return std::unique_ptr<OpKernel>(new TreeEnsemble(std::move(model), info.input_type(0)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() != 2 && x->rank() != 1) return InvalidArgument("X must be [N, F], got " + ShapeToString(x->shape()));
    const int64_t rows = x->rank() == 2 ? x->dim(0) : 1;
    const int64_t features = x->dim(x->rank() - 1);
    return DispatchType<float, double, Float16>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), Shape{rows, model_.n_targets}));
      T* out = y->mutable_data<T>();
      const int64_t n_targets = model_.n_targets;
      return EvaluateTreeRows(ctx, model_, flat_.get(), *x, rows, features, /*allow_float16=*/true, [&](int64_t r, double* scores) {
        ApplyPostTransform(model_.post_transform, scores, n_targets);
        for (int64_t t = 0; t < n_targets; ++t) out[r * n_targets + t] = FromCompute<T>(static_cast<ComputeType<T>>(scores[t]));
      });
    });
  }

 private:
  TreeEnsemble(TreeModel model, DataType rows) : model_(std::move(model)), flat_(FlatForest::Take(model_, rows)) {}
  TreeModel model_;
  std::unique_ptr<FlatForest> flat_;  // null: model_ evaluates
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterTreeEnsemble(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "TreeEnsemble", 5, kOpenEnded, Make<TreeEnsemble>());
}

}  // namespace onnxflow
