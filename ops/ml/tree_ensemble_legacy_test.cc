#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;
using Strings = std::vector<std::string>;

// Tree 0: x0 <= 0.5 ? leaf id 1 : leaf id 2. Tree 1: a single leaf (id 0).
void AddNodes(OpTest& t) {
  t.Attr("nodes_treeids", Ints{0, 0, 0, 1})
      .Attr("nodes_nodeids", Ints{0, 1, 2, 0})
      .Attr("nodes_featureids", Ints{0, 0, 0, 0})
      .Attr("nodes_modes", Strings{"BRANCH_LEQ", "LEAF", "LEAF", "LEAF"})
      .Attr("nodes_truenodeids", Ints{1, 0, 0, 0})
      .Attr("nodes_falsenodeids", Ints{2, 0, 0, 0});
}

OpTest Regressor(int opset, const std::string& aggregate) {
  OpTest t("TreeEnsembleRegressor", opset, "ai.onnx.ml");
  AddNodes(t);
  if (opset >= 3) {
    t.Attr("nodes_values_as_tensor", Tensor::FromVector<double>({4}, {0.5, 0, 0, 0}));
  } else {
    t.Attr("nodes_values", Floats{0.5f, 0, 0, 0});
  }
  t.Attr("target_treeids", Ints{0, 0, 0, 1})
      .Attr("target_nodeids", Ints{1, 1, 2, 0})
      .Attr("target_ids", Ints{0, 1, 0, 1})
      .Attr("target_weights", Floats{1, 2, 3, 10})
      .Attr("n_targets", int64_t{2})
      .Attr("base_values", Floats{100, 200})
      .Attr("aggregate_function", aggregate);
  return t;
}

TEST(TreeEnsembleRegressor, SumAndAverageWithBaseValues) {
  for (int opset : {1, 3}) {
    OpTest sum = Regressor(opset, "SUM");
    sum.Input(Tensor::FromVector<double>({2, 1}, {0, 1}));
    auto out = sum.Run(RegisterMlKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 2}, {101, 212, 103, 210}), out.value()[0].tensor()));
    OpTest avg = Regressor(opset, "AVERAGE");
    avg.Input(Tensor::FromVector<int32_t>({2, 1}, {0, 1}));
    out = avg.Run(RegisterMlKernels);
    ASSERT_TRUE(out.ok());
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 2}, {100.5f, 206, 101.5f, 205}), out.value()[0].tensor()));
  }
}

TEST(TreeEnsembleRegressor, BadModelsFail) {
  OpTest bad_aggregate = Regressor(3, "MEDIAN");
  bad_aggregate.Input(Tensor::FromVector<float>({1, 1}, {0}));
  EXPECT_TRUE(Refused(bad_aggregate.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "aggregate_function must be AVERAGE, SUM, MIN or MAX, got 'MEDIAN'"));
  OpTest vote_on_branch = Regressor(3, "SUM");
  for (auto& a : *vote_on_branch.node().mutable_attribute()) {
    if (a.name() == "target_nodeids") a.mutable_ints()->Set(0, 0);  // (tree 0, node 0) is a branch
  }
  vote_on_branch.Input(Tensor::FromVector<float>({1, 1}, {0}));
  auto out = vote_on_branch.Run(RegisterMlKernels);
  ASSERT_TRUE(Refused(out, StatusCode::kInvalidArgument, "target_weights[0] names (tree 0, id 0), which is not a leaf"));
  EXPECT_NE(out.status().message().find("not a leaf"), std::string::npos) << out.status().message();
  OpTest no_features = Regressor(3, "SUM");
  no_features.Input(Tensor::FromVector<float>({1, 0}, {}));
  EXPECT_TRUE(Refused(no_features.Run(RegisterMlKernels), StatusCode::kOutOfRange, "a node reads feature 0 but X has 0 features"));
}

// One single-split tree per mode on feature 0, tree k's true leaf worth 2^k: the output's bits say
// which side each tree took. Thresholds as doubles that are no float (0.1), so float rows one float
// either side of them, NaN (to each tree's missing side) and infinities test the comparisons
// against the definition, x widened to double.
OpTest EveryModeRegressor(double eq_threshold) {
  const Strings modes = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ",
                         "BRANCH_LEQ", "BRANCH_GT"};
  Ints tree_ids, node_ids, features, true_ids, false_ids, missing, vote_trees, vote_nodes, vote_ids;
  Strings node_modes;
  std::vector<double> values;
  Floats weights;
  for (int k = 0; k < static_cast<int>(modes.size()); ++k) {
    for (int id = 0; id < 3; ++id) {
      tree_ids.push_back(k);
      node_ids.push_back(id);
      features.push_back(0);
      node_modes.push_back(id == 0 ? modes[k] : "LEAF");
      true_ids.push_back(id == 0 ? 1 : 0);
      false_ids.push_back(id == 0 ? 2 : 0);
      missing.push_back(id == 0 && k % 2 == 1);
      values.push_back(id != 0 ? 0.0 : (k == 4 || k == 5) ? eq_threshold : 0.1);
    }
    vote_trees.push_back(k), vote_nodes.push_back(1), vote_ids.push_back(0), weights.push_back(static_cast<float>(1 << k));
  }
  OpTest t("TreeEnsembleRegressor", 3, "ai.onnx.ml");
  t.Attr("nodes_treeids", tree_ids).Attr("nodes_nodeids", node_ids).Attr("nodes_featureids", features)
      .Attr("nodes_modes", node_modes).Attr("nodes_truenodeids", true_ids).Attr("nodes_falsenodeids", false_ids)
      .Attr("nodes_missing_value_tracks_true", missing)
      .Attr("nodes_values_as_tensor", Tensor::FromVector<double>({static_cast<int64_t>(values.size())}, values))
      .Attr("target_treeids", vote_trees).Attr("target_nodeids", vote_nodes).Attr("target_ids", vote_ids)
      .Attr("target_weights", weights).Attr("n_targets", int64_t{1});
  return t;
}

float EveryModeExpected(double x, double eq_threshold) {
  float sum = 0;
  for (int k = 0; k < 8; ++k) {
    const double t = (k == 4 || k == 5) ? eq_threshold : 0.1;
    bool goes;
    if (std::isnan(x) && k % 2 == 1) {
      goes = true;
    } else {
      switch (k) {
        case 0: case 6: goes = x <= t; break;
        case 1: goes = x < t; break;
        case 2: goes = x >= t; break;
        case 3: case 7: goes = x > t; break;
        case 4: goes = x == t; break;
        default: goes = x != t; break;
      }
    }
    if (goes) sum += static_cast<float>(1 << k);
  }
  return sum;
}

TEST(TreeEnsembleRegressor, EveryModeAtItsThresholdInEveryInputType) {
  const float below = std::nextafter(0.1f, 0.f);  // 0.1f is above 0.1
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> fx = {below, std::nextafter(below, 1.f), 0.1f, 0.5f, std::nextafter(0.5f, 0.f), std::nextafter(0.5f, 1.f),
                                 std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.f};
  const std::vector<double> dx = {0.1, std::nextafter(0.1, 0.0), std::nextafter(0.1, 1.0), 0.5, std::nextafter(0.5, 1.0),
                                  std::numeric_limits<double>::quiet_NaN(), -1e300};
  const std::vector<int64_t> ix = {0, 1, -3};
  // 0.5 keeps the EQ trees' thresholds floats (float rows compare in float); 0.1 does not (float
  // rows then compare in double), a near miss of the same model.
  for (double eq : {0.5, 0.1}) {
    auto check = [&](const Tensor& x, const std::vector<double>& as_double) {
      OpTest t = EveryModeRegressor(eq);
      t.Input(x);
      auto out = t.Run(RegisterMlKernels);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      std::vector<float> want;
      for (double v : as_double) want.push_back(EveryModeExpected(v, eq));
      EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({static_cast<int64_t>(want.size()), 1}, want), out.value()[0].tensor()))
          << "eq threshold " << eq << " input " << DataTypeName(x.dtype());
    };
    check(Tensor::FromVector<float>({static_cast<int64_t>(fx.size()), 1}, fx), std::vector<double>(fx.begin(), fx.end()));
    check(Tensor::FromVector<double>({static_cast<int64_t>(dx.size()), 1}, dx), dx);
    check(Tensor::FromVector<int64_t>({static_cast<int64_t>(ix.size()), 1}, ix), std::vector<double>(ix.begin(), ix.end()));
    // 40 rows: the lanes path (8 rows and more) as well as the one-row path above.
    std::vector<float> many;
    for (int i = 0; i < 4; ++i) many.insert(many.end(), fx.begin(), fx.end());
    check(Tensor::FromVector<float>({static_cast<int64_t>(many.size()), 1}, many), std::vector<double>(many.begin(), many.end()));
  }
}

OpTest BinaryClassifier(const std::string& transform) {
  OpTest t("TreeEnsembleClassifier", 3, "ai.onnx.ml");
  AddNodes(t);
  t.Attr("nodes_values", Floats{0.5f, 0, 0, 0})
      .Attr("class_treeids", Ints{0, 0})
      .Attr("class_nodeids", Ints{1, 2})
      .Attr("class_ids", Ints{0, 0})
      .Attr("class_weights", Floats{0.2f, 0.9f})
      .Attr("classlabels_int64s", Ints{0, 1})
      .Attr("post_transform", transform);
  return t;
}

TEST(TreeEnsembleClassifier, BinaryScoreIsClassOne) {
  OpTest t = BinaryClassifier("NONE");
  t.Input(Tensor::FromVector<float>({2, 1}, {0, 1})).Outputs(2);
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2}, {0, 1}), out.value()[0].tensor()));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 2}, {0.8f, 0.2f, 0.1f, 0.9f}), out.value()[1].tensor()));

  OpTest logistic = BinaryClassifier("LOGISTIC");
  logistic.Input(Tensor::FromVector<float>({1, 1}, {1})).Outputs(2);
  out = logistic.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  const float s = static_cast<float>(1 / (1 + std::exp(-0.9)));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 2}, {1 - s, s}), out.value()[1].tensor()));
}

TEST(TreeEnsembleClassifier, MulticlassStringsWithSoftmax) {
  OpTest t("TreeEnsembleClassifier", 3, "ai.onnx.ml");
  AddNodes(t);
  t.Attr("nodes_values", Floats{0.5f, 0, 0, 0})
      .Attr("class_treeids", Ints{0, 0, 1})
      .Attr("class_nodeids", Ints{1, 2, 0})
      .Attr("class_ids", Ints{0, 2, 1})
      .Attr("class_weights", Floats{2, 3, 1})
      .Attr("classlabels_strings", Strings{"a", "b", "c"})
      .Attr("post_transform", std::string("SOFTMAX"));
  t.Input(Tensor::FromVector<float>({2, 1}, {0, 1})).Outputs(2);
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<std::string>({2}, {"a", "c"}), out.value()[0].tensor()));
  // Row 0 scores [2, 1, 0], row 1 [0, 1, 3], then softmax.
  auto softmax = [](std::vector<double> v) {
    double sum = 0;
    for (double& x : v) sum += (x = std::exp(x));
    std::vector<float> out;
    for (double x : v) out.push_back(static_cast<float>(x / sum));
    return out;
  };
  std::vector<float> expected = softmax({2, 1, 0});
  for (float v : softmax({0, 1, 3})) expected.push_back(v);
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 3}, expected), out.value()[1].tensor()));
}

TEST(TreeEnsembleClassifier, NeedsExactlyOneLabelList) {
  OpTest t = BinaryClassifier("NONE");
  t.Attr("classlabels_strings", Strings{"x", "y"});
  t.Input(Tensor::FromVector<float>({1, 1}, {0})).Outputs(2);
  EXPECT_TRUE(Refused(t.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "exactly one of classlabels_int64s and classlabels_strings must be set"));
}

}  // namespace
}  // namespace onnxflow
