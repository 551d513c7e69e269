#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/ml/post_transform.h"
#include "ops/ml/register.h"
#include "ops/ml/tree_eval.h"
#include "ops/ml/tree_flat.h"
#include "ops/ml/tree_model.h"

namespace onnxflow {
namespace {

using Ints = std::vector<int64_t>;
const float kNan = std::numeric_limits<float>::quiet_NaN();

// Three trees over two features and two targets:
//   tree 0: x0 <= 1 (NaN goes true) ? leaf0(+1 -> t0) : (x1 in {2, 5} ? leaf1(+10 -> t1) : leaf2(+100 -> t0))
//   tree 1: x1 > 3 ? leaf3(+2 -> t0) : leaf4(+4 -> t1)
//   tree 2: a single leaf, leaf5(-3 -> t0)
OpTest Forest(int64_t aggregate, int64_t post_transform) {
  OpTest t("TreeEnsemble", 5, "ai.onnx.ml");
  t.Attr("nodes_featureids", Ints{0, 1, 1, 0})
      .Attr("nodes_modes", Tensor::FromVector<uint8_t>({4}, {0, 6, 3, 0}))
      .Attr("nodes_splits", Tensor::FromVector<float>({4}, {1, 0, 3, 0}))
      .Attr("nodes_truenodeids", Ints{0, 1, 3, 5})
      .Attr("nodes_trueleafs", Ints{1, 1, 1, 1})
      .Attr("nodes_falsenodeids", Ints{1, 2, 4, 5})
      .Attr("nodes_falseleafs", Ints{0, 1, 1, 1})
      .Attr("nodes_missing_value_tracks_true", Ints{1, 0, 0, 0})
      .Attr("membership_values", Tensor::FromVector<float>({3}, {5, 2, kNan}))
      .Attr("leaf_targetids", Ints{0, 1, 0, 0, 1, 0})
      .Attr("leaf_weights", Tensor::FromVector<float>({6}, {1, 10, 100, 2, 4, -3}))
      .Attr("tree_roots", Ints{0, 2, 3})
      .Attr("n_targets", int64_t{2})
      .Attr("aggregate_function", aggregate)
      .Attr("post_transform", post_transform);
  return t;
}

const std::vector<float> kRows = {0, 0, 2, 5, kNan, 2, 3, kNan};

Result<std::vector<Value>> RunForest(int64_t aggregate, int64_t post_transform) {
  OpTest t = Forest(aggregate, post_transform);
  t.Input(Tensor::FromVector<float>({4, 2}, kRows));
  return t.Run(RegisterMlKernels);
}

TEST(TreeEnsemble, AggregateFunctions) {
  const std::vector<std::pair<int64_t, std::vector<float>>> cases = {
      {1, {-2, 4, -1, 10, -2, 4, 97, 4}},                                          // SUM
      {0, {-2.f / 3, 4.f / 3, -1.f / 3, 10.f / 3, -2.f / 3, 4.f / 3, 97.f / 3, 4.f / 3}},  // AVERAGE
      {2, {-3, 4, -3, 10, -3, 4, -3, 4}},                                          // MIN
      {3, {1, 4, 2, 10, 1, 4, 100, 4}},                                            // MAX
  };
  for (const auto& [aggregate, expected] : cases) {
    auto out = RunForest(aggregate, 0);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({4, 2}, expected), out.value()[0].tensor())) << aggregate;
  }
}

TEST(TreeEnsemble, PostTransforms) {
  auto sigmoid = [](double v) { return static_cast<float>(1 / (1 + std::exp(-v))); };
  auto out = RunForest(1, 2);  // LOGISTIC
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({4, 2}, {sigmoid(-2), sigmoid(4), sigmoid(-1), sigmoid(10), sigmoid(-2),
                                                               sigmoid(4), sigmoid(97), sigmoid(4)}),
                          out.value()[0].tensor()));
  out = RunForest(1, 1);  // SOFTMAX: [a, b] -> [sigmoid(a - b), sigmoid(b - a)]
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({4, 2}, {sigmoid(-6), sigmoid(6), sigmoid(-11), sigmoid(11), sigmoid(-6),
                                                               sigmoid(6), sigmoid(93), sigmoid(-93)}),
                          out.value()[0].tensor()));
}

TEST(TreeEnsemble, DoubleAndFloat16Inputs) {
  OpTest d = Forest(1, 0);
  d.Input(Tensor::FromVector<double>({1, 2}, {2, 2}));
  auto out = d.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1, 2}, {-3, 14}), out.value()[0].tensor()));

  OpTest h = Forest(1, 0);
  h.Input(Tensor::FromVector<Float16>({2, 2}, {Float16{FloatToHalf(0.5f)}, Float16{FloatToHalf(7.f)},
                                               Float16{FloatToHalf(1.5f)}, Float16{FloatToHalf(6.f)}}));
  out = h.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  const Tensor& y = out.value()[0].tensor();
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  // row 0: leaf0 + leaf3 + leaf5 -> t0 = 0; row 1: leaf2 + leaf3 + leaf5 -> t0 = 99.
  EXPECT_EQ(HalfToFloat(y.data<Float16>()[0].bits), 0.f);
  EXPECT_EQ(HalfToFloat(y.data<Float16>()[1].bits), 0.f);
  EXPECT_EQ(HalfToFloat(y.data<Float16>()[2].bits), 99.f);
}

TEST(TreeEnsemble, ManyRowsInParallelMatchOneByOne) {
  std::vector<float> x;
  for (int i = 0; i < 5000; ++i) {
    x.push_back(static_cast<float>(i % 3));
    x.push_back(static_cast<float>(i % 7));
  }
  OpTest t = Forest(1, 0);
  t.Input(Tensor::FromVector<float>({5000, 2}, x)).Threads(2);
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok());
  const float* y = out.value()[0].tensor().data<float>();
  for (int i = 0; i < 5000; ++i) {
    OpTest one = Forest(1, 0);
    if (i % 997 != 0) continue;
    one.Input(Tensor::FromVector<float>({1, 2}, {x[2 * i], x[2 * i + 1]}));
    auto single = one.Run(RegisterMlKernels);
    ASSERT_TRUE(single.ok());
    EXPECT_EQ(single.value()[0].tensor().data<float>()[0], y[2 * i]);
    EXPECT_EQ(single.value()[0].tensor().data<float>()[1], y[2 * i + 1]);
  }
}

TEST(TreeEnsemble, BadModelsFailAtLoad) {
  {
    OpTest t = Forest(1, 0);
    t.node().mutable_attribute(4)->mutable_ints()->Set(0, 0);  // node0 true -> node 0: a cycle
    t.node().mutable_attribute(5)->mutable_ints()->Set(0, 0);
    t.Input(Tensor::FromVector<float>({1, 2}, {0, 0}));
    EXPECT_TRUE(Refused(t.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "the tree from root 0 has a cycle through node 0"));
  }
  for (int variant = 0; variant < 4; ++variant) {
    OpTest t("TreeEnsemble", 5, "ai.onnx.ml");
    t.Attr("nodes_featureids", Ints{0})
        .Attr("nodes_modes", Tensor::FromVector<uint8_t>({1}, {static_cast<uint8_t>(variant == 0 ? 9 : variant == 1 ? 6 : 0)}))
        .Attr("nodes_splits", Tensor::FromVector<float>({1}, {0}))
        .Attr("nodes_truenodeids", Ints{0})
        .Attr("nodes_trueleafs", Ints{1})
        .Attr("nodes_falsenodeids", Ints{variant == 2 ? 5 : 1})
        .Attr("nodes_falseleafs", Ints{1})
        .Attr("leaf_targetids", Ints{0, variant == 3 ? 4 : 0})
        .Attr("leaf_weights", Tensor::FromVector<float>({2}, {1, 2}))
        .Attr("tree_roots", Ints{0})
        .Attr("n_targets", int64_t{1});
    t.Input(Tensor::FromVector<float>({1, 1}, {0}));
    // 0: unknown mode; 1: MEMBER without membership_values; 2: missing leaf; 3: target past n_targets
    const char* reasons[] = {"nodes_modes[0] = 9 is not a mode",
                             "membership_values has fewer NaN-ended sets than there are BRANCH_MEMBER nodes",
                             "node 0's false branch points at leaf 5, which does not exist",
                             "leaf 1 has target 4, outside [0, 1)"};
    EXPECT_TRUE(Refused(t.Run(RegisterMlKernels), StatusCode::kInvalidArgument, reasons[variant])) << variant;
  }
  OpTest lengths = Forest(1, 0);
  lengths.node().mutable_attribute(0)->mutable_ints()->Add(0);  // nodes_featureids one too long
  lengths.Input(Tensor::FromVector<float>({1, 2}, {0, 0}));
  EXPECT_TRUE(Refused(lengths.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "attribute 'nodes_truenodeids' has 4 entries, expected 5"));
  OpTest bad_aggregate = Forest(7, 0);
  bad_aggregate.Input(Tensor::FromVector<float>({1, 2}, {0, 0}));
  EXPECT_TRUE(Refused(bad_aggregate.Run(RegisterMlKernels), StatusCode::kInvalidArgument, "aggregate_function must be in [0, 3], got 7"));
}

TEST(TreeEnsemble, TooFewFeaturesFailAtRun) {
  OpTest t = Forest(1, 0);
  t.Input(Tensor::FromVector<float>({2, 1}, {0, 0}));
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(Refused(out, StatusCode::kOutOfRange, "a node reads feature 1 but X has 1 features"));
  EXPECT_EQ(out.status().code(), StatusCode::kOutOfRange);
  OpTest ints = Forest(1, 0);
  ints.Input(Tensor::FromVector<int32_t>({1, 2}, {0, 0}));
  EXPECT_TRUE(Refused(ints.Run(RegisterMlKernels), StatusCode::kUnimplemented, "type int32 is not supported here"));
}

// FlatForest against TreeModel (the evaluation it replaced), on random forests that use every
// mode, NaN sides, thresholds that are no float (0.1, 1/3, beyond the float range) and rows
// sitting exactly on, one float below and one float above each threshold.
const double kInf = std::numeric_limits<double>::infinity();
const std::vector<double> kThresholds = {0.0, 0.5, -1.25, 0.1, 1.0 / 3, -2.7, 1e-40, 1e300, -1e300, kInf, -kInf,
                                         std::numeric_limits<float>::max(), 3.5e38, -3.5e38, 1.0000001};

struct ForestSpec {
  int trees = 12;
  int max_depth = 6;
  int features = 5;
  int targets = 3;
  bool multi_votes = true;    // leaves with several votes (the opset-3 classifiers)
  bool single_leaves = true;  // some trees are one leaf
  bool eq_any = false;        // EQ/NEQ thresholds that are no float (float rows then compare in double)
};

TreeModel RandomModel(std::mt19937& rng, const ForestSpec& s, Aggregate aggregate) {
  TreeModel m;
  m.n_targets = s.targets;
  m.aggregate = aggregate;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto leaf = [&]() {
    const int votes = s.multi_votes ? 1 + pick(3) : 1;
    const int32_t begin = static_cast<int32_t>(m.votes.size());
    for (int v = 0; v < votes; ++v) m.votes.push_back({std::ldexp(static_cast<double>(pick(2001) - 1000), -pick(12)) / 3, pick(s.targets)});
    m.leaves.push_back({begin, static_cast<int32_t>(m.votes.size())});
    return ~static_cast<int32_t>(m.leaves.size() - 1);
  };
  std::function<int32_t(int)> grow = [&](int depth) -> int32_t {
    if (depth == s.max_depth || (depth > 0 && pick(5) == 0)) return leaf();
    TreeModel::Node node;
    node.mode = static_cast<NodeMode>(pick(6));
    node.feature = pick(s.features);
    node.split = kThresholds[pick(static_cast<int>(kThresholds.size()))];
    if ((node.mode == NodeMode::kEq || node.mode == NodeMode::kNeq) && !s.eq_any) node.split = static_cast<float>(node.split);
    node.missing_goes_true = pick(2) == 1;
    const int32_t at = static_cast<int32_t>(m.nodes.size());
    m.nodes.push_back(node);
    const int32_t t = grow(depth + 1);
    const int32_t f = grow(depth + 1);
    m.nodes[at].if_true = t;
    m.nodes[at].if_false = f;
    return at;
  };
  for (int t = 0; t < s.trees; ++t) m.roots.push_back(s.single_leaves && pick(6) == 0 ? leaf() : grow(0));
  if (pick(2) == 1) {
    for (int t = 0; t < s.targets; ++t) m.base_values.push_back(0.25 * t - 0.1);
  }
  EXPECT_TRUE(m.Validate().ok());
  return m;
}

// A row value near a threshold (on it, a float either side) or NaN, +-inf, or anything.
template <typename T>
T NearThreshold(std::mt19937& rng) {
  const double t = kThresholds[rng() % kThresholds.size()];
  const T on = static_cast<T>(t);
  switch (rng() % 8) {
    case 0: return on;
    case 1: return std::nextafter(on, -std::numeric_limits<T>::infinity());
    case 2: return std::nextafter(on, std::numeric_limits<T>::infinity());
    case 3: return std::numeric_limits<T>::quiet_NaN();
    case 4: return (rng() % 2 ? 1 : -1) * std::numeric_limits<T>::infinity();
    default: return static_cast<T>(static_cast<int>(rng() % 600) - 300) / 100;
  }
}

template <typename T>
void ExpectFlatMatchesModel(const TreeModel& m, const FlatForest& flat, const std::vector<T>& rows, int64_t features) {
  const int64_t n = static_cast<int64_t>(rows.size()) / features;
  std::vector<double> got(static_cast<size_t>(n * m.n_targets)), want(static_cast<size_t>(m.n_targets)), row(features);
  flat.ScoreRows(rows.data(), features, n, got.data());
  std::vector<int32_t> leaves(static_cast<size_t>(flat.n_trees()));
  std::vector<double> one(static_cast<size_t>(m.n_targets));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t f = 0; f < features; ++f) row[f] = static_cast<double>(rows[r * features + f]);
    m.AggregateVotes(row.data(), want.data());
    flat.FindLeaves(rows.data() + r * features, 0, flat.n_trees(), leaves.data());
    flat.AggregateLeaves(leaves.data(), one.data());
    for (int64_t t = 0; t < m.n_targets; ++t) {
      ASSERT_EQ(std::memcmp(&got[r * m.n_targets + t], &want[t], sizeof(double)), 0)
          << "row " << r << " of " << n << " target " << t << ": " << got[r * m.n_targets + t] << " vs " << want[t];
      ASSERT_EQ(std::memcmp(&one[t], &want[t], sizeof(double)), 0) << "row " << r << " target " << t;
    }
  }
}

TEST(FlatForest, MatchesTreeModelBitForBit) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 40; ++trial) {
    ForestSpec spec;
    spec.trees = 1 + static_cast<int>(rng() % 40);
    spec.multi_votes = trial % 2 == 0;
    spec.eq_any = trial % 5 == 4;
    const Aggregate aggregate = static_cast<Aggregate>(trial % 4);
    const TreeModel m = RandomModel(rng, spec, aggregate);
    std::unique_ptr<FlatForest> flat = FlatForest::Build(m);
    ASSERT_NE(flat, nullptr);
    if (!spec.eq_any) {
      EXPECT_TRUE(flat->compares_float());
    }
    for (int64_t n : {1, 5, 16, 37, 130}) {  // one row, fewer rows than lanes, lanes with a tail, blocks
      std::vector<float> xf(static_cast<size_t>(n * spec.features));
      std::vector<double> xd(xf.size());
      for (float& v : xf) v = NearThreshold<float>(rng);
      for (double& v : xd) v = NearThreshold<double>(rng);
      if (flat->compares_float()) ExpectFlatMatchesModel(m, *flat, xf, spec.features);
      ExpectFlatMatchesModel(m, *flat, xd, spec.features);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(FlatForest, WhatItDoesNotTake) {
  std::mt19937 rng(5);
  ForestSpec spec;
  spec.single_leaves = false;
  TreeModel m = RandomModel(rng, spec, Aggregate::kSum);
  ASSERT_NE(FlatForest::Build(m), nullptr);
  TreeModel member = m;
  member.nodes[0].mode = NodeMode::kMember;
  EXPECT_EQ(FlatForest::Build(member), nullptr);
  TreeModel nan = m;
  nan.nodes[0].split = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(FlatForest::Build(nan), nullptr);
  // Near misses: an EQ threshold that is no float still builds, compared in double; an
  // ordering threshold that is no float (LEQ 0.1) keeps float comparisons.
  TreeModel eq = m;
  eq.nodes[0].mode = NodeMode::kEq;
  eq.nodes[0].split = 0.1;
  std::unique_ptr<FlatForest> flat = FlatForest::Build(eq);
  ASSERT_NE(flat, nullptr);
  EXPECT_FALSE(flat->compares_float());
  TreeModel leq = m;
  leq.nodes[0].mode = NodeMode::kLeq;
  leq.nodes[0].split = 0.1;
  flat = FlatForest::Build(leq);
  ASSERT_NE(flat, nullptr);
  EXPECT_TRUE(flat->compares_float());
}

// Take for float rows keeps the float nodes only, when they decide every comparison: the same
// scores as Build's forest; for double rows (or an unknown type, or an EQ threshold that is no
// float) both.
TEST(FlatForest, TakeForFloatRowsKeepsWhatTheyRead) {
  std::mt19937 rng(11);
  ForestSpec spec;
  spec.trees = 12;
  const TreeModel m = RandomModel(rng, spec, Aggregate::kSum);
  TreeModel for_float = m;
  std::unique_ptr<FlatForest> flat = FlatForest::Take(for_float, DataType::kFloat);
  ASSERT_NE(flat, nullptr);
  EXPECT_TRUE(flat->compares_float());
  EXPECT_FALSE(flat->compares_double());
  std::vector<float> xf(static_cast<size_t>(20 * spec.features));
  for (float& v : xf) v = NearThreshold<float>(rng);
  ExpectFlatMatchesModel(m, *flat, xf, spec.features);
  for (DataType rows : {DataType::kDouble, DataType::kUndefined, DataType::kInt64}) {
    TreeModel copy = m;
    EXPECT_TRUE(FlatForest::Take(copy, rows)->compares_double()) << DataTypeName(rows);
  }
  TreeModel eq = m;
  eq.nodes[0].mode = NodeMode::kEq;
  eq.nodes[0].split = 0.1;
  EXPECT_TRUE(FlatForest::Take(eq, DataType::kFloat)->compares_double());
}

// The TreeEnsemble-5 attributes of a model whose leaves have one vote each and no tree is a leaf.
OpTest AsTreeEnsemble(const TreeModel& m) {
  Ints features, true_ids, true_leafs, false_ids, false_leafs, missing, roots, targets;
  std::vector<double> splits, weights;
  std::vector<uint8_t> modes;
  for (const TreeModel::Node& n : m.nodes) {
    features.push_back(n.feature);
    splits.push_back(n.split);
    modes.push_back(static_cast<uint8_t>(n.mode));
    missing.push_back(n.missing_goes_true);
    true_ids.push_back(n.if_true >= 0 ? n.if_true : ~n.if_true);
    true_leafs.push_back(n.if_true < 0);
    false_ids.push_back(n.if_false >= 0 ? n.if_false : ~n.if_false);
    false_leafs.push_back(n.if_false < 0);
  }
  for (const TreeModel::Leaf& l : m.leaves) {
    targets.push_back(m.votes[l.vote_begin].target);
    weights.push_back(m.votes[l.vote_begin].weight);
  }
  for (int32_t r : m.roots) roots.push_back(r);
  const int64_t n = static_cast<int64_t>(m.nodes.size()), l = static_cast<int64_t>(m.leaves.size());
  OpTest t("TreeEnsemble", 5, "ai.onnx.ml");
  t.Attr("nodes_featureids", features)
      .Attr("nodes_modes", Tensor::FromVector<uint8_t>({n}, modes))
      .Attr("nodes_splits", Tensor::FromVector<double>({n}, splits))  // double: thresholds that are no float
      .Attr("nodes_truenodeids", true_ids)
      .Attr("nodes_trueleafs", true_leafs)
      .Attr("nodes_falsenodeids", false_ids)
      .Attr("nodes_falseleafs", false_leafs)
      .Attr("nodes_missing_value_tracks_true", missing)
      .Attr("leaf_targetids", targets)
      .Attr("leaf_weights", Tensor::FromVector<double>({l}, weights))
      .Attr("tree_roots", roots)
      .Attr("n_targets", m.n_targets)
      .Attr("aggregate_function", static_cast<int64_t>(m.aggregate))
      .Attr("post_transform", int64_t{2});  // LOGISTIC
  return t;
}

// The op end to end against TreeModel::Score: one row (with enough trees that 2 threads split
// them), a few rows, and a batch, on 1 and 2 threads; equal to the last bit of the float output.
TEST(TreeEnsemble, FlatPathEqualsTreeModelOnEveryThreadCount) {
  std::mt19937 rng(77);
  ForestSpec spec;
  spec.trees = 3000;  // ~10000 comparisons a row: one row's trees are split over 2 threads
  spec.multi_votes = false;
  spec.single_leaves = false;
  spec.features = 6;
  spec.targets = 2;
  TreeModel m = RandomModel(rng, spec, Aggregate::kSum);
  m.base_values.clear();
  m.post_transform = PostTransform::kLogistic;
  std::unique_ptr<FlatForest> flat = FlatForest::Build(m);
  ASSERT_NE(flat, nullptr);
  ASSERT_GE(static_cast<double>(flat->n_trees()) * flat->mean_depth(), static_cast<double>(kTreeSplitSteps));
  for (int64_t n : {1, 3, 300}) {
    std::vector<float> x(static_cast<size_t>(n * spec.features));
    for (float& v : x) v = NearThreshold<float>(rng);
    std::vector<float> want;
    std::vector<double> row(spec.features), scores(spec.targets);
    for (int64_t r = 0; r < n; ++r) {
      for (int f = 0; f < spec.features; ++f) row[f] = x[r * spec.features + f];
      m.Score(row.data(), scores.data());
      for (double s : scores) want.push_back(static_cast<float>(s));
    }
    for (int threads : {1, 2}) {
      OpTest t = AsTreeEnsemble(m);
      t.Input(Tensor::FromVector<float>({n, spec.features}, x)).Threads(threads);
      auto out = t.Run(RegisterMlKernels);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const Tensor& y = out.value()[0].tensor();
      ASSERT_EQ(y.size(), static_cast<int64_t>(want.size()));
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(std::memcmp(&y.data<float>()[i], &want[i], sizeof(float)), 0) << "n " << n << " threads " << threads << " at " << i;
      }
    }
  }
}

TEST(PostTransform, SoftmaxZeroAndProbit) {
  double s[3] = {0, 1, 1};
  ApplyPostTransform(PostTransform::kSoftmaxZero, s, 3);
  EXPECT_EQ(s[0], 0);
  EXPECT_NEAR(s[1], 0.5, 1e-12);
  EXPECT_NEAR(s[2], 0.5, 1e-12);
  double p[3] = {0.5, 0.8413447460685429, 0.022750131948179195};
  ApplyPostTransform(PostTransform::kProbit, p, 3);
  EXPECT_NEAR(p[0], 0, 1e-12);
  EXPECT_NEAR(p[1], 1, 1e-9);
  EXPECT_NEAR(p[2], -2, 1e-9);
  for (double x : {-0.999999, -0.7, -0.1, 0.3, 0.95, 0.9999999}) EXPECT_NEAR(std::erf(ErfInv(x)), x, 1e-14) << x;
}

}  // namespace
}  // namespace onnxflow
