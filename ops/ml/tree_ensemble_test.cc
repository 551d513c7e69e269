#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/ml/post_transform.h"
#include "ops/ml/register.h"

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
