// Loading and validation: every refusal names what is wrong and where.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using tools::ModelBuilder;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

::testing::AssertionResult RefusedWith(const Result<Session>& s, StatusCode code, const std::string& needle) {
  if (s.ok()) return ::testing::AssertionFailure() << "the model was accepted";
  if (s.status().code() != code) return ::testing::AssertionFailure() << "wrong code: " << s.status().ToString();
  if (s.status().message().find(needle) == std::string::npos) {
    return ::testing::AssertionFailure() << "'" << needle << "' not in: " << s.status().ToString();
  }
  return ::testing::AssertionSuccess();
}

TEST(Loading, UnsupportedOpsAreListedInOneMessage) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Node("FrobnicateA", {"x"}, {"a"}, "first");
  m.Node("Relu", {"a"}, {"b"});
  m.Node("FrobnicateB", {"b"}, {"y"}, "second");
  m.Output("y", DataType::kFloat, {2});
  auto s = Session::LoadFromBytes(m.Serialize());
  EXPECT_TRUE(RefusedWith(s, StatusCode::kUnimplemented, "2 unsupported nodes"));
  EXPECT_TRUE(RefusedWith(s, StatusCode::kUnimplemented, "node 'first' (FrobnicateA), domain 'ai.onnx', opset 17"));
  EXPECT_TRUE(RefusedWith(s, StatusCode::kUnimplemented, "node 'second' (FrobnicateB)"));
}

// A model ONNX Runtime saved at its 'all' level: many nodes of its private layout, one reason for
// all. It is given once, after the first node it applies to (with its domain and opset); later
// nodes point back to that node; at most 20 nodes are named, then how many more.
TEST(Loading, ManyUnsupportedNodesGiveEachReasonOnce) {
  ModelBuilder m(17);
  auto* nchwc = m.proto().add_opset_import();
  nchwc->set_domain("com.microsoft.nchwc");
  nchwc->set_version(1);
  m.Input("x", DataType::kFloat, {1, 8, 4, 4});
  std::string prev = "x";
  for (int i = 0; i < 30; ++i) {
    const std::string out = "v" + std::to_string(i);
    m.Node(i % 2 == 0 ? "ReorderInput" : "ReorderOutput", {prev}, {out}, "n" + std::to_string(i))
        .set_domain("com.microsoft.nchwc");
    prev = out;
  }
  m.Output(prev, DataType::kFloat, {1, 8, 4, 4});
  auto s = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(RefusedWith(s, StatusCode::kUnimplemented, "30 unsupported nodes: node 'n0' (ReorderInput)"));
  const std::string& message = s.status().message();
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = message.find(needle); at != std::string::npos; at = message.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("is ONNX Runtime's private NCHWc layout"), 1u) << message;
  EXPECT_EQ(count("domain 'com.microsoft.nchwc'"), 1u) << message;
  EXPECT_EQ(count("(as node 'n0' (ReorderInput))"), 19u) << message;
  EXPECT_NE(message.find("node 'n19' (ReorderOutput)"), std::string::npos) << message;
  EXPECT_EQ(message.find("node 'n20'"), std::string::npos) << message;
  EXPECT_NE(message.find("; and 10 more"), std::string::npos) << message;
}

// Kernels are resolved on the nodes as written, before any pass runs: a node nobody reads, which
// RemoveDeadNodes would drop (and did, when only the plan resolved kernels), still refuses the model.
TEST(Loading, UnsupportedModelIsRefusedBeforeAnyPass) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Node("Relu", {"x"}, {"y"});
  m.Node("FrobnicateC", {"x"}, {"unread"}, "dead");
  m.Output("y", DataType::kFloat, {2});
  auto s = Session::LoadFromBytes(m.Serialize());
  EXPECT_TRUE(RefusedWith(s, StatusCode::kUnimplemented,
                          "1 unsupported node: node 'dead' (FrobnicateC), domain 'ai.onnx', opset 17"));
}

TEST(Loading, CycleIsRefusedNamingANode) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Node("Add", {"x", "c"}, {"a"}, "loop_a");
  m.Node("Relu", {"a"}, {"c"}, "loop_b");
  m.Output("a", DataType::kFloat, {2});
  EXPECT_TRUE(RefusedWith(Session::LoadFromBytes(m.Serialize()), StatusCode::kInvalidArgument, "cycle through node 'loop_a'"));
}

TEST(Loading, UndefinedInputIsRefusedNamingNodeAndInput) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Node("Add", {"x", "nowhere"}, {"y"}, "adder");
  m.Output("y", DataType::kFloat, {2});
  EXPECT_TRUE(RefusedWith(Session::LoadFromBytes(m.Serialize()), StatusCode::kInvalidArgument,
                          "node 'adder' (Add): input 'nowhere' is not defined"));
}

TEST(Loading, ValueDefinedTwiceIsRefused) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Node("Relu", {"x"}, {"y"}, "one");
  m.Node("Relu", {"x"}, {"y"}, "two");
  m.Output("y", DataType::kFloat, {2});
  EXPECT_TRUE(RefusedWith(Session::LoadFromBytes(m.Serialize()), StatusCode::kInvalidArgument, "'y' is defined twice"));
}

TEST(Loading, VersionsAreChecked) {
  ModelBuilder old_ir(17, 99);
  old_ir.Input("x", DataType::kFloat, {1});
  old_ir.Output("x", DataType::kFloat, {1});
  EXPECT_TRUE(RefusedWith(Session::LoadFromBytes(old_ir.Serialize()), StatusCode::kInvalidArgument, "IR version 99"));

  ModelBuilder future(99);
  future.Input("x", DataType::kFloat, {1});
  future.Output("x", DataType::kFloat, {1});
  EXPECT_TRUE(RefusedWith(Session::LoadFromBytes(future.Serialize()), StatusCode::kUnimplemented, "opset 99"));
}

TEST(Loading, GarbageAndTruncatedFilesAreRefused) {
  EXPECT_TRUE(RefusedWith(Session::LoadFromBytes("definitely not protobuf \xff\xff\xff"), StatusCode::kInvalidArgument,
                          "not a valid ONNX model"));
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Initializer("w", Tensor::FromVector<float>({2}, {1, 2}));
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y", DataType::kFloat, {2});
  const std::string bytes = m.Serialize();
  for (size_t cut = 1; cut < bytes.size(); cut += 7) {
    auto s = Session::LoadFromBytes(bytes.substr(0, cut));  // must refuse or load, never crash
    (void)s;
  }
  EXPECT_TRUE(RefusedWith(Session::Load("/nonexistent/model.onnx"), StatusCode::kNotFound, "/nonexistent/model.onnx"));
  auto directory = Session::Load("/tmp");  // a directory opens, but has no size to read
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument) << directory.status().ToString();
  EXPECT_NE(directory.status().message().find("is a directory"), std::string::npos) << directory.status().ToString();
}

TEST(Loading, InitializerShorterThanItsShapeIsRefused) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  t->add_dims(1 << 30);
  t->set_raw_data(std::string(8, '\0'));
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y", DataType::kFloat, {2});
  EXPECT_TRUE(RefusedWith(Session::LoadFromBytes(m.Serialize()), StatusCode::kInvalidArgument, "tensor 'w': its data holds fewer elements"));
}

TEST(Running, WrongInputTypeAndShapeAreRefusedNamingTheInput) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2, 3});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y", DataType::kFloat, {2, 3});
  auto s = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto wrong_type = s->Run({{"x", Tensor(DataType::kInt64, {2, 3})}});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("input 'x' has type int64, the model expects float32"), std::string::npos)
      << wrong_type.status().ToString();
  auto wrong_shape = s->Run({{"x", Tensor(DataType::kFloat, {3, 2})}});
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_NE(wrong_shape.status().message().find("input 'x' has shape [3,2]"), std::string::npos);
  auto missing = s->Run({});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("input 'x' is required"), std::string::npos);
  auto unknown = s->Run({{"x", Tensor(DataType::kFloat, {2, 3})}, {"z", Tensor(DataType::kFloat, {1})}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no input named 'z'"), std::string::npos);
}

// onnxruntime-node callers give a scalar input as a tensor of shape [1] (Silero VAD's sample rate:
// `new Tensor("int64", [16000n])`), which ONNX Runtime accepts: it runs as the scalar declared, so
// the output's shape is the model's; more than one value is still refused.
TEST(Running, AScalarInputGivenAsOneValueOfHigherRankRunsAsTheScalar) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Input("s", DataType::kFloat, {});
  m.Node("Add", {"x", "s"}, {"y"});
  m.Output("y", DataType::kFloat, {2});
  auto s = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const Tensor x = Tensor::FromVector<float>({2}, {1, 2});
  for (const Shape& shape : {Shape{}, Shape{1}, Shape{1, 1}}) {
    auto out = s->Run({{"x", x}, {"s", Tensor::FromVector<float>(shape, {10})}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& y = (*out)[0].value.tensor();
    EXPECT_EQ(y.shape(), Shape({2}));
    EXPECT_EQ(y.data<float>()[0], 11);
    EXPECT_EQ(y.data<float>()[1], 12);
  }
  auto two = s->Run({{"x", x}, {"s", Tensor::FromVector<float>({2}, {1, 2})}});
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("input 's' has shape [2], the model expects []"), std::string::npos)
      << two.status().ToString();
}

// scikit-learn pipelines converted by skl2onnx: a map in (DictVectorizer), a sequence of maps out
// (ZipMap, after every classifier). Declared types, the run, the refusal of a tensor where a map
// goes, and the value files that --output-dir writes and --check reads.
TEST(Running, MapsInAndSequencesOfMapsOut) {
  ModelBuilder m(13);
  auto* ml = m.proto().add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(1);
  auto* features = m.proto().mutable_graph()->add_input();
  features->set_name("features");
  features->mutable_type()->mutable_map_type()->set_key_type(static_cast<int32_t>(DataType::kInt64));
  features->mutable_type()->mutable_map_type()->mutable_value_type()->mutable_tensor_type()->set_elem_type(
      static_cast<int32_t>(DataType::kFloat));
  auto& vectorizer = m.Node("DictVectorizer", {"features"}, {"dense"});
  vectorizer.set_domain("ai.onnx.ml");
  tools::SetAttr(vectorizer, "int64_vocabulary", std::vector<int64_t>{10, 20});
  auto& zip = m.Node("ZipMap", {"dense"}, {"probabilities"});
  zip.set_domain("ai.onnx.ml");
  tools::SetAttr(zip, "classlabels_int64s", std::vector<int64_t>{0, 1});
  auto* out = m.proto().mutable_graph()->add_output();
  out->set_name("probabilities");
  auto* seq_map = out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_map_type();
  seq_map->set_key_type(static_cast<int32_t>(DataType::kInt64));
  seq_map->mutable_value_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(DataType::kFloat));

  auto s = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->inputs()[0].kind, Value::Kind::kMap);
  EXPECT_EQ(s->inputs()[0].map_key, DataType::kInt64);
  EXPECT_EQ(s->outputs()[0].kind, Value::Kind::kSequence);
  EXPECT_EQ(s->outputs()[0].map_key, DataType::kInt64);

  const Value map(std::make_shared<const Map>(
      Map{Tensor::FromVector<int64_t>({2}, {20, 30}), Tensor::FromVector<float>({2}, {2.5f, 9})}));
  auto r = s->Run({{"features", map}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Sequence& seq = (*r)[0].value.sequence();
  ASSERT_EQ(seq.maps.size(), 1u);
  EXPECT_EQ(seq.maps[0].values.data<float>()[0], 0.0f);  // key 10 absent
  EXPECT_EQ(seq.maps[0].values.data<float>()[1], 2.5f);  // key 30 is not in the vocabulary

  auto tensor = s->Run({{"features", Tensor::FromVector<float>({1}, {1})}});
  ASSERT_FALSE(tensor.ok());
  EXPECT_NE(tensor.status().message().find("input 'features' must be a map"), std::string::npos);
  const Value string_keys(std::make_shared<const Map>(
      Map{Tensor::FromVector<std::string>({1}, {"a"}), Tensor::FromVector<float>({1}, {1})}));
  auto wrong_keys = s->Run({{"features", string_keys}});
  ASSERT_FALSE(wrong_keys.ok());
  EXPECT_NE(wrong_keys.status().message().find("has string keys, the model expects int64"), std::string::npos)
      << wrong_keys.status().ToString();

  // What a C++ caller can build but no reader may take: a null map, keys and values of two lengths.
  auto null_map = s->Run({{"features", Value(std::shared_ptr<const Map>())}});
  ASSERT_FALSE(null_map.ok());
  EXPECT_NE(null_map.status().message().find("input 'features' has no value"), std::string::npos)
      << null_map.status().ToString();
  const Value ragged(std::make_shared<const Map>(
      Map{Tensor::FromVector<int64_t>({2}, {20, 30}), Tensor::FromVector<float>({1}, {2.5f})}));
  auto ragged_run = s->Run({{"features", ragged}});
  ASSERT_FALSE(ragged_run.ok());
  EXPECT_NE(ragged_run.status().message().find("keys and values must be 1-D tensors of one length"), std::string::npos)
      << ragged_run.status().ToString();

  // The value files: MapProto in, SequenceProto of maps out, read back equal.
  const std::string in = TempDir() + "/map_input.pb", result = TempDir() + "/maps_output.pb";
  ASSERT_TRUE(WriteValueFile(in, map, "features", &s->inputs()[0]).ok());
  auto read_map = ReadValueFile(in, &s->inputs()[0]);
  ASSERT_TRUE(read_map.ok()) << read_map.status().ToString();
  EXPECT_TRUE(CompareValues(map, *read_map, 0, 0).match);
  ASSERT_TRUE(WriteValueFile(result, (*r)[0].value, "probabilities", &s->outputs()[0]).ok());
  auto read_seq = ReadValueFile(result, &s->outputs()[0]);
  ASSERT_TRUE(read_seq.ok()) << read_seq.status().ToString();
  EXPECT_TRUE(CompareValues((*r)[0].value, *read_seq, 0, 0).match);
  // A MapProto with a value missing is refused by name.
  onnx::MapProto short_map;
  short_map.set_name("features");
  short_map.set_key_type(static_cast<int32_t>(DataType::kInt64));
  short_map.add_keys(1);
  short_map.add_keys(2);
  short_map.mutable_values()->set_elem_type(onnx::SequenceProto::TENSOR);
  short_map.mutable_values()->add_tensor_values();
  const std::string short_path = TempDir() + "/short_map.pb";
  std::ofstream(short_path, std::ios::binary) << short_map.SerializeAsString();
  auto short_read = ReadValueFile(short_path, &s->inputs()[0]);
  ASSERT_FALSE(short_read.ok());
  EXPECT_NE(short_read.status().message().find("map 'features': needs one tensor value per key"), std::string::npos)
      << short_read.status().ToString();
  const Value other(std::make_shared<const Map>(
      Map{Tensor::FromVector<int64_t>({2}, {20, 31}), Tensor::FromVector<float>({2}, {2.5f, 9})}));
  const Comparison keys = CompareValues(map, other, 1, 1);
  EXPECT_FALSE(keys.match);
  EXPECT_NE(keys.mismatch.find("map keys"), std::string::npos) << keys.mismatch;
}

// Sequences a C++ caller builds by hand are checked as they come in, each refusal naming the input:
// a null handle, an undefined element, an element of another type, tensors and maps together.
TEST(Running, MalformedSequencesAreRefusedNamingTheInput) {
  ModelBuilder m(17);
  auto* input = m.proto().mutable_graph()->add_input();
  input->set_name("s");
  input->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      static_cast<int32_t>(DataType::kFloat));
  m.Node("SequenceLength", {"s"}, {"n"});
  m.Output("n", DataType::kInt64, {});
  auto session = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto run = [&](std::shared_ptr<const Sequence> seq) { return session->Run({{"s", Value(std::move(seq))}}); };
  auto refused_with = [&](std::shared_ptr<const Sequence> seq, const std::string& message) {
    auto r = run(std::move(seq));
    if (r.ok()) return ::testing::AssertionFailure() << "ran";
    if (r.status().message().find(message) == std::string::npos) {
      return ::testing::AssertionFailure() << r.status().ToString();
    }
    return ::testing::AssertionSuccess();
  };
  auto sequence = [](DataType elem, std::vector<Tensor> tensors) {
    auto seq = std::make_shared<Sequence>();
    seq->elem_type = elem;
    seq->tensors = std::move(tensors);
    return std::shared_ptr<const Sequence>(std::move(seq));
  };

  auto good = run(sequence(DataType::kFloat, {Tensor::FromVector<float>({1}, {1}), Tensor::FromVector<float>({2}, {1, 2})}));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ((*good)[0].value.tensor().data<int64_t>()[0], 2);
  EXPECT_TRUE(refused_with(nullptr, "input 's' has no value"));
  EXPECT_TRUE(refused_with(sequence(DataType::kFloat, {Tensor()}), "input 's' holds an undefined tensor"));
  EXPECT_TRUE(refused_with(sequence(DataType::kInt64, {Tensor::FromVector<int64_t>({1}, {1})}),
                           "input 's' is a sequence of int64, the model expects float32"));
  EXPECT_TRUE(refused_with(sequence(DataType::kFloat, {Tensor::FromVector<int64_t>({1}, {1})}),
                           "input 's' holds a int64 tensor in a sequence of float32"));
  EXPECT_TRUE(refused_with(sequence(DataType::kUndefined, {Tensor::FromVector<float>({1}, {1})}),
                           "in a sequence of undefined"));
  auto mixed = std::make_shared<Sequence>();
  mixed->elem_type = DataType::kFloat;
  mixed->tensors.push_back(Tensor::FromVector<float>({1}, {1}));
  mixed->maps.push_back(Map{Tensor::FromVector<int64_t>({1}, {1}), Tensor::FromVector<float>({1}, {1})});
  EXPECT_TRUE(refused_with(std::move(mixed), "input 's' must be a sequence of tensors"));
}

// ONNX Runtime saves models whose folded initializers leave graph inputs that nothing reads.
TEST(Running, InputsNothingReadsAreOptional) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Input("dangling", DataType::kFloat, {3});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y", DataType::kFloat, {2});
  auto s = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(2u, s->inputs().size());
  EXPECT_FALSE(s->inputs()[0].unread);
  EXPECT_EQ("dangling", s->inputs()[1].name);
  EXPECT_TRUE(s->inputs()[1].unread);
  EXPECT_FALSE(s->inputs()[1].optional);  // its type is a tensor's, not an optional's
  auto run = s->Run({{"x", Tensor(DataType::kFloat, {2})}});
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  auto missing = s->Run({});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("input 'x' is required"), std::string::npos);
}

// A declared output type that no input fixes reaches the kernel: LinearAttention without a past
// state writes present_state in the type the model gives it (S), not in the activations' (T).
TEST(Running, DeclaredOutputTypeNoInputBindsIsKept) {
  ModelBuilder m(27);
  for (const char* name : {"q", "k", "v"}) m.Input(name, DataType::kFloat, {1, 2, 4});
  auto& node = m.Node("LinearAttention", {"q", "k", "v"}, {"out", "state"});
  tools::SetAttr(node, "q_num_heads", int64_t{1});
  tools::SetAttr(node, "kv_num_heads", int64_t{1});
  tools::SetAttr(node, "update_rule", std::string("linear"));
  m.Output("out", DataType::kFloat, {1, 2, 4});
  m.Output("state", DataType::kBFloat16, {1, 1, 4, 4});
  auto s = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Tensor x(DataType::kFloat, {1, 2, 4});
  auto run = s->Run({{"q", x}, {"k", x}, {"v", x}});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ((*run)[0].value.tensor().dtype(), DataType::kFloat);
  EXPECT_EQ((*run)[1].value.tensor().dtype(), DataType::kBFloat16);
}

TEST(Running, KernelErrorNamesTheNode) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2, 3});
  m.Input("shape", DataType::kInt64, {2});
  m.Node("Reshape", {"x", "shape"}, {"y"}, "the_reshape");
  m.Output("y", DataType::kFloat, {-1, -1});
  auto s = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto r = s->Run({{"x", Tensor(DataType::kFloat, {2, 3})}, {"shape", Tensor::FromVector<int64_t>({2}, {4, 4})}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node 'the_reshape' (Reshape)"), std::string::npos) << r.status().ToString();
}

// External data: the location must stay inside the model's folder.
class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir() + "/external_" + std::to_string(getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    mkdir(dir_.c_str(), 0755);
    std::ofstream(dir_ + "/weights.bin", std::ios::binary).write("\0\0\x80\x3f\0\0\0\x40", 8);  // 1.0f, 2.0f
    std::ofstream(TempDir() + "/outside.bin", std::ios::binary).write("\0\0\x80\x3f\0\0\0\x40", 8);
  }

  Result<Session> LoadWith(const std::string& location, const std::string& offset = "0", const std::string& length = "8") {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {2});
    auto* t = m.proto().mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(1);
    t->add_dims(2);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    add("offset", offset);
    add("length", length);
    m.Node("Add", {"x", "w"}, {"y"});
    m.Output("y", DataType::kFloat, {2});
    const std::string path = dir_ + "/model.onnx";
    std::ofstream(path, std::ios::binary) << m.Serialize();
    return Session::Load(path);
  }

  std::string dir_;
};

TEST_F(ExternalData, LoadsFromTheModelsFolder) {
  auto s = LoadWith("weights.bin");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto out = s->Run({{"x", Tensor::FromVector<float>({2}, {10, 20})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].value.tensor().data<float>()[0], 11.0f);
  EXPECT_EQ((*out)[0].value.tensor().data<float>()[1], 22.0f);
}

TEST_F(ExternalData, RefusesEscapes) {
  EXPECT_TRUE(RefusedWith(LoadWith("../outside.bin"), StatusCode::kInvalidArgument, "leaves the model's folder"));
  EXPECT_TRUE(RefusedWith(LoadWith(TempDir() + "/outside.bin"), StatusCode::kInvalidArgument, "must be a relative path"));
  ASSERT_EQ(symlink((TempDir() + "/outside.bin").c_str(), (dir_ + "/link.bin").c_str()), 0);
  EXPECT_TRUE(RefusedWith(LoadWith("link.bin"), StatusCode::kInvalidArgument, "resolves outside"));
}

TEST_F(ExternalData, RefusesRangesPastTheFile) {
  EXPECT_TRUE(RefusedWith(LoadWith("weights.bin", "4", "8"), StatusCode::kInvalidArgument, "exceed the size"));
  EXPECT_TRUE(RefusedWith(LoadWith("weights.bin", "0", "4"), StatusCode::kInvalidArgument, "fewer elements"));
  EXPECT_TRUE(RefusedWith(LoadWith("weights.bin", "-1", "4"), StatusCode::kInvalidArgument, "not a non-negative"));
  EXPECT_TRUE(RefusedWith(LoadWith("missing.bin"), StatusCode::kNotFound, "missing.bin"));
}

// A FIFO would block open() until a writer comes; a device is no weights file. Both are refused,
// and at once (a hung load fails the test by its timeout).
TEST_F(ExternalData, RefusesFifosAndDevicesWithoutBlocking) {
  ASSERT_EQ(mkfifo((dir_ + "/pipe.bin").c_str(), 0644), 0);
  EXPECT_TRUE(RefusedWith(LoadWith("pipe.bin"), StatusCode::kInvalidArgument, "'pipe.bin' is not a regular file"));
  ASSERT_EQ(symlink("/dev/zero", (dir_ + "/zero.bin").c_str()), 0);
  // /dev/zero resolves outside the folder; a device inside it is refused by the same fstat.
  EXPECT_TRUE(RefusedWith(LoadWith("zero.bin"), StatusCode::kInvalidArgument, "resolves outside"));
  ASSERT_EQ(mkdir((dir_ + "/sub").c_str(), 0755), 0);
  EXPECT_TRUE(RefusedWith(LoadWith("sub"), StatusCode::kInvalidArgument, "'sub' is not a regular file"));
}

TEST_F(ExternalData, RefusesEmbeddedNul) {
  EXPECT_TRUE(RefusedWith(LoadWith(std::string("weights.bin\0junk", 16)), StatusCode::kInvalidArgument,
                          "location contains a NUL byte"));
}

}  // namespace
}  // namespace onnxflow
