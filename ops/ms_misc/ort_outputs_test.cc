// The ms_misc ops against ONNX Runtime 1.30 on the seeded models of tools/gen_models/gen_ms_misc.py
// (testdata/<op>/: one model of several nodes of the op, each with its own inputs <node>_*;
// output_<i>.pb are ONNX Runtime's outputs). Each model runs through a Session, as a user's would,
// with and without the load's passes.
//
// Tolerances: integer outputs (DTW's path, BifurcationDetector's tokens and index) and the ops
// that only move or select values (UnfoldTensor, MaxpoolWithMask) must match exactly. The products
// (ConvTransposeWithDynamicPads, MatMulFpQ4, WordConvEmbedding's convolution) sum in another order
// than MLAS (blocked and vectorized differently), a few float ulps on sums of 5-70 terms of O(1)
// values: 1e-5 absolute and relative. WordConvEmbedding's tanh is MLAS's rational approximation
// there (a few 1e-7 off std::tanh), inside the same bound.
#include <gtest/gtest.h>

#include "include/onnxflow/session.h"
#include "ops/framework/case_folder.h"
#include "proto/onnx.pb.h"

namespace onnxflow {
namespace {

const char kData[] = "ops/ms_misc/testdata/";

CaseFolder LoadCase(const std::string& name) {
  CaseFolder c = LoadCaseFolder(kData + name);
  EXPECT_FALSE(c.expected.empty()) << name;
  return c;
}

// Runs the case's model (optimized or not) and compares every output: exactly when `tolerance`
// is 0, else within it (absolute and relative).
void ExpectOrtOutputs(const std::string& name, double tolerance) {
  const CaseFolder c = LoadCase(name);
  for (bool optimize : {false, true}) {
    SessionOptions options;
    options.optimize = optimize;
    auto out = RunCase(c, options);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(OutputsNear(c, *out, tolerance, tolerance)) << "optimize " << optimize;
  }
}

TEST(MsMiscOrt, UnfoldTensor) { ExpectOrtOutputs("unfold", 0); }
TEST(MsMiscOrt, DynamicTimeWarping) { ExpectOrtOutputs("dtw", 0); }
TEST(MsMiscOrt, BifurcationDetector) { ExpectOrtOutputs("bifurcation", 0); }
TEST(MsMiscOrt, MaxpoolWithMask) { ExpectOrtOutputs("maxpool_mask", 0); }
TEST(MsMiscOrt, WordConvEmbedding) { ExpectOrtOutputs("word_conv", 1e-5); }
TEST(MsMiscOrt, ConvTransposeWithDynamicPads) { ExpectOrtOutputs("conv_pads", 1e-5); }
TEST(MsMiscOrt, MatMulFpQ4) { ExpectOrtOutputs("fpq4", 1e-5); }

// A refusal at run names the node and the op (the executor's context) and the input (the kernel's).
TEST(MsMiscOrt, RunRefusalNamesNodeOpAndInput) {
  CaseFolder c = LoadCase("fpq4");
  for (auto& v : c.inputs) {
    if (v.name == "q_zp_shape") v.value = Tensor::FromVector<int64_t>({2}, {40, 6});
  }
  auto session = Session::LoadFromBytes(c.model.SerializeAsString());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = session->Run(c.inputs);
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find("q_zp"), std::string::npos) << message;
  EXPECT_NE(message.find("MatMulFpQ4"), std::string::npos) << message;
  EXPECT_NE(message.find("input 'B'"), std::string::npos) << message;
}

// A refusal at load (a hostile attribute) names the node and the op, and the attribute.
TEST(MsMiscOrt, LoadRefusalNamesNodeOpAndAttribute) {
  CaseFolder c = LoadCase("unfold");
  for (auto& node : *c.model.mutable_graph()->mutable_node()) {
    if (node.name() != "u_f32") continue;
    for (auto& a : *node.mutable_attribute()) {
      if (a.name() == "step") a.set_i(0);
    }
  }
  auto session = Session::LoadFromBytes(c.model.SerializeAsString());
  ASSERT_FALSE(session.ok());
  const std::string message = session.status().ToString();
  EXPECT_NE(message.find("u_f32"), std::string::npos) << message;
  EXPECT_NE(message.find("UnfoldTensor"), std::string::npos) << message;
  EXPECT_NE(message.find("'step'"), std::string::npos) << message;
}

// SparseToDenseMatMul is refused at load by name, with the reason (no sparse values here).
TEST(MsMiscOrt, SparseToDenseMatMulIsRefusedByName) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto* g = model.mutable_graph();
  g->set_name("sparse");
  for (const char* name : {"a", "b"}) {
    auto* in = g->add_input();
    in->set_name(name);
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  g->add_output()->set_name("y");
  auto* node = g->add_node();
  node->set_name("sp");
  node->set_op_type("SparseToDenseMatMul");
  node->set_domain("com.microsoft");
  node->add_input("a");
  node->add_input("b");
  node->add_output("y");
  auto session = Session::LoadFromBytes(model.SerializeAsString());
  ASSERT_FALSE(session.ok());
  const std::string message = session.status().ToString();
  EXPECT_NE(message.find("sp"), std::string::npos) << message;
  EXPECT_NE(message.find("no sparse tensor values"), std::string::npos) << message;
}

}  // namespace
}  // namespace onnxflow
