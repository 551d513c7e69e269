// TreeEnsembleRegressor and TreeEnsembleClassifier, ml opsets 1-4 (TreeEnsemble-5 replaced them).
//
// Their trees are lists of nodes named by (tree id, node id); mode "LEAF" marks leaves, and the
// target_* / class_* lists attach weighted votes to leaves. At load this becomes the TreeModel
// TreeEnsemble-5 uses; roots are the nodes no other node points at. Opset 3 adds the
// *_as_tensor (double) forms of the float lists. The classifier follows the ONNX reference for
// the binary case (one class id used): the single score becomes class 1's, and class 0 gets
// 1 - score (NONE, PROBIT) or -score (other transforms); a single label [1] gets two scores.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/kernel_info.h"
#include "ops/ml/register.h"
#include "ops/ml/numeric_rows.h"
#include "ops/ml/tree_eval.h"
#include "ops/ml/tree_flat.h"
#include "ops/ml/tree_model.h"

namespace onnxflow {
namespace {

// A float list attribute, or at opset >= 3 its double `<name>_as_tensor` form.
Result<std::vector<double>> ReadDoubles(const KernelInfo& info, const std::string& name) {
  const std::string tensor_name = name + "_as_tensor";
  if (info.opset() >= 3 && info.has_attribute(tensor_name)) {
    if (info.has_attribute(name)) return InvalidArgument("only one of '" + name + "' and '" + tensor_name + "' may be set");
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor t, info.GetTensor(tensor_name));
    std::vector<double> out(static_cast<size_t>(t.size()));
    Status s = DispatchType<float, double>(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < t.size(); ++i) out[i] = static_cast<double>(t.data<T>()[i]);
      return Status::Ok();
    });
    if (!s.ok()) return s.WithContext("attribute '" + tensor_name + "'");
    return out;
  }
  const std::vector<float> f = info.GetFloats(name);
  return std::vector<double>(f.begin(), f.end());
}

Result<NodeMode> ModeFromString(const std::string& s) {
  if (s == "BRANCH_LEQ") return NodeMode::kLeq;
  if (s == "BRANCH_LT") return NodeMode::kLt;
  if (s == "BRANCH_GTE") return NodeMode::kGte;
  if (s == "BRANCH_GT") return NodeMode::kGt;
  if (s == "BRANCH_EQ") return NodeMode::kEq;
  if (s == "BRANCH_NEQ") return NodeMode::kNeq;
  return InvalidArgument("unknown node mode '" + s + "'");
}

// Builds the model's nodes, leaves (with the votes of `prefix`: target_* or class_*) and roots.
Result<TreeModel> ParseLegacyTrees(const KernelInfo& info, const std::string& prefix, int64_t n_targets) {
  const std::vector<int64_t> tree_ids = info.GetInts("nodes_treeids");
  const std::vector<int64_t> node_ids = info.GetInts("nodes_nodeids");
  const std::vector<int64_t> features = info.GetInts("nodes_featureids");
  const std::vector<std::string> modes = info.GetStrings("nodes_modes");
  const std::vector<int64_t> true_ids = info.GetInts("nodes_truenodeids");
  const std::vector<int64_t> false_ids = info.GetInts("nodes_falsenodeids");
  const std::vector<int64_t> missing = info.GetInts("nodes_missing_value_tracks_true");
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<double> values, ReadDoubles(info, "nodes_values"));
  const size_t n = tree_ids.size();
  if (n == 0) return InvalidArgument("the ensemble has no nodes");
  for (const auto& [name, size] : std::vector<std::pair<std::string, size_t>>{
           {"nodes_nodeids", node_ids.size()}, {"nodes_featureids", features.size()}, {"nodes_modes", modes.size()},
           {"nodes_truenodeids", true_ids.size()}, {"nodes_falsenodeids", false_ids.size()}}) {
    if (size != n) return InvalidArgument("'" + name + "' has " + std::to_string(size) + " entries, nodes_treeids " + std::to_string(n));
  }
  if (!values.empty() && values.size() != n) return InvalidArgument("'nodes_values' has " + std::to_string(values.size()) + " entries for " + std::to_string(n) + " nodes");
  if (!missing.empty() && missing.size() != n) return InvalidArgument("'nodes_missing_value_tracks_true' has the wrong length");

  std::map<std::pair<int64_t, int64_t>, size_t> by_id;
  for (size_t i = 0; i < n; ++i) {
    if (!by_id.emplace(std::make_pair(tree_ids[i], node_ids[i]), i).second) {
      return InvalidArgument("node (tree " + std::to_string(tree_ids[i]) + ", id " + std::to_string(node_ids[i]) + ") appears twice");
    }
  }
  // Votes, grouped by the leaf they belong to.
  const std::vector<int64_t> vote_trees = info.GetInts(prefix + "treeids");
  const std::vector<int64_t> vote_nodes = info.GetInts(prefix + "nodeids");
  const std::vector<int64_t> vote_ids = info.GetInts(prefix + "ids");
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<double> vote_weights, ReadDoubles(info, prefix + "weights"));
  if (vote_nodes.size() != vote_trees.size() || vote_ids.size() != vote_trees.size() || vote_weights.size() != vote_trees.size()) {
    return InvalidArgument("the " + prefix + "* attributes must have equal lengths");
  }
  std::vector<std::vector<TreeModel::Vote>> leaf_votes(n);
  for (size_t v = 0; v < vote_trees.size(); ++v) {
    auto it = by_id.find({vote_trees[v], vote_nodes[v]});
    if (it == by_id.end() || modes[it->second] != "LEAF") {
      return InvalidArgument(prefix + "weights[" + std::to_string(v) + "] names (tree " + std::to_string(vote_trees[v]) +
                             ", id " + std::to_string(vote_nodes[v]) + "), which is not a leaf");
    }
    leaf_votes[it->second].push_back({vote_weights[v], vote_ids[v]});
  }

  TreeModel m;
  m.n_targets = n_targets;
  std::vector<int32_t> slot(n);  // node index or ~leaf for each entry
  for (size_t i = 0; i < n; ++i) {
    if (modes[i] == "LEAF") {
      const int32_t begin = static_cast<int32_t>(m.votes.size());
      m.votes.insert(m.votes.end(), leaf_votes[i].begin(), leaf_votes[i].end());
      m.leaves.push_back({begin, static_cast<int32_t>(m.votes.size())});
      slot[i] = ~static_cast<int32_t>(m.leaves.size() - 1);
    } else {
      ONNXFLOW_ASSIGN_OR_RETURN(NodeMode mode, ModeFromString(modes[i]));
      TreeModel::Node node;
      node.mode = mode;
      node.feature = features[i];
      node.split = values.empty() ? 0.0 : values[i];
      node.missing_goes_true = !missing.empty() && missing[i] != 0;
      slot[i] = static_cast<int32_t>(m.nodes.size());
      m.nodes.push_back(node);
    }
  }
  std::vector<bool> is_child(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (modes[i] == "LEAF") continue;
    auto child = [&](int64_t id) -> Result<int32_t> {
      auto it = by_id.find({tree_ids[i], id});
      if (it == by_id.end()) {
        return InvalidArgument("node (tree " + std::to_string(tree_ids[i]) + ", id " + std::to_string(node_ids[i]) +
                               ") points at missing node id " + std::to_string(id));
      }
      is_child[it->second] = true;
      return slot[it->second];
    };
    TreeModel::Node& node = m.nodes[slot[i]];
    ONNXFLOW_ASSIGN_OR_RETURN(node.if_true, child(true_ids[i]));
    ONNXFLOW_ASSIGN_OR_RETURN(node.if_false, child(false_ids[i]));
  }
  for (size_t i = 0; i < n; ++i) {
    if (!is_child[i]) m.roots.push_back(slot[i]);
  }
  if (m.roots.empty()) return InvalidArgument("every node is some node's child: the trees have a cycle");
  return m;
}

class TreeEnsembleRegressor final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const std::vector<int64_t> ids = info.GetInts("target_ids");
    int64_t max_id = -1;
    for (int64_t id : ids) max_id = std::max(max_id, id);
    ONNXFLOW_ASSIGN_OR_RETURN(TreeModel model, ParseLegacyTrees(info, "target_", info.GetInt("n_targets", max_id + 1)));
    const std::string aggregate = info.GetString("aggregate_function", "SUM");
    if (aggregate == "AVERAGE") model.aggregate = Aggregate::kAverage;
    else if (aggregate == "SUM") model.aggregate = Aggregate::kSum;
    else if (aggregate == "MIN") model.aggregate = Aggregate::kMin;
    else if (aggregate == "MAX") model.aggregate = Aggregate::kMax;
    else return InvalidArgument("aggregate_function must be AVERAGE, SUM, MIN or MAX, got '" + aggregate + "'");
    ONNXFLOW_ASSIGN_OR_RETURN(model.post_transform, PostTransformFromString(info.GetString("post_transform", "NONE")));
    ONNXFLOW_ASSIGN_OR_RETURN(model.base_values, ReadDoubles(info, "base_values"));
    ONNXFLOW_RETURN_IF_ERROR(model.Validate());
    return std::unique_ptr<OpKernel>(new TreeEnsembleRegressor(std::move(model), info.input_type(0)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(RowsView view, AsRows(*x, "X"));
    const int64_t targets = model_.n_targets;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kFloat, Shape{view.rows, targets}));
    float* out = y->mutable_data<float>();
    return EvaluateTreeRows(ctx, model_, flat_.get(), *x, view.rows, view.cols, /*allow_float16=*/false, [&](int64_t r, double* scores) {
      ApplyPostTransform(model_.post_transform, scores, targets);
      for (int64_t t = 0; t < targets; ++t) out[r * targets + t] = static_cast<float>(scores[t]);
    });
  }

 private:
  TreeEnsembleRegressor(TreeModel model, DataType rows) : model_(std::move(model)), flat_(FlatForest::Take(model_, rows)) {}
  TreeModel model_;
  std::unique_ptr<FlatForest> flat_;  // null: model_ evaluates
};

class TreeEnsembleClassifier final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const bool ints = info.has_attribute("classlabels_int64s");
    if (ints == info.has_attribute("classlabels_strings")) {
      return InvalidArgument("exactly one of classlabels_int64s and classlabels_strings must be set");
    }
    std::unique_ptr<TreeEnsembleClassifier> k(new TreeEnsembleClassifier());
    k->int_labels_ = info.GetInts("classlabels_int64s");
    k->string_labels_ = info.GetStrings("classlabels_strings");
    const int64_t n_classes = static_cast<int64_t>(ints ? k->int_labels_.size() : k->string_labels_.size());
    if (n_classes == 0) return InvalidArgument("the class label list is empty");
    if (n_classes == 1 && (!ints || k->int_labels_[0] != 1)) {
      return Unimplemented("a single class label is only supported as classlabels_int64s = [1]");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(k->model_, ParseLegacyTrees(info, "class_", n_classes));
    ONNXFLOW_ASSIGN_OR_RETURN(k->transform_, PostTransformFromString(info.GetString("post_transform", "NONE")));
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<double> base, ReadDoubles(info, "base_values"));
    if (base.size() == 1) base.assign(static_cast<size_t>(n_classes), base[0]);
    k->model_.base_values = std::move(base);
    ONNXFLOW_RETURN_IF_ERROR(k->model_.Validate());
    k->flat_ = FlatForest::Take(k->model_, info.input_type(0));
    const std::vector<int64_t> ids = info.GetInts("class_ids");
    k->binary_ = !ids.empty() && std::all_of(ids.begin(), ids.end(), [&](int64_t id) { return id == ids[0]; });
    if (k->binary_) k->binary_class_ = ids[0];
    k->n_scores_ = k->binary_ ? std::max<int64_t>(n_classes, 2) : n_classes;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(RowsView view, AsRows(*x, "X"));
    const bool ints = !int_labels_.empty();
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, ints ? DataType::kInt64 : DataType::kString, Shape{view.rows}));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * z, ctx.Allocate(1, DataType::kFloat, Shape{view.rows, n_scores_}));
    float* scores_out = z->mutable_data<float>();
    const int64_t n_classes = model_.n_targets;
    return EvaluateTreeRows(ctx, model_, flat_.get(), *x, view.rows, view.cols, /*allow_float16=*/false, [&](int64_t r, double* raw) {
      double s[2];
      double* scores = raw;
      if (binary_) {
        // The single class's score becomes class 1's.
        s[1] = raw[binary_class_];
        s[0] = (transform_ == PostTransform::kNone || transform_ == PostTransform::kProbit) ? 1.0 - s[1] : -s[1];
        if (n_classes == 1) {
          scores = s;
        } else {
          raw[0] = s[0];
          raw[1] = s[1];
        }
      }
      ApplyPostTransform(transform_, scores, n_scores_);
      const int64_t best = std::max_element(scores, scores + n_scores_) - scores;
      for (int64_t c = 0; c < n_scores_; ++c) scores_out[r * n_scores_ + c] = static_cast<float>(scores[c]);
      if (ints) {
        y->mutable_data<int64_t>()[r] = int_labels_.size() == 1 ? (best == 1 ? 1 : 0) : int_labels_[best];
      } else {
        y->mutable_data<std::string>()[r] = string_labels_[best];
      }
    });
  }

 private:
  TreeEnsembleClassifier() = default;
  TreeModel model_;
  std::unique_ptr<FlatForest> flat_;  // null: model_ evaluates
  PostTransform transform_ = PostTransform::kNone;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  bool binary_ = false;
  int64_t binary_class_ = 0;
  int64_t n_scores_ = 0;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterTreeEnsembleLegacy(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMlDomain, "TreeEnsembleRegressor", 1, 4, Make<TreeEnsembleRegressor>()));
  return registry.Register(kMlDomain, "TreeEnsembleClassifier", 1, 4, Make<TreeEnsembleClassifier>());
}

}  // namespace onnxflow
