// BatchNormalization, InstanceNormalization, GroupNormalization, LayerNormalization,
// RMSNormalization, LRN, LpNormalization, MeanVarianceNormalization against plain loops.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/nn/register.h"

namespace onnxflow {
namespace {

std::vector<float> Ramp(int64_t n, float scale = 0.37f) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(i * scale) * 3 + 0.1f * (i % 5);
  return v;
}

// Normalizes groups of `group` consecutive elements with per-element scale/bias.
std::vector<float> NormalizeGroups(const std::vector<float>& x, int64_t group, double eps,
                                   const std::function<double(int64_t)>& scale,
                                   const std::function<double(int64_t)>& bias, bool rms = false) {
  std::vector<float> y(x.size());
  for (size_t g = 0; g < x.size() / group; ++g) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < group; ++i) mean += x[g * group + i];
    mean = rms ? 0 : mean / group;
    for (int64_t i = 0; i < group; ++i) var += (x[g * group + i] - mean) * (x[g * group + i] - mean);
    var /= group;
    for (int64_t i = 0; i < group; ++i) {
      const int64_t at = g * group + i;
      y[at] = static_cast<float>((x[at] - mean) / std::sqrt(var + eps) * scale(at) + bias(at));
    }
  }
  return y;
}

TEST(BatchNorm, InferenceEveryType) {
  const int64_t n = 2, c = 3, plane = 17;
  const std::vector<float> x = Ramp(n * c * plane);
  const std::vector<float> scale = {1, 2, -1}, bias = {0, 1, 2}, mean = {0.5f, -1, 0}, var = {1, 4, 0.25f};
  std::vector<float> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t ch = (i / plane) % c;
    expected[i] = (x[i] - mean[ch]) / std::sqrt(var[ch] + 1e-3f) * scale[ch] + bias[ch];
  }
  auto run = [&](auto tag) {
    using T = decltype(tag);
    auto conv = [](const std::vector<float>& v) {
      std::vector<T> o;
      for (float f : v) o.push_back(FromCompute<T>(static_cast<ComputeType<T>>(f)));
      return o;
    };
    OpTest t("BatchNormalization", 15);
    t.Input(Tensor::FromVector<T>({n, c, plane}, conv(x)));
    for (const auto* p : {&scale, &bias, &mean, &var}) t.Input(Tensor::FromVector<T>({c}, conv(*p)));
    t.Attr("epsilon", 1e-3f);
    auto out = t.Run(RegisterNnKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const double tol = sizeof(T) == 2 ? 2e-2 : 1e-5;
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<T>({n, c, plane}, conv(expected)), (*out)[0].tensor(), tol, tol));
  };
  run(float{}); run(double{}); run(Float16{}); run(BFloat16{});
}

// float inference rounds as ONNX Runtime does, step by step (batch_norm.cc says why): bit for bit
// against that order, written with each step stored (so nothing is fused or widened), over odd
// parameters where taking 1 / sqrt in double or fusing x * a + b moves the last bit.
TEST(BatchNorm, FloatRoundsAsOnnxRuntimeDoes) {
  const int64_t n = 2, c = 5, plane = 37;
  std::vector<float> x(n * c * plane), scale(c), bias(c), mean(c), var(c);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * 7.3f;
  for (int64_t ch = 0; ch < c; ++ch) {
    scale[ch] = 0.9f + 0.173f * ch;
    bias[ch] = -0.61f + 0.29f * ch;
    mean[ch] = 0.137f * ch - 0.3f;
    var[ch] = 0.71f + 1.37f * ch;
  }
  OpTest t("BatchNormalization", 15);
  t.Input(Tensor::FromVector<float>({n, c, plane}, x));
  for (const auto* p : {&scale, &bias, &mean, &var}) t.Input(Tensor::FromVector<float>({c}, *p));
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float* y = (*out)[0].tensor().data<float>();
  int differs_from_double = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t ch = (i / plane) % c;
    volatile float inv_std = 1.0f / std::sqrt(var[ch] + 1e-5f);
    volatile float a = inv_std * scale[ch];
    volatile float centre = mean[ch] * a;
    volatile float shift = bias[ch] - centre;
    volatile float product = x[i] * a;
    const float want = product + shift;
    ASSERT_EQ(y[i], want) << i;
    const double exact = (x[i] - mean[ch]) / std::sqrt(static_cast<double>(var[ch]) + 1e-5f) * scale[ch] + bias[ch];
    differs_from_double += y[i] != static_cast<float>(exact);
  }
  EXPECT_GT(differs_from_double, 0) << "the parameters do not tell the two orders apart";
}

TEST(BatchNorm, TrainingModeOutputsRunningStats) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};  // [2, 2, 2]
  OpTest t("BatchNormalization", 15);
  t.Input(Tensor::FromVector<float>({2, 2, 2}, x))
      .Input(Tensor::FromVector<float>({2}, {1, 1}))
      .Input(Tensor::FromVector<float>({2}, {0, 0}))
      .Input(Tensor::FromVector<float>({2}, {0, 0}))
      .Input(Tensor::FromVector<float>({2}, {1, 1}))
      .Attr("training_mode", int64_t{1})
      .Attr("momentum", 0.5f)
      .Outputs(3);
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // Channel 0 holds {1, 2, 5, 6}: mean 3.5, var 4.25. Channel 1 {3, 4, 7, 8}: mean 5.5, var 4.25.
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2}, {1.75f, 2.75f}), (*out)[1].tensor()));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2}, {2.625f, 2.625f}), (*out)[2].tensor()));
  const float inv = 1 / std::sqrt(4.25f + 1e-5f);
  EXPECT_NEAR((*out)[0].tensor().data<float>()[0], (1 - 3.5f) * inv, 1e-5);
}

TEST(BatchNorm, NonSpatialParametersBeforeVersion9) {
  OpTest t("BatchNormalization", 7);
  t.Input(Tensor::FromVector<float>({2, 1, 2}, {1, 2, 3, 4}))
      .Input(Tensor::FromVector<float>({1, 2}, {1, 2}))
      .Input(Tensor::FromVector<float>({1, 2}, {0, 1}))
      .Input(Tensor::FromVector<float>({1, 2}, {1, 0}))
      .Input(Tensor::FromVector<float>({1, 2}, {1, 4}))
      .Attr("spatial", int64_t{0}).Attr("epsilon", 0.0f);
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 1, 2}, {0, 3, 2, 5}), (*out)[0].tensor()));
}

TEST(BatchNorm, WrongParameterSize) {
  OpTest t("BatchNormalization", 15);
  t.Input(Tensor::FromVector<float>({1, 2, 1}, {1, 2}));
  for (int i = 0; i < 4; ++i) t.Input(Tensor::FromVector<float>({3}, {1, 1, 1}));
  EXPECT_TRUE(Refused(t.Run(RegisterNnKernels), StatusCode::kInvalidArgument, "input 'scale' has 3 elements, expected 2 (shape [3])"));
}

TEST(InstanceNorm, MatchesReference) {
  const int64_t n = 2, c = 3, plane = 37;
  const std::vector<float> x = Ramp(n * c * plane);
  const std::vector<float> scale = {1, 0.5f, 2}, bias = {0, -1, 3};
  OpTest t("InstanceNormalization", 22);
  t.Input(Tensor::FromVector<float>({n, c, plane}, x))
      .Input(Tensor::FromVector<float>({c}, scale))
      .Input(Tensor::FromVector<float>({c}, bias));
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto ref = NormalizeGroups(x, plane, 1e-5, [&](int64_t i) { return scale[(i / plane) % c]; },
                             [&](int64_t i) { return bias[(i / plane) % c]; });
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({n, c, plane}, ref), (*out)[0].tensor(), 1e-4, 1e-4));
}

TEST(GroupNorm, Version21PerChannelAndVersion18PerGroup) {
  const int64_t n = 2, c = 4, plane = 5, groups = 2;
  const std::vector<float> x = Ramp(n * c * plane);
  const std::vector<float> scale = {1, 2, 3, 4}, bias = {0, 1, 0, -1};
  OpTest t("GroupNormalization", 21);
  t.Input(Tensor::FromVector<float>({n, c, plane}, x))
      .Input(Tensor::FromVector<float>({c}, scale))
      .Input(Tensor::FromVector<float>({c}, bias))
      .Attr("num_groups", groups);
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto ref = NormalizeGroups(x, c / groups * plane, 1e-5, [&](int64_t i) { return scale[(i / plane) % c]; },
                             [&](int64_t i) { return bias[(i / plane) % c]; });
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({n, c, plane}, ref), (*out)[0].tensor(), 1e-4, 1e-4));

  OpTest t18("GroupNormalization", 18);
  t18.Input(Tensor::FromVector<float>({n, c, plane}, x))
      .Input(Tensor::FromVector<float>({groups}, {2, 3}))
      .Input(Tensor::FromVector<float>({groups}, {1, -1}))
      .Attr("num_groups", groups);
  auto out18 = t18.Run(RegisterNnKernels);
  ASSERT_TRUE(out18.ok()) << out18.status().ToString();
  auto ref18 = NormalizeGroups(x, c / groups * plane, 1e-5, [&](int64_t i) { return (i / plane) % c < 2 ? 2 : 3; },
                               [&](int64_t i) { return (i / plane) % c < 2 ? 1 : -1; });
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({n, c, plane}, ref18), (*out18)[0].tensor(), 1e-4, 1e-4));

  OpTest bad("GroupNormalization", 21);
  bad.Input(Tensor::FromVector<float>({n, c, plane}, x))
      .Input(Tensor::FromVector<float>({c}, scale))
      .Input(Tensor::FromVector<float>({c}, bias))
      .Attr("num_groups", int64_t{3});
  EXPECT_TRUE(Refused(bad.Run(RegisterNnKernels), StatusCode::kInvalidArgument, "num_groups = 3 must be positive and divide the 4 channels"));
}

TEST(LayerNorm, AxesStatsAndBroadcastScale) {
  const Shape shape = {2, 3, 19};
  const std::vector<float> x = Ramp(2 * 3 * 19);
  for (int64_t axis : {-1, 1, 0}) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    const int64_t n = a == 2 ? 19 : a == 1 ? 57 : 114;
    std::vector<float> scale(n), bias(n);
    for (int64_t i = 0; i < n; ++i) { scale[i] = 1 + 0.01f * i; bias[i] = 0.5f - 0.02f * i; }
    Shape row_shape(shape.begin() + a, shape.end());
    OpTest t("LayerNormalization", 17);
    t.Input(Tensor::FromVector<float>(shape, x))
        .Input(Tensor::FromVector<float>(row_shape, scale))
        .Input(Tensor::FromVector<float>(row_shape, bias))
        .Attr("axis", axis)
        .Outputs(3);
    auto out = t.Run(RegisterNnKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    auto ref = NormalizeGroups(x, n, 1e-5, [&](int64_t i) { return scale[i % n]; },
                               [&](int64_t i) { return bias[i % n]; });
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(shape, ref), (*out)[0].tensor(), 1e-4, 1e-4)) << axis;
    Shape stat_shape(shape.begin(), shape.begin() + a);
    stat_shape.resize(3, 1);
    EXPECT_EQ((*out)[1].tensor().shape(), stat_shape);
    EXPECT_EQ((*out)[2].tensor().shape(), stat_shape);
    double mean0 = 0;
    for (int64_t i = 0; i < n; ++i) mean0 += x[i];
    EXPECT_NEAR((*out)[1].tensor().data<float>()[0], mean0 / n, 1e-5);
  }
  // Scale given as [1, 19] broadcast over the row [3, 19]; no bias.
  std::vector<float> s(19, 2.0f);
  OpTest t("LayerNormalization", 17);
  t.Input(Tensor::FromVector<float>(shape, x)).Input(Tensor::FromVector<float>({1, 19}, s)).Attr("axis", int64_t{1});
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto ref = NormalizeGroups(x, 57, 1e-5, [](int64_t) { return 2.0; }, [](int64_t) { return 0.0; });
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(shape, ref), (*out)[0].tensor(), 1e-4, 1e-4));
  OpTest bad("LayerNormalization", 17);
  bad.Input(Tensor::FromVector<float>(shape, x)).Input(Tensor::FromVector<float>({5}, {1, 1, 1, 1, 1}));
  auto refused = bad.Run(RegisterNnKernels);
  ASSERT_TRUE(Refused(refused, StatusCode::kInvalidArgument, "input 'scale' of shape [5] does not broadcast to the normalized shape [19]"));
  EXPECT_NE(refused.status().message().find("input 'scale' of shape [5] does not broadcast to the normalized shape"),
            std::string::npos)
      << refused.status().ToString();
}

TEST(RmsNorm, MatchesReference) {
  const std::vector<float> x = Ramp(4 * 33);
  std::vector<float> scale(33);
  for (int i = 0; i < 33; ++i) scale[i] = 0.5f + i * 0.1f;
  OpTest t("RMSNormalization", 23);
  t.Input(Tensor::FromVector<float>({4, 33}, x)).Input(Tensor::FromVector<float>({33}, scale)).Attr("epsilon", 1e-3f);
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto ref = NormalizeGroups(x, 33, 1e-3, [&](int64_t i) { return scale[i % 33]; }, [](int64_t) { return 0.0; }, true);
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({4, 33}, ref), (*out)[0].tensor(), 1e-4, 1e-4));
}

// The spec's types: RMSNormalization's Y is scale's type (V), here double over a float X; with
// stash_type 16, LayerNormalization's Mean and InvStdDev are bfloat16.
TEST(RmsNorm, OutputTakesTheScalesType) {
  const std::vector<float> x = Ramp(2 * 17);
  std::vector<double> scale(17);
  for (int i = 0; i < 17; ++i) scale[i] = 0.5 + i * 0.25;
  OpTest t("RMSNormalization", 23);
  t.Input(Tensor::FromVector<float>({2, 17}, x)).Input(Tensor::FromVector<double>({17}, scale));
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].tensor().dtype(), DataType::kDouble);
  auto ref = NormalizeGroups(x, 17, 1e-5, [&](int64_t i) { return scale[i % 17]; }, [](int64_t) { return 0.0; }, true);
  for (int i = 0; i < 34; ++i) EXPECT_NEAR((*out)[0].tensor().data<double>()[i], ref[i], 1e-5) << i;

  OpTest ln("LayerNormalization", 17);
  ln.Input(Tensor::FromVector<float>({2, 17}, x)).Input(Tensor::FromVector<float>({17}, std::vector<float>(17, 1.0f)))
      .Attr("stash_type", int64_t{16}).Outputs(3);
  out = ln.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().dtype(), DataType::kFloat);
  ASSERT_EQ((*out)[1].tensor().dtype(), DataType::kBFloat16);
  ASSERT_EQ((*out)[2].tensor().dtype(), DataType::kBFloat16);
  double mean0 = 0;
  for (int i = 0; i < 17; ++i) mean0 += x[i];
  EXPECT_NEAR(BFloat16ToFloat((*out)[1].tensor().data<BFloat16>()[0].bits), mean0 / 17, std::abs(mean0 / 17) / 128 + 1e-6);
}

TEST(Lrn, MatchesReference) {
  const int64_t n = 1, c = 5, plane = 6, size = 3;
  const std::vector<float> x = Ramp(n * c * plane);
  OpTest t("LRN", 13);
  t.Input(Tensor::FromVector<float>({n, c, 2, 3}, x))
      .Attr("size", size).Attr("alpha", 0.01f).Attr("beta", 0.5f).Attr("bias", 2.0f);
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> ref(x.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t i = 0; i < plane; ++i) {
      double sq = 0;
      for (int64_t k = std::max<int64_t>(0, ch - 1); k <= std::min<int64_t>(c - 1, ch + 1); ++k) sq += x[k * plane + i] * x[k * plane + i];
      ref[ch * plane + i] = x[ch * plane + i] / std::pow(2.0 + 0.01 / size * sq, 0.5);
    }
  }
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({n, c, 2, 3}, ref), (*out)[0].tensor()));
  // The double path (scalar pow) agrees too.
  OpTest td("LRN", 13);
  td.Input(Tensor::FromVector<double>({n, c, 2, 3}, std::vector<double>(x.begin(), x.end())))
      .Attr("size", size).Attr("alpha", 0.01f).Attr("beta", 0.5f).Attr("bias", 2.0f);
  auto outd = td.Run(RegisterNnKernels);
  ASSERT_TRUE(outd.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({n, c, 2, 3}, std::vector<double>(ref.begin(), ref.end())),
                          (*outd)[0].tensor(), 1e-5, 1e-6));
  OpTest missing("LRN", 13);
  missing.Input(Tensor::FromVector<float>({n, c, 2, 3}, x));
  EXPECT_TRUE(Refused(missing.Run(RegisterNnKernels), StatusCode::kInvalidArgument, "attribute 'size' is required"));
}

TEST(LpNormalization, L1L2AndZeroRows) {
  OpTest t("LpNormalization", 22);
  t.Input(Tensor::FromVector<float>({3, 2}, {3, 4, 0, 0, -1, 1})).Attr("axis", int64_t{1});
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3, 2}, {0.6f, 0.8f, 0, 0, -0.70710678f, 0.70710678f}), (*out)[0].tensor()));
  OpTest l1("LpNormalization", 22);
  l1.Input(Tensor::FromVector<double>({2, 2}, {1, 2, -3, 2})).Attr("axis", int64_t{0}).Attr("p", int64_t{1});
  auto o1 = l1.Run(RegisterNnKernels);
  ASSERT_TRUE(o1.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({2, 2}, {0.25, 0.5, -0.75, 0.5}), (*o1)[0].tensor()));
  // Float rows longer than a vector (the row kernels) against double (the general loop).
  std::vector<float> long_rows(3 * 37);
  for (size_t i = 0; i < long_rows.size(); ++i) long_rows[i] = std::cos(0.7f * static_cast<float>(i)) * (i % 3 == 0 ? 0 : 2);
  OpTest lf("LpNormalization", 22), ld("LpNormalization", 22);
  lf.Input(Tensor::FromVector<float>({3, 37}, long_rows));
  ld.Input(Tensor::FromVector<double>({3, 37}, std::vector<double>(long_rows.begin(), long_rows.end())));
  auto of = lf.Run(RegisterNnKernels), od = ld.Run(RegisterNnKernels);
  ASSERT_TRUE(of.ok() && od.ok());
  const Tensor& want = (*od)[0].tensor();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3, 37}, std::vector<float>(want.data<double>(), want.data<double>() + want.size())),
                          (*of)[0].tensor(), 1e-6, 1e-6));
  OpTest bad("LpNormalization", 22);
  bad.Input(Tensor::FromVector<float>({1}, {1})).Attr("p", int64_t{3});
  EXPECT_TRUE(Refused(bad.Run(RegisterNnKernels), StatusCode::kInvalidArgument, "attribute 'p' must be 1 or 2, got 3"));
}

TEST(MeanVarianceNormalization, DefaultAxes) {
  const std::vector<float> x = Ramp(2 * 3 * 2 * 2);
  OpTest t("MeanVarianceNormalization", 13);
  t.Input(Tensor::FromVector<float>({2, 3, 2, 2}, x));
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok());
  std::vector<float> ref(x.size());
  for (int ch = 0; ch < 3; ++ch) {
    double m = 0, v = 0;
    std::vector<int> idx;
    for (int b = 0; b < 2; ++b) for (int i = 0; i < 4; ++i) idx.push_back((b * 3 + ch) * 4 + i);
    for (int i : idx) m += x[i];
    m /= idx.size();
    for (int i : idx) v += (x[i] - m) * (x[i] - m);
    v /= idx.size();
    for (int i : idx) ref[i] = (x[i] - m) / (std::sqrt(v) + 1e-9);
  }
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 3, 2, 2}, ref), (*out)[0].tensor(), 1e-4, 1e-5));
}

// Float inputs whose kept axes are one block between reduced ones run on the row kernels; double
// keeps the general loop. Both agree for every arrangement of axes, and without normalizing the
// variance (version 1).
TEST(MeanVarianceNormalization, RowsOfGroupsMatchTheGeneralLoop) {
  const Shape shape = {2, 5, 6, 7};
  std::vector<float> x = Ramp(ElementCount(shape));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f + 0.1f * (i % 5);
  const std::vector<double> xd(x.begin(), x.end());
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{0, 2, 3}, {-1}, {2, 3}, {0, 1, 2, 3}, {1}, {0, 1}}) {
    for (int opset : {13, 1}) {
      auto run = [&](bool as_double) {
        OpTest t("MeanVarianceNormalization", opset);
        if (as_double) {
          t.Input(Tensor::FromVector<double>(shape, xd));
        } else {
          t.Input(Tensor::FromVector<float>(shape, x));
        }
        if (opset >= 9) {
          t.Attr("axes", axes);
        } else {
          t.Attr("normalize_variance", int64_t{0});  // across_channels 0: axes 0, 2, 3
        }
        return t.Run(RegisterNnKernels);
      };
      auto f = run(false), d = run(true);
      ASSERT_TRUE(f.ok() && d.ok()) << f.status().ToString() << " " << d.status().ToString();
      const Tensor& want = (*d)[0].tensor();
      std::vector<float> wf(want.data<double>(), want.data<double>() + want.size());
      EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(shape, wf), (*f)[0].tensor(), 1e-4, 1e-5))
          << "axes " << axes.size() << " opset " << opset;
      if (opset < 9) break;  // the axes list means nothing there
    }
  }
}

}  // namespace
}  // namespace onnxflow
