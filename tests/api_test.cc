// The embedding API beyond Run(inputs): model metadata, chosen outputs, value lookup, and the
// Tensor constructors that refuse what they cannot represent (issue 25).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/describe.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

// x -> Relu -> a (output) ; x -> Neg -> n -> Abs -> b (output) ; x -> Exp -> c (output)
std::string ThreeOutputModel() {
  tools::ModelBuilder m(17);
  m.proto().set_producer_name("api_test");
  m.proto().set_producer_version("2.5");
  m.proto().set_model_version(7);
  m.proto().set_doc_string("three heads");
  m.proto().set_domain("org.example");
  auto* prop = m.proto().add_metadata_props();
  prop->set_key("license");
  prop->set_value("MIT");
  prop = m.proto().add_metadata_props();
  prop->set_key("author");
  prop->set_value("tests");
  m.proto().mutable_graph()->set_name("heads");
  m.proto().mutable_graph()->set_doc_string("graph doc");
  m.Input("x", DataType::kFloat, {4});
  m.Node("Relu", {"x"}, {"a"}, "relu");
  m.Node("Neg", {"x"}, {"n"}, "neg");
  m.Node("Abs", {"n"}, {"b"}, "abs");
  m.Node("Exp", {"x"}, {"c"}, "exp");
  m.Output("a", DataType::kFloat, {4});
  m.Output("b", DataType::kFloat, {4});
  m.Output("c", DataType::kFloat, {4});
  return m.Serialize();
}

Session Load(const std::string& bytes, ExecutionMode mode = ExecutionMode::kDataflow, bool optimize = false) {
  SessionOptions options;
  options.mode = mode;
  options.optimize = optimize;
  auto s = Session::LoadFromBytes(bytes, options);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::vector<NamedValue> Inputs() { return {{"x", Tensor::FromVector<float>({4}, {-1, 2, -3, 4})}}; }

TEST(Api, MetadataComesFromTheModel) {
  Session s = Load(ThreeOutputModel());
  const ModelMetadata& m = s.metadata();
  EXPECT_EQ(m.producer_name, "api_test");
  EXPECT_EQ(m.producer_version, "2.5");
  EXPECT_EQ(m.model_version, 7);
  EXPECT_EQ(m.ir_version, 8);
  EXPECT_EQ(m.doc_string, "three heads");
  EXPECT_EQ(m.domain, "org.example");
  EXPECT_EQ(m.graph_name, "heads");
  EXPECT_EQ(m.graph_doc_string, "graph doc");
  ASSERT_EQ(m.metadata_props.size(), 2u);
  EXPECT_EQ(m.metadata_props[0], (std::pair<std::string, std::string>("license", "MIT")));
  EXPECT_EQ(m.metadata_props[1], (std::pair<std::string, std::string>("author", "tests")));
  ASSERT_EQ(m.opset_imports.size(), 1u);
  EXPECT_EQ(m.opset_imports[0].first, "");
  EXPECT_EQ(m.opset_imports[0].second, 17);
}

std::set<std::string> RanNodes(const RunProfile& profile) {
  std::set<std::string> names;
  for (const auto& n : profile.nodes) names.insert(n.node);
  return names;
}

void ExpectChosenOutputs(ExecutionMode mode) {
  Session s = Load(ThreeOutputModel(), mode);
  RunProfile profile;
  RunOptions options;
  options.profile = &profile;
  auto out = s.Run(Inputs(), {"b", "a"}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "b");  // the caller's order, not the graph's
  EXPECT_EQ((*out)[1].name, "a");
  const float* b = (*out)[0].value.tensor().data<float>();
  EXPECT_EQ(std::vector<float>(b, b + 4), (std::vector<float>{1, 2, 3, 4}));
  const float* a = (*out)[1].value.tensor().data<float>();
  EXPECT_EQ(std::vector<float>(a, a + 4), (std::vector<float>{0, 2, 0, 4}));
  // Exp feeds only "c", which nobody asked for: it did not run.
  EXPECT_EQ(RanNodes(profile), (std::set<std::string>{"relu", "neg", "abs"}));

  RunProfile only_c;
  options.profile = &only_c;
  out = s.Run(Inputs(), {"c"}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(RanNodes(only_c), (std::set<std::string>{"exp"}));
}

TEST(Api, ChosenOutputsRunOnlyTheirNodesDataflow) { ExpectChosenOutputs(ExecutionMode::kDataflow); }
TEST(Api, ChosenOutputsRunOnlyTheirNodesSequential) { ExpectChosenOutputs(ExecutionMode::kSequential); }

TEST(Api, ChosenOutputUnknownNameIsRefused) {
  Session s = Load(ThreeOutputModel());
  auto out = s.Run(Inputs(), {"a", "zz"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "the model has no output named 'zz'");
}

TEST(Api, ChosenOutputsMayRepeatAndRunTwice) {
  Session s = Load(ThreeOutputModel());
  for (int i = 0; i < 2; ++i) {  // the second run takes the cached selection
    auto out = s.Run(Inputs(), {"c", "c"});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_FLOAT_EQ((*out)[1].value.tensor().data<float>()[1], std::exp(2.0f));
  }
}

TEST(Api, FindValueByName) {
  Session s = Load(ThreeOutputModel());
  auto out = s.Run(Inputs());
  ASSERT_TRUE(out.ok());
  const Value* b = FindValue(*out, "b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->tensor().data<float>()[2], 3.0f);
  EXPECT_EQ(FindValue(*out, "nope"), nullptr);
}

TEST(Api, FromVectorRefusesAValueCountThatDoesNotMatchTheShape) {
  EXPECT_FALSE(Tensor::FromVector<float>({2, 3}, {1, 2, 3}).defined());        // too few: no zero padding
  EXPECT_FALSE(Tensor::FromVector<float>({2}, {1, 2, 3}).defined());           // too many: no cutting
  EXPECT_FALSE(Tensor::FromVector<int64_t>({-1}, {}).defined());               // no negative dims
  const Tensor ok = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(ok.defined());
  EXPECT_EQ(ok.data<float>()[3], 4.0f);
  EXPECT_TRUE(Tensor::FromVector<float>({0, 3}, {}).defined());
  // Session::Run names the input that was refused.
  Session s = Load(ThreeOutputModel());
  auto out = s.Run({{"x", Tensor::FromVector<float>({4}, {1, 2})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "input 'x' is an undefined tensor (Tensor::FromVector refuses values whose count does not match the "
            "shape)");
}

TEST(Api, BorrowReadOnlyMemory) {
  static const float kData[4] = {-1, 2, -3, 4};
  const float* data = kData;
  const Tensor t = Tensor::Borrow(DataType::kFloat, {4}, data);  // no const_cast needed
  EXPECT_EQ(t.raw_data(), static_cast<const void*>(kData));
  Session s = Load(ThreeOutputModel());
  auto out = s.Run({{"x", t}}, {"a"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].value.tensor().data<float>()[1], 2.0f);
  EXPECT_EQ(kData[0], -1.0f);
}

TEST(Api, RunIntoWritesTheCallersBuffers) {
  Session s = Load(ThreeOutputModel());
  float b_buffer[4] = {9, 9, 9, 9};
  Tensor a_owned(DataType::kFloat, {4});
  const void* a_bytes = a_owned.raw_data();
  std::vector<NamedValue> outputs = {{"b", Tensor::Borrow(DataType::kFloat, {4}, b_buffer)}, {"a", a_owned}, {"c", Value()}};
  Status st = s.RunInto(Inputs(), outputs);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(std::vector<float>(b_buffer, b_buffer + 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(outputs[1].value.tensor().raw_data(), a_bytes);  // the same bytes, now holding the result
  EXPECT_EQ(a_owned.data<float>()[3], 4.0f);
  ASSERT_TRUE(outputs[2].value.is_tensor());                 // no buffer: the result as Run gives it
  EXPECT_FLOAT_EQ(outputs[2].value.tensor().data<float>()[0], std::exp(-1.0f));
}

TEST(Api, RunIntoRefusesABufferThatDoesNotFit) {
  Session s = Load(ThreeOutputModel());
  float a_buffer[4] = {9, 9, 9, 9};
  float b_buffer[3] = {9, 9, 9};
  std::vector<NamedValue> outputs = {{"a", Tensor::Borrow(DataType::kFloat, {4}, a_buffer)},
                                     {"b", Tensor::Borrow(DataType::kFloat, {3}, b_buffer)}};
  Status st = s.RunInto(Inputs(), outputs);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "output 'b' has shape [4], the buffer given for it has shape [3]");
  EXPECT_EQ(a_buffer[1], 9.0f);  // nothing written when one buffer does not fit
  int64_t ints[4];
  outputs = {{"a", Tensor::Borrow(DataType::kInt64, {4}, ints)}};
  st = s.RunInto(Inputs(), outputs);
  EXPECT_EQ(st.message(), "output 'a' has type float32, the buffer given for it has type int64");
}

}  // namespace
}  // namespace onnxflow

namespace onnxflow {
namespace {

// DescribeModel (describe.h): the file's nodes, and the optimized graph traced back to them.
TEST(Describe, TracesAFusedNodeToTheNodesItReplaced) {
  tools::ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 1, 4, 4});
  m.Initializer("w", Tensor::FromVector<float>({1, 1, 1, 1}, {2}));
  m.Node("Conv", {"x", "w"}, {"c"}, "conv");
  m.Node("Relu", {"c"}, {"y"}, "relu");
  m.Output("y", DataType::kFloat, {1, 1, 4, 4});
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string path = std::string(tmp) + "/describe_conv_relu.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << m.Serialize();
  }
  auto plain = DescribeModel(path);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_EQ(plain->nodes.size(), 2u);
  EXPECT_EQ(plain->nodes[0].name, "conv");
  EXPECT_EQ(plain->nodes[0].op_type, "Conv");
  EXPECT_EQ(plain->nodes[0].inputs, (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(plain->nodes[1].outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(plain->initializer_count, 1);
  ASSERT_EQ(plain->inputs.size(), 1u);
  EXPECT_EQ(plain->inputs[0].name, "x");
  EXPECT_TRUE(plain->optimized.empty());

  auto optimized = DescribeModel(path, {}, /*optimized=*/true);
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  ASSERT_EQ(optimized->optimized.size(), 1u);
  EXPECT_EQ(optimized->optimized[0].domain, "com.onnxflow");
  EXPECT_EQ(optimized->optimized[0].replaced, (std::vector<int>{0, 1}));
  EXPECT_EQ(optimized->optimized[0].outputs, (std::vector<std::string>{"y"}));

  auto missing = DescribeModel(std::string(tmp) + "/no_such_model.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace onnxflow
