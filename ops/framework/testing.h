// Kernel unit tests: build one node, run its kernel on given inputs, get the outputs.
//
//   OpTest test("Add", 14);
//   test.Input(Tensor::FromVector<float>({2}, {1, 2})).Input(...);
//   auto out = test.Run(RegisterElementwiseKernels);  // Result<std::vector<Value>>
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/registry.h"
#include "proto/onnx.pb.h"

namespace onnxflow {

class OpTest {
 public:
  OpTest(std::string op_type, int opset, std::string domain = kOnnxDomain);

  OpTest& Input(Value value);
  OpTest& AbsentInput();            // an optional input given as ""
  OpTest& Outputs(int count);       // default 1
  OpTest& Attr(const std::string& name, int64_t v);
  OpTest& Attr(const std::string& name, float v);
  OpTest& Attr(const std::string& name, const std::string& v);
  OpTest& Attr(const std::string& name, const std::vector<int64_t>& v);
  OpTest& Attr(const std::string& name, const std::vector<float>& v);
  OpTest& Attr(const std::string& name, const std::vector<std::string>& v);
  OpTest& Attr(const std::string& name, const Tensor& v);
  // Marks input i as a load-time constant (initializer), as kernels that pre-pack weights see it.
  OpTest& ConstantInput(int i);
  OpTest& Threads(int threads);
  OpTest& OutputTypes(std::vector<DataType> types);  // as the model declares them (KernelInfo::output_type)
  // Lets the kernel write into input i, as the plan lets a value's last reader
  // (KernelContext::ReusableInput); the kernel gets a copy that only the run holds.
  OpTest& ReusableInput(int i);
  // After Run: whether output `output` took over input `input`'s storage.
  bool WroteInto(int input, int output) const;

  onnx::NodeProto& node() { return node_; }

  // Registers kernels with `register_kernels`, builds this node's kernel, runs it.
  Result<std::vector<Value>> Run(const std::function<Status(KernelRegistry&)>& register_kernels);

 private:
  onnx::NodeProto node_;
  int opset_;
  std::vector<Value> inputs_;
  std::vector<bool> constant_;
  std::vector<char> reusable_;
  std::vector<const void*> input_data_;   // of the last Run, per input
  std::vector<const void*> output_data_;  // of the last Run, per output
  int outputs_ = 1;
  int threads_ = 1;
  std::vector<DataType> output_types_;
};

// A refusal for the stated reason: not OK, with `code`, and a message that contains `reason` (the
// attribute, input or limit it names). Error-path tests use this instead of !ok(), which also
// passes when the kernel fails for some other reason.
::testing::AssertionResult Refused(const Status& status, StatusCode code, const std::string& reason);
template <typename T>
::testing::AssertionResult Refused(const Result<T>& result, StatusCode code, const std::string& reason) {
  if (result.ok()) return ::testing::AssertionFailure() << "succeeded, expected a refusal containing '" << reason << "'";
  return Refused(result.status(), code, reason);
}

// `values` rounded to float16 or bfloat16 (`type`): the 16-bit tensor of `shape` a half model holds,
// and the floats it stands for, which a kernel widening it must compute with.
struct SixteenBitValues {
  Tensor tensor;
  std::vector<float> widened;
};
SixteenBitValues RoundToSixteenBits(const std::vector<float>& values, DataType type, const Shape& shape);

// Element-wise comparison with rtol/atol (NaN equals NaN); the message names the first mismatch.
::testing::AssertionResult TensorsNear(const Tensor& expected, const Tensor& actual, double rtol = 1e-5,
                                       double atol = 1e-6);
::testing::AssertionResult TensorsEqual(const Tensor& expected, const Tensor& actual);

}  // namespace onnxflow
