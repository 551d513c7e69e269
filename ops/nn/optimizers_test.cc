#include "ops/nn/optimizers.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/nn/register.h"

namespace onnxflow {
namespace {

TEST(Optimizers, AdagradOneStep) {
  OpTest t("Adagrad", 1, kTrainingDomain);
  t.Input(Tensor::Scalar<float>(0.1f)).Input(Tensor::Scalar<int64_t>(2))
      .Input(Tensor::FromVector<float>({2}, {1, 2}))      // X
      .Input(Tensor::FromVector<float>({2}, {0.5f, -1}))  // G
      .Input(Tensor::FromVector<float>({2}, {1, 0}))      // H
      .Attr("decay_factor", 0.5f).Attr("epsilon", 1e-6f).Attr("norm_coefficient", 0.1f).Outputs(2);
  auto out = t.Run(RegisterOptimizers);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const double rate = 0.1 / (1 + 2 * 0.5);
  const double g0 = 0.1 * 1 + 0.5, g1 = 0.1 * 2 - 1;
  const double h0 = 1 + g0 * g0, h1 = g1 * g1;
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2}, {float(1 - rate * g0 / (std::sqrt(h0) + 1e-6)),
                                                           float(2 - rate * g1 / (std::sqrt(h1) + 1e-6))}),
                          (*out)[0].tensor()));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2}, {float(h0), float(h1)}), (*out)[1].tensor()));
}

TEST(Optimizers, AdamTwoTensors) {
  OpTest t("Adam", 1, kTrainingDomain);
  t.Input(Tensor::Scalar<double>(0.1)).Input(Tensor::Scalar<int64_t>(1))
      .Input(Tensor::FromVector<double>({1}, {1})).Input(Tensor::FromVector<double>({1}, {2}))   // X1, X2
      .Input(Tensor::FromVector<double>({1}, {0.5})).Input(Tensor::FromVector<double>({1}, {1})) // G1, G2
      .Input(Tensor::FromVector<double>({1}, {0})).Input(Tensor::FromVector<double>({1}, {0}))   // V
      .Input(Tensor::FromVector<double>({1}, {0})).Input(Tensor::FromVector<double>({1}, {0}))   // H
      .Outputs(6);
  auto out = t.Run(RegisterOptimizers);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const double rate = 0.1 * std::sqrt(1 - 0.999) / (1 - 0.9);
  for (int i = 0; i < 2; ++i) {
    const double x = i == 0 ? 1 : 2, g = i == 0 ? 0.5 : 1;
    const double v = 0.1 * g, h = 0.001 * g * g;
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1}, {x - rate * v / std::sqrt(h)}), (*out)[i].tensor()));
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1}, {v}), (*out)[2 + i].tensor()));
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1}, {h}), (*out)[4 + i].tensor()));
  }
}

TEST(Optimizers, MomentumStandardAndNesterov) {
  for (const char* mode : {"standard", "nesterov"}) {
    OpTest t("Momentum", 1, kTrainingDomain);
    t.Input(Tensor::Scalar<float>(0.1f)).Input(Tensor::Scalar<int64_t>(0))
        .Input(Tensor::FromVector<float>({1}, {1})).Input(Tensor::FromVector<float>({1}, {2}))
        .Input(Tensor::FromVector<float>({1}, {3}))
        .Attr("alpha", 0.5f).Attr("beta", 0.25f).Attr("mode", std::string(mode)).Attr("norm_coefficient", 0.0f)
        .Outputs(2);
    auto out = t.Run(RegisterOptimizers);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const float v = 0.5f * 3 + 1 * 2;  // T = 0: beta is taken as 1
    const float x = std::string(mode) == "standard" ? 1 - 0.1f * v : 1 - 0.1f * (2 + 0.5f * v);
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1}, {x}), (*out)[0].tensor()));
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1}, {v}), (*out)[1].tensor()));
  }
  OpTest missing("Momentum", 1, kTrainingDomain);
  missing.Input(Tensor::Scalar<float>(0.1f)).Input(Tensor::Scalar<int64_t>(0))
      .Input(Tensor::FromVector<float>({1}, {1})).Input(Tensor::FromVector<float>({1}, {2}))
      .Input(Tensor::FromVector<float>({1}, {3}));
  EXPECT_TRUE(Refused(missing.Run(RegisterOptimizers), StatusCode::kInvalidArgument, "attribute 'alpha' is required"));
}

TEST(Optimizers, MismatchedShapes) {
  OpTest t("Adagrad", 1, kTrainingDomain);
  t.Input(Tensor::Scalar<float>(0.1f)).Input(Tensor::Scalar<int64_t>(0))
      .Input(Tensor::FromVector<float>({2}, {1, 2})).Input(Tensor::FromVector<float>({1}, {1}))
      .Input(Tensor::FromVector<float>({2}, {1, 0})).Outputs(2);
  EXPECT_TRUE(Refused(t.Run(RegisterOptimizers), StatusCode::kInvalidArgument, "input 3 must match X [2]"));
}

}  // namespace
}  // namespace onnxflow
