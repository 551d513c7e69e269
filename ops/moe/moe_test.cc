// MoE and QMoE against ONNX Runtime 1.30 on the seeded tiny models of tools/gen_models/gen_moe.py
// (testdata/<case>: one node; output_0.pb is ONNX Runtime's output, or, for the cases with a HAND
// file, which ONNX Runtime's CPU provider computes wrongly, the generator's numpy reference), on a
// hand-computed layer, and the refusals of malformed nodes.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/session.h"
#include "ops/framework/case_folder.h"
#include "ops/framework/testing.h"
#include "ops/moe/register.h"

namespace onnxflow {
namespace {

const char kData[] = "ops/moe/testdata/";

// Runs a case at `threads` cores and compares with its expected output. Tolerances: float
// products of 16-32 terms summed in another order than ONNX Runtime's (MLAS), then weighted and
// summed over k experts: relative 1e-4 of outputs of magnitude 1-50; float16 outputs: 2 ulp.
void CheckCase(const std::string& name, int threads) {
  SCOPED_TRACE(name + " at " + std::to_string(threads) + " threads");
  const CaseFolder c = LoadCaseFolder(kData + name);
  ASSERT_FALSE(c.inputs.empty());
  ASSERT_FALSE(c.expected.empty());
  SessionOptions options;
  options.threads = threads;
  auto out = RunCase(c, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const bool half = c.expected[0].value.tensor().dtype() == DataType::kFloat16;
  EXPECT_TRUE(OutputsNear(c, *out, half ? 2e-3 : 1e-4, half ? 2e-3 : 1e-4));
}

class OrtCase : public ::testing::TestWithParam<const char*> {};

TEST_P(OrtCase, MatchesOneThread) { CheckCase(GetParam(), 1); }
TEST_P(OrtCase, MatchesTwoThreads) { CheckCase(GetParam(), 2); }

INSTANTIATE_TEST_SUITE_P(
    MoE, OrtCase,
    ::testing::Values("moe_relu", "moe_gelu_normalize_bias", "moe_silu_k1_3d", "moe_identity_k4_bias", "moe_swiglu",
                      "moe_swiglu_defaults", "moe_sparse_mixer", "moe_ties", "moe_many_rows",
                      "moe_float16" /* hand: numpy reference */));
INSTANTIATE_TEST_SUITE_P(
    QMoE, OrtCase,
    ::testing::Values("qmoe8_row", "qmoe8_row_zp", "qmoe8_block16", "qmoe8_block16_zp_bias", "qmoe4_row",
                      "qmoe4_row_zp_3d", "qmoe4_block16", "qmoe4_block16_zp", "qmoe4_swiglu",
                      "qmoe8_router_weights_normalize", "qmoe4_one_token", "qmoe4_many_rows", "qmoe8_four_rows",
                      "qmoe8_float16", "qmoe4_block16_zp_float16"));

// A layer small enough to compute by hand: 2 experts, hidden 2, inter 1, identity, k = 1.
// Expert 0: fc1 [1, 1], fc2 [[1], [2]]; expert 1: fc1 [1, -1], fc2 [[3], [0]]. Token (1, 2) with
// logits (0, 1) goes to expert 1 with weight softmax = e / (1 + e): h = 1 - 2 = -1, y = (-3, 0) * w.
OpTest HandMoE(int64_t k = 1, const std::string& activation = "identity", bool bias = false) {
  OpTest t("MoE", 1, "com.microsoft");
  t.Input(Tensor::FromVector<float>({1, 2}, {1, 2}))
      .Input(Tensor::FromVector<float>({1, 2}, {0, 1}))
      .Input(Tensor::FromVector<float>({2, 1, 2}, {1, 1, 1, -1}));
  if (bias) {
    t.Input(Tensor::FromVector<float>({2, 2}, {1, 1, 1, 1}));  // fc1's bias must be [2, 1]
  } else {
    t.AbsentInput();
  }
  t.Input(Tensor::FromVector<float>({2, 2, 1}, {1, 2, 3, 0}))
      .ConstantInput(2)
      .ConstantInput(4)
      .Attr("k", k)
      .Attr("activation_type", activation);
  return t;
}

TEST(MoE, HandComputed) {
  OpTest t = HandMoE();
  auto out = t.Run(RegisterMoeKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float w = std::exp(1.f) / (1.f + std::exp(1.f));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 2}, {-3 * w, 0}), out->at(0).tensor(), 1e-6, 1e-6));
  // normalize_routing_weights: the one route's weight becomes 1.
  OpTest n = HandMoE();
  n.Attr("normalize_routing_weights", int64_t{1});
  out = n.Run(RegisterMoeKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 2}, {-3, 0}), out->at(0).tensor(), 1e-6, 1e-6));
}

TEST(MoE, WeightsReadAtRunWhenNotConstant) {
  OpTest t("MoE", 1, "com.microsoft");
  t.Input(Tensor::FromVector<float>({1, 2}, {1, 2}))
      .Input(Tensor::FromVector<float>({1, 2}, {0, 1}))
      .Input(Tensor::FromVector<float>({2, 1, 2}, {1, 1, 1, -1}))
      .AbsentInput()
      .Input(Tensor::FromVector<float>({2, 2, 1}, {1, 2, 3, 0}))
      .Attr("k", int64_t{2})
      .Attr("activation_type", std::string("relu"));
  auto out = t.Run(RegisterMoeKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // Expert 0: h = relu(3) = 3, y = (3, 6); expert 1: h = relu(-1) = 0.
  const float w0 = 1.f / (1.f + std::exp(1.f));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 2}, {3 * w0, 6 * w0}), out->at(0).tensor(), 1e-6, 1e-6));
}

// A hand-checked QMoE: 1 expert, hidden 16, inter 16, 8 bits, per-row scale 0.5, zero point 128
// (default), codes 130 everywhere in fc1 (weight 1) and 126 in fc2 (weight -1), identity: the token
// of ones gives h = 16 per row, y = -256 per column.
TEST(QMoE, HandComputed) {
  OpTest t("QMoE", 1, "com.microsoft");
  t.Input(Tensor::FromVector<float>({1, 16}, std::vector<float>(16, 1.f)))
      .Input(Tensor::FromVector<float>({1, 1}, {0.f}))
      .Input(Tensor::FromVector<uint8_t>({1, 16, 16}, std::vector<uint8_t>(256, 130)))
      .Input(Tensor::FromVector<float>({1, 16}, std::vector<float>(16, 0.5f)))
      .AbsentInput()
      .Input(Tensor::FromVector<uint8_t>({1, 16, 16}, std::vector<uint8_t>(256, 126)))
      .Input(Tensor::FromVector<float>({1, 16}, std::vector<float>(16, 0.5f)))
      .Attr("k", int64_t{1})
      .Attr("expert_weight_bits", int64_t{8})
      .Attr("activation_type", std::string("identity"));
  auto out = t.Run(RegisterMoeKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 16}, std::vector<float>(16, -256.f)), out->at(0).tensor()));
}

// --- Refusals ---

TEST(MoERefusals, Fc3) {
  OpTest t = HandMoE();
  t.AbsentInput().Input(Tensor::FromVector<float>({2, 1, 2}, {1, 1, 1, 1}));
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kUnimplemented, "fc3"));
}

TEST(MoERefusals, SwigluNotInterleaved) {
  OpTest t = HandMoE(1, "swiglu");
  t.Attr("swiglu_fusion", int64_t{2});
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kUnimplemented, "swiglu_fusion = 2"));
}

TEST(MoERefusals, UnknownActivation) {
  OpTest t = HandMoE(1, "tanh");
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "activation_type 'tanh'"));
}

TEST(MoERefusals, SparseMixerNeedsKTwo) {
  OpTest t = HandMoE();
  t.Attr("use_sparse_mixer", int64_t{1});
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "use_sparse_mixer"));
}

TEST(MoERefusals, KAboveExperts) {
  OpTest t = HandMoE(3);
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "attribute k = 3"));
}

TEST(MoERefusals, RouterShape) {
  OpTest t("MoE", 1, "com.microsoft");
  t.Input(Tensor::FromVector<float>({1, 2}, {1, 2}))
      .Input(Tensor::FromVector<float>({1, 3}, {0, 1, 2}))
      .Input(Tensor::FromVector<float>({2, 1, 2}, {1, 1, 1, -1}))
      .AbsentInput()
      .Input(Tensor::FromVector<float>({2, 2, 1}, {1, 2, 3, 0}))
      .ConstantInput(2)
      .ConstantInput(4)
      .Attr("k", int64_t{1});
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "input 'router_probs'"));
}

TEST(MoERefusals, InputHiddenAndType) {
  OpTest t("MoE", 1, "com.microsoft");
  t.Input(Tensor::FromVector<float>({1, 3}, {1, 2, 3}))
      .Input(Tensor::FromVector<float>({1, 2}, {0, 1}))
      .Input(Tensor::FromVector<float>({2, 1, 2}, {1, 1, 1, -1}))
      .AbsentInput()
      .Input(Tensor::FromVector<float>({2, 2, 1}, {1, 2, 3, 0}))
      .ConstantInput(2)
      .ConstantInput(4)
      .Attr("k", int64_t{1});
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "input 'input'"));
  OpTest i("MoE", 1, "com.microsoft");
  i.Input(Tensor::FromVector<int32_t>({1, 2}, {1, 2}))
      .Input(Tensor::FromVector<int32_t>({1, 2}, {0, 1}))
      .Input(Tensor::FromVector<int32_t>({2, 1, 2}, {1, 1, 1, -1}))
      .AbsentInput()
      .Input(Tensor::FromVector<int32_t>({2, 2, 1}, {1, 2, 3, 0}))
      .Attr("k", int64_t{1});
  EXPECT_FALSE(i.Run(RegisterMoeKernels).ok());
}

TEST(MoERefusals, WeightShapes) {
  OpTest t("MoE", 1, "com.microsoft");
  t.Input(Tensor::FromVector<float>({1, 2}, {1, 2}))
      .Input(Tensor::FromVector<float>({1, 2}, {0, 1}))
      .Input(Tensor::FromVector<float>({2, 3, 2}, std::vector<float>(12, 1.f)))
      .AbsentInput()
      .Input(Tensor::FromVector<float>({2, 2, 1}, {1, 2, 3, 0}))
      .ConstantInput(2)
      .ConstantInput(4)
      .Attr("k", int64_t{1});
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "input 'fc1_experts_weights'"));
  // The legacy layout: fc1 [E, hidden, inter] = [2, 2, 1] with fc2 [2, 2, 1].
  OpTest l("MoE", 1, "com.microsoft");
  l.Input(Tensor::FromVector<float>({1, 2}, {1, 2}))
      .Input(Tensor::FromVector<float>({1, 2}, {0, 1}))
      .Input(Tensor::FromVector<float>({2, 2, 3}, std::vector<float>(12, 1.f)))
      .AbsentInput()
      .Input(Tensor::FromVector<float>({2, 2, 3}, std::vector<float>(12, 1.f)))
      .ConstantInput(2)
      .ConstantInput(4)
      .Attr("k", int64_t{1});
  EXPECT_TRUE(Refused(l.Run(RegisterMoeKernels), StatusCode::kUnimplemented, "legacy"));
  OpTest b = HandMoE(1, "identity", /*bias=*/true);
  b.ConstantInput(3);
  EXPECT_TRUE(Refused(b.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "input 'fc1_experts_bias'"));
}

// QMoE with one expert, hidden 32, inter 32, 4 bits, row-wise.
OpTest SmallQMoE(int64_t bits = 4, int64_t bits_attr = 0) {
  OpTest t("QMoE", 1, "com.microsoft");
  const int64_t bytes = 32 * bits / 8;
  t.Input(Tensor::FromVector<float>({1, 32}, std::vector<float>(32, 1.f)))
      .Input(Tensor::FromVector<float>({1, 1}, {0.f}))
      .Input(Tensor::FromVector<uint8_t>({1, 32, bytes}, std::vector<uint8_t>(32 * bytes, 0x99)))
      .Input(Tensor::FromVector<float>({1, 32}, std::vector<float>(32, 0.5f)))
      .AbsentInput()
      .Input(Tensor::FromVector<uint8_t>({1, 32, bytes}, std::vector<uint8_t>(32 * bytes, 0x77)))
      .Input(Tensor::FromVector<float>({1, 32}, std::vector<float>(32, 0.5f)))
      .ConstantInput(2)
      .ConstantInput(3)
      .ConstantInput(5)
      .ConstantInput(6)
      .Attr("k", int64_t{1})
      .Attr("expert_weight_bits", bits_attr > 0 ? bits_attr : bits)
      .Attr("activation_type", std::string("identity"));
  return t;
}

TEST(QMoE, SmallFourBitHandComputed) {
  // fc1 codes 9 - 8 = 1, * 0.5: h = 16 per row; fc2 codes 7 - 8 = -1, * 0.5: y = -0.5 * 16 * 32.
  auto out = SmallQMoE().Run(RegisterMoeKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 32}, std::vector<float>(32, -256.f)), out->at(0).tensor()));
}

TEST(QMoERefusals, Bits) {
  OpTest t = SmallQMoE(4, 2);
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kUnimplemented, "expert_weight_bits = 2"));
}

TEST(QMoERefusals, BlockSize) {
  for (int64_t bs : {8, 48}) {
    OpTest t = SmallQMoE();
    t.Attr("block_size", bs);
    EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "block_size"));
  }
}

TEST(QMoERefusals, Fc3) {
  OpTest t = SmallQMoE();
  t.AbsentInput().Input(Tensor::FromVector<uint8_t>({1, 32, 16}, std::vector<uint8_t>(512, 0x88)));
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kUnimplemented, "fc3"));
}

TEST(QMoERefusals, ScalesShape) {
  OpTest t = SmallQMoE();
  t.Attr("block_size", int64_t{16});  // needs scales [1, 32, 2]
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "input 'fc1_scales'"));
}

TEST(QMoERefusals, LegacyWeightShape) {
  // 8-bit-sized weights [1, 32, 32] read as 4 bits: fc2 gives inter 64, and fc1 [E, hidden, inter / 2]
  // is the legacy layout.
  OpTest t = SmallQMoE(8, 4);
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kUnimplemented, "legacy weight layout"));
}

TEST(QMoERefusals, ZeroPointsShape) {
  OpTest t = SmallQMoE();
  t.AbsentInput().AbsentInput().AbsentInput().AbsentInput();
  t.Input(Tensor::FromVector<uint8_t>({1, 32}, std::vector<uint8_t>(32, 0x88)));  // 4 bits: [1, 16]
  t.ConstantInput(11);
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "input 'fc1_zero_points'"));
}

TEST(QMoERefusals, RouterWeightsShape) {
  OpTest t = SmallQMoE();
  for (int i = 7; i < 14; ++i) t.AbsentInput();
  t.Input(Tensor::FromVector<float>({1, 2}, {1, 1}));
  EXPECT_TRUE(Refused(t.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "input 'router_weights'"));
}

TEST(QMoERefusals, InputTypeDiffersFromScales) {
  OpTest h("QMoE", 1, "com.microsoft");
  h.Input(Tensor::FromVector<Float16>({1, 32}, std::vector<Float16>(32, Float16{0x3c00})))
      .Input(Tensor::FromVector<Float16>({1, 1}, {Float16{0}}))
      .Input(Tensor::FromVector<uint8_t>({1, 32, 16}, std::vector<uint8_t>(512, 0x99)))
      .Input(Tensor::FromVector<float>({1, 32}, std::vector<float>(32, 0.5f)))
      .AbsentInput()
      .Input(Tensor::FromVector<uint8_t>({1, 32, 16}, std::vector<uint8_t>(512, 0x77)))
      .Input(Tensor::FromVector<float>({1, 32}, std::vector<float>(32, 0.5f)))
      .Attr("k", int64_t{1})
      .Attr("expert_weight_bits", int64_t{4});
  EXPECT_TRUE(Refused(h.Run(RegisterMoeKernels), StatusCode::kInvalidArgument, "input 'input'"));
}

}  // namespace
}  // namespace onnxflow
