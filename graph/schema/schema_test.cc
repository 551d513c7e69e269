// The schema table and the node check, by themselves (the hostile classes are in
// tests/hostile/schema_cases.cc).
#include "graph/schema/schema.h"

#include <string>

#include <gtest/gtest.h>

#include "graph/schema/schema_table.h"

namespace onnxflow::graph::schema {
namespace {

TEST(SchemaTable, SortedAndComplete) {
  const auto& all = AllSchemas();
  ASSERT_GT(all.size(), 600u);
  for (size_t i = 1; i < all.size(); ++i) {
    const auto key = [](const OpSchema& s) { return std::make_tuple(std::string(s.domain), std::string(s.op), s.since_version); };
    EXPECT_LT(key(all[i - 1]), key(all[i])) << all[i].op;
  }
  EXPECT_NE(FindSchema("ai.onnx.ml", "TreeEnsembleClassifier", 3), nullptr);
  EXPECT_EQ(FindSchema("com.microsoft", "FusedMatMul", 1), nullptr);  // other domains pass unchecked
}

TEST(SchemaTable, VersionInForceAtTheOpset) {
  const OpSchema* split13 = FindSchema("", "Split", 17);
  ASSERT_NE(split13, nullptr);
  EXPECT_EQ(split13->since_version, 13);
  const OpSchema* split18 = FindSchema("", "Split", 28);
  ASSERT_NE(split18, nullptr);
  EXPECT_EQ(split18->since_version, 18);
  ASSERT_EQ(split18->attributes.size(), 2u);
  EXPECT_STREQ(split18->attributes[1].name, "num_outputs");
  EXPECT_EQ(split18->attributes[1].type, AttrType::kInt);
  EXPECT_EQ(split18->max_outputs, -1);
  EXPECT_EQ(FindSchema("", "Split", 0), nullptr);
  const OpSchema* loop = FindSchema("", "Loop", 21);
  ASSERT_NE(loop, nullptr);
  EXPECT_TRUE(loop->attributes[0].required);
  EXPECT_TRUE(loop->inputs[2].heterogeneous);
}

// A version the spec marks deprecated lists nothing: the node is checked against the version
// before it, as the runtimes that still run it read it, or not at all (GroupNormalization-18 was
// deprecated on introduction).
TEST(SchemaTable, DeprecatedVersionsFallBack) {
  const OpSchema* scatter = FindSchema("", "Scatter", 13);
  ASSERT_NE(scatter, nullptr);
  EXPECT_EQ(scatter->since_version, 9);
  EXPECT_EQ(scatter->min_inputs, 3);
  const OpSchema* upsample = FindSchema("", "Upsample", 10);
  ASSERT_NE(upsample, nullptr);
  EXPECT_EQ(upsample->since_version, 9);
  EXPECT_EQ(FindSchema("", "GroupNormalization", 18), nullptr);
  ASSERT_NE(FindSchema("", "GroupNormalization", 21), nullptr);
  EXPECT_EQ(FindSchema("ai.onnx.ml", "TreeEnsembleClassifier", 5)->since_version, 3);
}

// Map and sequence types keep the commas inside their parentheses.
TEST(SchemaTable, MapTypesAreWhole) {
  const OpSchema* zipmap = FindSchema("ai.onnx.ml", "ZipMap", 1);
  ASSERT_NE(zipmap, nullptr);
  ASSERT_EQ(zipmap->type_constraints.size(), 1u);
  ASSERT_EQ(zipmap->type_constraints[0].allowed.size(), 2u);
  EXPECT_STREQ(zipmap->type_constraints[0].allowed[0], "seq(map(string, float))");
}

onnx::NodeProto Node(const std::string& op, int inputs, int outputs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  for (int i = 0; i < inputs; ++i) n.add_input("i" + std::to_string(i));
  for (int i = 0; i < outputs; ++i) n.add_output("o" + std::to_string(i));
  return n;
}

TEST(CheckNode, AcceptsAValidNodeAndOldUntypedAttributes) {
  onnx::NodeProto n = Node("Gemm", 3, 1);
  auto* a = n.add_attribute();
  a->set_name("alpha");
  a->set_f(2.0f);  // IR version 1 and 2 leave the type unset
  EXPECT_TRUE(CheckNode(n, "", 13, "node 'g' (Gemm)").ok());
  a->set_type(onnx::AttributeProto::INT);
  Status s = CheckNode(n, "", 13, "node 'g' (Gemm)");
  EXPECT_EQ(s.message(), "node 'g' (Gemm): attribute 'alpha' must be FLOAT, not INT");
}

TEST(CheckNode, UnknownDomainsPassUnchecked) {
  onnx::NodeProto n = Node("Anything", 9, 9);
  n.add_attribute()->set_name("whatever");
  EXPECT_TRUE(CheckNode(n, "com.microsoft", 1, "node").ok());
}

}  // namespace
}  // namespace onnxflow::graph::schema
