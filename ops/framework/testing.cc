#include "ops/framework/testing.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "ops/framework/compare.h"
#include "ops/framework/evaluate.h"
#include "ops/framework/numeric.h"
#include "ops/framework/tensor_proto.h"

namespace onnxflow {

OpTest::OpTest(std::string op_type, int opset, std::string domain) : opset_(opset) {
  node_.set_op_type(std::move(op_type));
  node_.set_domain(std::move(domain));
  node_.set_name("test_node");
}

OpTest& OpTest::Input(Value value) {
  node_.add_input("in" + std::to_string(inputs_.size()));
  inputs_.push_back(std::move(value));
  constant_.push_back(false);
  return *this;
}

OpTest& OpTest::AbsentInput() {
  node_.add_input("");
  inputs_.emplace_back();
  constant_.push_back(false);
  return *this;
}

OpTest& OpTest::Outputs(int count) { outputs_ = count; return *this; }
OpTest& OpTest::ConstantInput(int i) { constant_.at(i) = true; return *this; }
OpTest& OpTest::Threads(int threads) { threads_ = threads; return *this; }
OpTest& OpTest::OutputTypes(std::vector<DataType> types) { output_types_ = std::move(types); return *this; }

#define ONNXFLOW_ATTR(T, TYPE, SETTER)                                   \
  OpTest& OpTest::Attr(const std::string& name, T v) {                   \
    auto* a = node_.add_attribute();                                     \
    a->set_name(name);                                                   \
    a->set_type(onnx::AttributeProto::TYPE);                             \
    SETTER;                                                              \
    return *this;                                                        \
  }
ONNXFLOW_ATTR(int64_t, INT, a->set_i(v))
ONNXFLOW_ATTR(float, FLOAT, a->set_f(v))
ONNXFLOW_ATTR(const std::string&, STRING, a->set_s(v))
ONNXFLOW_ATTR(const std::vector<int64_t>&, INTS, for (auto x : v) a->add_ints(x))
ONNXFLOW_ATTR(const std::vector<float>&, FLOATS, for (auto x : v) a->add_floats(x))
ONNXFLOW_ATTR(const std::vector<std::string>&, STRINGS, for (auto& x : v) a->add_strings(x))
ONNXFLOW_ATTR(const Tensor&, TENSOR, TensorToProto(v, a->mutable_t()))
#undef ONNXFLOW_ATTR

Result<std::vector<Value>> OpTest::Run(const std::function<Status(KernelRegistry&)>& register_kernels) {
  KernelRegistry registry;
  ONNXFLOW_RETURN_IF_ERROR(register_kernels(registry));
  while (node_.output_size() < outputs_) node_.add_output("out" + std::to_string(node_.output_size()));
  const KernelDef* def = registry.Find(node_.domain(), node_.op_type(), opset_);
  if (def == nullptr) return NotFound("no kernel for " + node_.op_type() + " at opset " + std::to_string(opset_));

  std::vector<DataType> types;
  std::vector<const Tensor*> constants;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const bool present = !node_.input(i).empty() && inputs_[i].is_tensor();
    types.push_back(present ? inputs_[i].tensor().dtype() : DataType::kUndefined);
    constants.push_back(present && constant_[i] ? &inputs_[i].tensor() : nullptr);
  }
  KernelInfo info(node_, opset_, types, constants, {});
  info.set_output_types(output_types_);
  EvaluateOptions options;
  options.threads = threads_;
  options.reusable = reusable_;
  options.reusable.resize(inputs_.size(), 0);
  // A reusable input is the run's own copy, as the plan gives a value's last reader.
  std::vector<Value> values = inputs_;
  input_data_.assign(inputs_.size(), nullptr);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!values[i].is_tensor()) continue;
    if (options.reusable[i]) values[i] = Value(values[i].tensor().Clone());
    input_data_[i] = values[i].tensor().raw_data();
  }
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> outputs, EvaluateNode(*def, info, std::move(values), options));
  output_data_.clear();
  for (const Value& v : outputs) output_data_.push_back(v.is_tensor() ? v.tensor().raw_data() : nullptr);
  return outputs;
}

OpTest& OpTest::ReusableInput(int i) {
  if (static_cast<int>(reusable_.size()) <= i) reusable_.resize(i + 1, 0);
  reusable_[i] = 1;
  return *this;
}

bool OpTest::WroteInto(int input, int output) const {
  return input < static_cast<int>(input_data_.size()) && output < static_cast<int>(output_data_.size()) &&
         input_data_[input] != nullptr && input_data_[input] == output_data_[output];
}

namespace {

::testing::AssertionResult Compare(const Tensor& e, const Tensor& a, double rtol, double atol) {
  const TensorComparison c = CompareTensors(e, a, rtol, atol);
  if (c.match) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << c.mismatch;
}

}  // namespace

::testing::AssertionResult TensorsNear(const Tensor& e, const Tensor& a, double rtol, double atol) {
  return Compare(e, a, rtol, atol);
}
::testing::AssertionResult TensorsEqual(const Tensor& e, const Tensor& a) { return Compare(e, a, 0, 0); }

::testing::AssertionResult Refused(const Status& status, StatusCode code, const std::string& reason) {
  if (status.ok()) return ::testing::AssertionFailure() << "succeeded, expected a refusal containing '" << reason << "'";
  if (status.code() != code || status.message().find(reason) == std::string::npos) {
    return ::testing::AssertionFailure() << "refused with '" << status.ToString() << "', expected code "
                                         << StatusCodeName(code) << " and a message containing '" << reason << "'";
  }
  return ::testing::AssertionSuccess();
}

SixteenBitValues RoundToSixteenBits(const std::vector<float>& values, DataType type, const Shape& shape) {
  SixteenBitValues out;
  out.widened.resize(values.size());
  if (type == DataType::kFloat16) {
    std::vector<Float16> h(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      h[i].bits = FloatToHalf(values[i]);
      out.widened[i] = HalfToFloat(h[i].bits);
    }
    out.tensor = Tensor::FromVector<Float16>(shape, h);
  } else {
    std::vector<BFloat16> b(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      b[i].bits = FloatToBFloat16(values[i]);
      out.widened[i] = BFloat16ToFloat(b[i].bits);
    }
    out.tensor = Tensor::FromVector<BFloat16>(shape, b);
  }
  return out;
}

}  // namespace onnxflow
