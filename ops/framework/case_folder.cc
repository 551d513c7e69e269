#include "ops/framework/case_folder.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "ops/framework/compare.h"
#include "ops/framework/float_tensor.h"
#include "ops/framework/tensor_proto.h"

namespace onnxflow {
namespace {

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

onnx::ModelProto ReadModel(const std::string& dir) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(ReadFile(dir + "/model.onnx"))) << dir << "/model.onnx";
  return model;
}

// A .pb as a tensor and the name it carries; an undefined tensor (and a test failure) when it
// cannot be read.
NamedValue ReadTensorFile(const std::string& path) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(ReadFile(path))) {
    ADD_FAILURE() << "cannot read " << path;
    return {path, Tensor()};
  }
  auto tensor = TensorFromProto(proto);
  EXPECT_TRUE(tensor.ok()) << path << ": " << tensor.status().ToString();
  return {proto.name(), tensor.ok() ? Value(*tensor) : Value(Tensor())};
}

std::string SetDir(const std::string& dir, int set) { return dir + "/test_data_set_" + std::to_string(set); }

// The files of a set's inputs or outputs (`kind`), one per entry of `names` that is not empty,
// read in order; undefined tensors where a name is empty.
std::vector<Tensor> ReadGiven(const std::string& set_dir, const char* kind,
                              const google::protobuf::RepeatedPtrField<std::string>& names) {
  std::vector<Tensor> tensors;
  int next = 0;
  for (const std::string& name : names) {
    if (name.empty()) {
      tensors.emplace_back();
      continue;
    }
    const std::string path = set_dir + "/" + kind + "_" + std::to_string(next++) + ".pb";
    const NamedValue v = ReadTensorFile(path);
    tensors.push_back(v.value.is_tensor() ? v.value.tensor() : Tensor());
  }
  return tensors;
}

// How far outside the tolerance an element is, above 1 when outside: its error over what the
// tolerance allows (with no tolerance, 1 + the error; a NaN or infinity that does not match:
// infinitely far).
double Excess(double want, double got, double rtol, double atol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : HUGE_VAL;
  if (std::isinf(want) || std::isinf(got)) return want == got ? 0 : HUGE_VAL;
  const double allowed = atol + rtol * std::fabs(want), err = std::fabs(want - got);
  if (allowed > 0) return err / allowed;
  return err > 0 ? 1 + err : 0;
}

// "3 of 64 elements outside rtol 0.0001, atol 1e-05; the worst, element 17, is 1.3, expected
// 1.25": how many miss and the one that misses by most, for tensors of one shape of float, double,
// float16 or bfloat16 (read as double); empty for the other types.
std::string WorstElement(const Tensor& e, const Tensor& a, double rtol, double atol) {
  std::vector<double> e_storage, a_storage;
  const Result<const double*> want = ReadFloatTensor<double>(e, e_storage, "expected");
  const Result<const double*> got = ReadFloatTensor<double>(a, a_storage, "actual");
  if (!want.ok() || !got.ok()) return "";
  int64_t worst = 0, outside = 0;
  double worst_excess = -1;
  for (int64_t i = 0; i < e.size(); ++i) {
    const double x = Excess((*want)[i], (*got)[i], rtol, atol);
    outside += x > 1;
    if (x > worst_excess) worst_excess = x, worst = i;
  }
  std::ostringstream s;
  s << outside << " of " << e.size() << " elements outside rtol " << rtol << ", atol " << atol
    << "; the worst, element " << worst;
  s.precision(9);
  s << ", is " << (*got)[worst] << ", expected " << (*want)[worst];
  return s.str();
}

}  // namespace

CaseFolder LoadCaseFolder(const std::string& dir, int set) {
  CaseFolder c;
  c.dir = dir;
  c.model = ReadModel(dir);
  const std::string data = SetDir(dir, set);
  for (int i = 0;; ++i) {
    const std::string path = data + "/input_" + std::to_string(i) + ".pb";
    if (!Exists(path)) break;
    c.inputs.push_back(ReadTensorFile(path));
  }
  EXPECT_FALSE(c.inputs.empty()) << "no input_0.pb in " << data;
  for (int i = 0; i < c.model.graph().output_size(); ++i) {
    NamedValue v = ReadTensorFile(data + "/output_" + std::to_string(i) + ".pb");
    c.expected.push_back({c.model.graph().output(i).name(), std::move(v.value)});
  }
  return c;
}

Tensor ExpectedOutput(const CaseFolder& c, const std::string& output) {
  for (const NamedValue& v : c.expected) {
    if (v.name == output && v.value.is_tensor()) return v.value.tensor();
  }
  ADD_FAILURE() << c.dir << " has no expected output '" << output << "'";
  return Tensor();
}

NodeCase LoadNodeCase(const std::string& dir, int set) {
  NodeCase c;
  c.dir = dir;
  const onnx::ModelProto model = ReadModel(dir);
  if (model.graph().node_size() == 0) {
    ADD_FAILURE() << dir << "/model.onnx has no node";
    return c;
  }
  c.node = model.graph().node(0);
  // "" and "ai.onnx" both name the default domain.
  auto same_domain = [](const std::string& a, const std::string& b) {
    return a == b || ((a.empty() || a == "ai.onnx") && (b.empty() || b == "ai.onnx"));
  };
  for (const auto& import : model.opset_import()) {
    if (same_domain(import.domain(), c.node.domain())) c.opset = static_cast<int>(import.version());
  }
  c.inputs = ReadGiven(SetDir(dir, set), "input", c.node.input());
  c.expected = ReadGiven(SetDir(dir, set), "output", c.node.output());
  return c;
}

OpTest NodeTest(const NodeCase& c, const std::vector<Tensor>& inputs) {
  OpTest t(c.node.op_type(), c.opset, c.node.domain());
  for (const auto& a : c.node.attribute()) *t.node().add_attribute() = a;
  for (const Tensor& in : inputs) {
    if (in.defined()) {
      t.Input(in);
    } else {
      t.AbsentInput();
    }
  }
  for (int i = 0; i < c.node.output_size(); ++i) {
    t.node().add_output(c.node.output(i).empty() ? "" : "out" + std::to_string(i));
  }
  return t;
}

::testing::AssertionResult CaseTensorNear(const std::string& what, const Tensor& expected, const Tensor& actual,
                                          double rtol, double atol) {
  const TensorComparison c = CompareTensors(expected, actual, rtol, atol);
  if (c.match) return ::testing::AssertionSuccess();
  // A type or shape mismatch, and any other element type, is told as CompareTensors finds it (the
  // first difference).
  const std::string worst = expected.dtype() == actual.dtype() && expected.shape() == actual.shape()
                                ? WorstElement(expected, actual, rtol, atol)
                                : "";
  if (worst.empty()) return ::testing::AssertionFailure() << what << ": " << c.mismatch;
  return ::testing::AssertionFailure() << what << ": " << worst << " (max abs error " << c.max_abs_error << ")";
}

::testing::AssertionResult OutputsNear(const CaseFolder& c, const std::vector<NamedValue>& actual, double rtol,
                                       double atol) {
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  bool failed = false;
  for (const NamedValue& want : c.expected) {
    const std::string what = c.dir + " output '" + want.name + "'";
    const Value* got = nullptr;
    for (const NamedValue& v : actual) {
      if (v.name == want.name) got = &v.value;
    }
    ::testing::AssertionResult one = ::testing::AssertionSuccess();
    if (got == nullptr || !got->is_tensor()) {
      one = ::testing::AssertionFailure() << what << ": " << (got == nullptr ? "not computed" : "not a tensor");
    } else if (want.value.is_tensor()) {
      one = CaseTensorNear(what, want.value.tensor(), got->tensor(), rtol, atol);
    }
    if (one) continue;
    if (!failed) result = ::testing::AssertionFailure();
    result << (failed ? "\n" : "") << one.message();
    failed = true;
  }
  return result;
}

}  // namespace onnxflow
