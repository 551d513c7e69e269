// The internal ops' typed specs round-trip through a NodeProto (WriteTo, then Parse as the kernel
// does), every internal op listed in internal_ops.h has a kernel, and the activation vocabulary
// holds the ONNX defaults the passes and kernels read.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/fusion_util.h"
#include "ops/activation/elementwise_chain.h"
#include "ops/blocked/blocked_conv.h"
#include "ops/blocked/reorder.h"
#include "ops/contrib/fused_attention.h"
#include "ops/framework/activation.h"
#include "ops/framework/internal_ops.h"
#include "ops/math/fused_activation.h"
#include "ops/register_all.h"

namespace onnxflow {
namespace {

KernelInfo InfoOf(const onnx::NodeProto& node) { return KernelInfo(node, internal_ops::kVersion, {}, {}, {}); }

TEST(InternalOpsTest, EveryListedOpHasAKernel) {
  for (const char* op : internal_ops::kAll) {
    EXPECT_NE(GlobalKernelRegistry().Find(kOnnxflowDomain, op, internal_ops::kVersion), nullptr) << op;
  }
}

TEST(InternalOpsTest, FusedActivationRoundTrips) {
  onnx::NodeProto node;
  FusedActivationSpec spec{{Activation::kHardSigmoid, 0.25f, 0.75f}};
  spec.WriteTo(node);
  ASSERT_EQ(node.attribute_size(), 3);
  auto parsed = FusedActivationSpec::Parse(InfoOf(node));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->activation.kind, Activation::kHardSigmoid);
  EXPECT_EQ(parsed->activation.alpha, 0.25f);
  EXPECT_EQ(parsed->activation.beta, 0.75f);

  // Rewritten as Relu (which reads no alpha or beta), then as none, which leaves no activation.
  FusedActivationSpec{{Activation::kRelu}}.WriteTo(node);
  EXPECT_EQ(FusedActivationSpec::Parse(InfoOf(node))->activation.kind, Activation::kRelu);
  FusedActivationSpec{}.WriteTo(node);
  EXPECT_EQ(node.attribute_size(), 0);  // none removes the activation and its parameters
  EXPECT_EQ(FusedActivationSpec::Parse(InfoOf(node))->activation.kind, Activation::kNone);
}

TEST(InternalOpsTest, FusedActivationDefaultsAreOnnxs) {
  onnx::NodeProto node;
  SetAttribute(node, "activation", std::string("LeakyRelu"));
  EXPECT_EQ(FusedActivationSpec::Parse(InfoOf(node))->activation.alpha, 0.01f);
  SetAttribute(node, "activation", std::string("HardSigmoid"));
  auto hard = FusedActivationSpec::Parse(InfoOf(node));
  EXPECT_EQ(hard->activation.alpha, 0.2f);
  EXPECT_EQ(hard->activation.beta, 0.5f);
  SetAttribute(node, "activation", std::string("Clip"));
  auto clip = FusedActivationSpec::Parse(InfoOf(node));
  EXPECT_EQ(clip->activation.alpha, -INFINITY);
  EXPECT_EQ(clip->activation.beta, INFINITY);
  SetAttribute(node, "activation", std::string("Mish"));
  EXPECT_EQ(FusedActivationSpec::Parse(InfoOf(node)).status().message(), "unknown fused activation 'Mish'");
}

TEST(InternalOpsTest, ChainRoundTrips) {
  ChainSpec spec;
  ChainStep mul;
  mul.kind = ChainStep::kBinary;
  mul.code = static_cast<int64_t>(FloatBinaryOp::kMul);
  mul.operand = ChainOperand::kConstantLeft;
  mul.constant = 0.5f;
  spec.Append("Mul", mul, 1);
  ChainStep leaky;
  leaky.kind = ChainStep::kActivation;
  leaky.code = static_cast<int64_t>(ActOp::kLeakyRelu);
  leaky.params.alpha = 0.125f;
  spec.Append("LeakyRelu", leaky, 0);
  onnx::NodeProto node;
  spec.WriteTo(node);
  spec.WriteTo(node);  // writing twice replaces, it does not append
  auto parsed = ChainSpec::Parse(InfoOf(node));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->ops, (std::vector<std::string>{"Mul", "LeakyRelu"}));
  EXPECT_EQ(parsed->rank, 1);
  ASSERT_EQ(parsed->steps.size(), 2u);
  EXPECT_EQ(parsed->steps[0].operand, ChainOperand::kConstantLeft);
  EXPECT_EQ(parsed->steps[0].constant, 0.5f);
  EXPECT_EQ(parsed->steps[1].code, static_cast<int64_t>(ActOp::kLeakyRelu));
  EXPECT_EQ(parsed->steps[1].params.alpha, 0.125f);

  SetAttribute(node, "alphas", std::vector<float>{1.0f});
  EXPECT_EQ(ChainSpec::Parse(InfoOf(node)).status().message(),
            "ElementwiseChain: the step attributes must all have one entry per step");
}

TEST(InternalOpsTest, ChainStepsTakeTheVocabularysDefaults) {
  ChainAttributes none{[](const char*, float f) { return f; }, [](const char*, const std::string& s) { return s; }};
  ChainStep step;
  ASSERT_TRUE(ChainStepFor("LeakyRelu", 13, none, &step));
  EXPECT_EQ(step.params.alpha, 0.01f);
  ASSERT_TRUE(ChainStepFor("HardSigmoid", 13, none, &step));
  EXPECT_EQ(step.params.alpha, 0.2f);
  EXPECT_EQ(step.params.beta, 0.5f);
  EXPECT_FALSE(ChainStepFor("HardSwish", 13, none, &step));  // HardSwish is opset 14 on
  EXPECT_TRUE(ChainStepFor("HardSwish", 14, none, &step));
}

TEST(InternalOpsTest, BlockedSpecsRoundTrip) {
  onnx::NodeProto conv;
  BlockedConvSpec{6, 2}.WriteTo(conv);
  const BlockedConvSpec joined = BlockedConvSpec::Parse(InfoOf(conv));
  EXPECT_TRUE(joined.joined());
  EXPECT_EQ(joined.out_blocks, 6);
  EXPECT_EQ(joined.out_block_offset, 2);
  BlockedConvSpec{}.WriteTo(conv);
  EXPECT_EQ(conv.attribute_size(), 0);
  EXPECT_FALSE(BlockedConvSpec::Parse(InfoOf(conv)).joined());

  onnx::NodeProto from;
  FromBlockedSpec{24}.WriteTo(from);
  EXPECT_EQ(FromBlockedSpec::Parse(InfoOf(from)).channels, 24);
  FromBlockedSpec{}.WriteTo(from);
  EXPECT_EQ(from.attribute_size(), 0);
}

TEST(InternalOpsTest, FusedAttentionRoundTrips) {
  onnx::NodeProto node;
  FusedAttentionSpec{0.125f, false}.WriteTo(node);
  auto parsed = FusedAttentionSpec::Parse(InfoOf(node));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->scale, 0.125f);
  EXPECT_FALSE(parsed->output_bsnd);
  EXPECT_FALSE(parsed->kv_bnsd);
  FusedAttentionSpec{2.0f, true, true, true, 4}.WriteTo(node);  // rewritten in place, not added
  EXPECT_EQ(node.attribute_size(), 5);
  parsed = FusedAttentionSpec::Parse(InfoOf(node));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_TRUE(parsed->output_bsnd);
  EXPECT_TRUE(parsed->kv_bnsd);
  EXPECT_TRUE(parsed->q_bnsd);
  EXPECT_EQ(parsed->kv_repeat, 4);
  SetAttribute(node, "output_layout", std::string("NSBD"));
  EXPECT_EQ(FusedAttentionSpec::Parse(InfoOf(node)).status().message(),
            "FusedAttention: output_layout must be BSND or BNSD, got 'NSBD'");
  // A hostile kv_repeat would overflow the head count it multiplies: refused at load.
  for (int64_t repeat : {int64_t{0}, int64_t{65537}, int64_t{1} << 62}) {
    FusedAttentionSpec{1.0f, false, true, true, repeat}.WriteTo(node);
    EXPECT_EQ(FusedAttentionSpec::Parse(InfoOf(node)).status().message(),
              "FusedAttention: kv_repeat must be in [1, 65536], got " + std::to_string(repeat));
  }
  // A packed q, k, v (graph/qkv_merge.cc): its head count and sizes round-trip, and go when
  // a spec without them is written over it.
  FusedAttentionSpec packed;
  packed.packed_heads = 12;
  packed.packed_head_size = 64;
  packed.packed_v_head_size = 32;
  packed.WriteTo(node);
  parsed = FusedAttentionSpec::Parse(InfoOf(node));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->packed_heads, 12);
  EXPECT_EQ(parsed->packed_head_size, 64);
  EXPECT_EQ(parsed->packed_v_head_size, 32);
  packed.packed_v_head_size = 0;  // and a packed spec with a size out of range is refused
  packed.WriteTo(node);
  EXPECT_EQ(FusedAttentionSpec::Parse(InfoOf(node)).status().message(),
            "FusedAttention: a packed q, k, v needs packed_heads, packed_head_size and packed_v_head_size in "
            "[1, 65536], BSND layouts and kv_repeat 1");
  packed.packed_v_head_size = 32;
  packed.packed_batch = packed.packed_seq = -1;  // two inferred dimensions: Reshape refuses them too
  packed.WriteTo(node);
  EXPECT_EQ(FusedAttentionSpec::Parse(InfoOf(node)).status().message(),
            "FusedAttention: packed_batch and packed_seq are Reshape entries (0, -1 or a count; one -1 at most), "
            "got -1 and -1");
  FusedAttentionSpec{}.WriteTo(node);
  EXPECT_EQ(node.attribute_size(), 5);
}

TEST(ActivationVocabularyTest, OnnxDefaultsWrittenOnce) {
  EXPECT_EQ(DefaultActParams(ActOp::kLeakyRelu).alpha, 0.01f);
  EXPECT_EQ(DefaultActParams(ActOp::kHardSigmoid).alpha, 0.2f);
  EXPECT_EQ(DefaultActParams(ActOp::kHardSigmoid).beta, 0.5f);
  EXPECT_EQ(DefaultActParams(ActOp::kSelu).gamma, 1.05070102214813232421875f);
  EXPECT_EQ(DefaultActParams(ActOp::kShrink).alpha, 0.5f);
  EXPECT_EQ(FindActivationOp(ActOp::kGeluTanh)->op_type, std::string("Gelu"));
  EXPECT_EQ(FindActivationOp("Celu")->since, 12);
  EXPECT_EQ(FindActivationOp("Erf"), nullptr);
}

}  // namespace
}  // namespace onnxflow
