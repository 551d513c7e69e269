#include <gtest/gtest.h>

#include "ops/framework/registry.h"
#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/register_all.h"

namespace onnxflow {
namespace {

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

Result<std::vector<Value>> RunFusedConv(const std::string& act, const std::vector<float>& params, const Tensor* z) {
  OpTest test("FusedConv", 1, kMsDomain);
  test.Input(F({1, 1, 1, 3}, {-1, 2, 3})).Input(F({1, 1, 1, 1}, {2})).Input(F({1}, {0.5f}));
  if (z != nullptr) test.Input(*z);
  test.Attr("kernel_shape", std::vector<int64_t>{1, 1}).Attr("activation", act);
  if (!params.empty()) test.Attr("activation_params", params);
  return test.Run(RegisterAllKernels);
}

TEST(FusedConv, ReluAfterBias) {
  auto out = RunFusedConv("Relu", {}, nullptr);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 1, 1, 3}, {0, 4.5f, 6.5f}), (*out)[0].tensor()));
}

TEST(FusedConv, LeakyReluTakesAlphaFromActivationParams) {
  auto out = RunFusedConv("LeakyRelu", {0.1f}, nullptr);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 1, 1, 3}, {-0.15f, 4.5f, 6.5f}), (*out)[0].tensor()));
}

TEST(FusedConv, ClipTakesMinAndMax) {
  auto out = RunFusedConv("Clip", {0.0f, 5.0f}, nullptr);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 1, 1, 3}, {0, 4.5f, 5.0f}), (*out)[0].tensor()));
}

// An activation no epilogue computes is refused when the kernel is made, naming it (the load's
// AdoptSavedFusedConv leaves such a node to this kernel).
TEST(FusedConv, AnUnknownActivationIsRefusedByName) {
  auto out = RunFusedConv("Softplus", {}, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("unknown fused activation 'Softplus'"), std::string::npos)
      << out.status().message();
}

TEST(FusedConv, SumInputAddsBeforeTheActivation) {
  const Tensor z = F({1, 1, 1, 3}, {1, 1, -10});
  auto out = RunFusedConv("Relu", {}, &z);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 1, 1, 3}, {0, 5.5f, 0}), (*out)[0].tensor()));
}

TEST(FusedGemm, LeakyReluEpilogue) {
  OpTest test("FusedGemm", 1, kMsDomain);
  test.Input(F({1, 2}, {1, -2})).Input(F({2, 2}, {1, 1, 1, -1})).Input(F({2}, {0, 0}));
  test.Attr("activation", std::string("LeakyRelu")).Attr("activation_alpha", 0.5f).Attr("transB", int64_t{1});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // rows of B^T: (1, 1) -> -1 -> -0.5; (1, -1) -> 3
  EXPECT_TRUE(TensorsNear(F({1, 2}, {-0.5f, 3.0f}), (*out)[0].tensor()));
}

TEST(FusedMatMul, TransposedAScaledByAlpha) {
  OpTest test("FusedMatMul", 1, kMsDomain);
  test.Input(F({2, 2}, {1, 2, 3, 4})).Input(F({2, 2}, {1, 0, 0, 1}));
  test.Attr("transA", int64_t{1}).Attr("alpha", 2.0f);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2, 2}, {2, 6, 4, 8}), (*out)[0].tensor()));
}

TEST(FusedMatMul, ConstantTransposedBIsPrepacked) {
  OpTest test("FusedMatMul", 1, kMsDomain);
  test.Input(F({2, 1, 3}, {1, 2, 3, 4, 5, 6})).Input(F({2, 3}, {1, 0, 0, 1, 1, 1})).ConstantInput(1);
  test.Attr("transB", int64_t{1});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2, 1, 2}, {1, 6, 4, 15}), (*out)[0].tensor()));
}

TEST(FusedMatMul, BatchedTransposeB) {
  OpTest test("FusedMatMul", 1, kMsDomain);
  test.Input(F({2, 1, 2}, {1, 2, 3, 4})).Input(F({2, 1, 2}, {1, 1, 2, 0}));
  test.Attr("transB", int64_t{1});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2, 1, 1}, {3, 6}), (*out)[0].tensor()));
}

TEST(FusedMatMul, TransBatchARotatesTheBatchDims) {
  // A (2, 1, 2) read as (1, 2, 2): rows (1, 2) and (3, 4).
  OpTest test("TransposeMatMul", 1, kMsDomain);
  test.Input(F({2, 1, 2}, {1, 2, 3, 4})).Input(F({2, 1}, {1, 1}));
  test.Attr("transBatchA", int64_t{1});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 2, 1}, {3, 7}), (*out)[0].tensor()));
}

// transA / transB on a vector change nothing (ONNX Runtime ignores them there too).
TEST(FusedMatMul, TransposeFlagsOnAVectorAreIgnored) {
  OpTest test("FusedMatMul", 1, kMsDomain);
  test.Input(F({3}, {1, 2, 3})).Input(F({3}, {4, 5, 6})).Attr("transA", int64_t{1}).Attr("transB", int64_t{1});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({}, {32}), (*out)[0].tensor()));
}

TEST(FusedMatMul, RefusesMismatchedInnerDims) {
  OpTest test("FusedMatMul", 1, kMsDomain);
  test.Input(F({2, 3}, {1, 2, 3, 4, 5, 6})).Input(F({2, 2}, {1, 0, 0, 1}));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
}

TEST(Nchwc, RefusedWithAdviceToSaveAtExtended) {
  OpTest test("Conv", 1, "com.microsoft.nchwc");
  test.Input(F({1, 16, 1, 1}, std::vector<float>(16, 1.0f)));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(out.status().message().find("save the model at the 'extended' level instead"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace onnxflow
