// Dropout, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/nn/register.h"

namespace onnxflow {
namespace {

TEST(Dropout, InferenceIsIdentityWithTrueMask) {
  const Tensor x = Tensor::FromVector<float>({3}, {1, 2, 3});
  OpTest t("Dropout", 22);
  t.Input(x).Input(Tensor::Scalar<float>(0.7f)).Outputs(2);
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(x, (*out)[0].tensor()));
  EXPECT_TRUE((*out)[0].tensor().SharesStorageWith(x));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<bool>({3}, {true, true, true}), (*out)[1].tensor()));
  OpTest old("Dropout", 7);  // mask has x's type before 10
  old.Input(Tensor::FromVector<double>({2}, {1, 2})).Attr("ratio", 0.3f).Outputs(2);
  auto oo = old.Run(RegisterNnKernels);
  ASSERT_TRUE(oo.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<double>({2}, {1, 1}), (*oo)[1].tensor()));
}

TEST(Dropout, TrainingKeepsAndScales) {
  std::vector<float> xv(1000, 2.0f);
  OpTest t("Dropout", 22);
  t.Input(Tensor::FromVector<float>({1000}, xv)).Input(Tensor::Scalar<float>(0.25f)).Input(Tensor::Scalar<bool>(true));
  t.Attr("seed", int64_t{0}).Outputs(2);
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float* y = (*out)[0].tensor().data<float>();
  const bool* m = (*out)[1].tensor().data<bool>();
  int kept = 0;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FLOAT_EQ(y[i], m[i] ? 2.0f / 0.75f : 0.0f);
    kept += m[i];
  }
  EXPECT_GT(kept, 650);
  EXPECT_LT(kept, 850);
  // The same seed gives the same mask (numpy's RandomState(0): first uniform is 0.5488135).
  auto again = t.Run(RegisterNnKernels);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(TensorsEqual((*out)[1].tensor(), (*again)[1].tensor()));
  EXPECT_TRUE(m[0]);
  OpTest bad("Dropout", 22);
  bad.Input(Tensor::FromVector<float>({1}, {1})).Input(Tensor::Scalar<float>(1.0f)).Input(Tensor::Scalar<bool>(true));
  EXPECT_TRUE(Refused(bad.Run(RegisterNnKernels), StatusCode::kInvalidArgument, "ratio must be in [0, 1), got 1.000000"));
}

TEST(Losses, NllReductionsWeightsIgnoreIndex) {
  // N = 2, C = 3, d1 = 2 ([N, C, d1]).
  const std::vector<float> x = {-1, -2, -3, -4, -5, -6, -0.5f, -1.5f, -2.5f, -3.5f, -4.5f, -5.5f};
  const Tensor input = Tensor::FromVector<float>({2, 3, 2}, x);
  const Tensor target = Tensor::FromVector<int64_t>({2, 2}, {0, 2, 1, 1});
  const Tensor weight = Tensor::FromVector<float>({3}, {1, 2, 3});
  // Element losses: -x[n, t, d] * w[t]: (0,0): 1*1, (0,1): 6*3, (1,0): 2.5*2, (1,1): 3.5*2.
  auto run = [&](const char* reduction, bool with_weight, int64_t ignore = -100) {
    OpTest t("NegativeLogLikelihoodLoss", 22);
    t.Input(input).Input(target);
    if (with_weight) t.Input(weight);
    t.Attr("reduction", std::string(reduction));
    if (ignore != -100) t.Attr("ignore_index", ignore);
    return t.Run(RegisterNnKernels);
  };
  auto none = run("none", true);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 2}, {1, 18, 5, 7}), (*none)[0].tensor()));
  auto sum = run("sum", true);
  ASSERT_TRUE(sum.ok());
  EXPECT_TRUE(TensorsNear(Tensor::Scalar<float>(31), (*sum)[0].tensor()));
  auto mean = run("mean", true);
  ASSERT_TRUE(mean.ok());
  EXPECT_TRUE(TensorsNear(Tensor::Scalar<float>(31.0f / 8), (*mean)[0].tensor()));
  auto ignored = run("mean", false, 1);
  ASSERT_TRUE(ignored.ok());
  EXPECT_TRUE(TensorsNear(Tensor::Scalar<float>(7.0f / 2), (*ignored)[0].tensor()));
  OpTest bad("NegativeLogLikelihoodLoss", 22);
  bad.Input(input).Input(Tensor::FromVector<int64_t>({2, 2}, {0, 3, 1, 1}));
  EXPECT_EQ(bad.Run(RegisterNnKernels).status().code(), StatusCode::kOutOfRange);
}

TEST(Losses, SoftmaxCrossEntropyWithLogProb) {
  const Tensor scores = Tensor::FromVector<double>({2, 3}, {1, 2, 3, 0, 0, 0});
  OpTest t("SoftmaxCrossEntropyLoss", 13);
  t.Input(scores).Input(Tensor::FromVector<int32_t>({2}, {2, 0})).Outputs(2);
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double lse1 = std::log(3.0);
  EXPECT_TRUE(TensorsNear(Tensor::Scalar<double>(((lse0 - 3) + lse1) / 2), (*out)[0].tensor(), 1e-12, 1e-12));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({2, 3}, {1 - lse0, 2 - lse0, 3 - lse0, -lse1, -lse1, -lse1}),
                          (*out)[1].tensor(), 1e-12, 1e-12));
}

}  // namespace
}  // namespace onnxflow
