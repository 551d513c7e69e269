// Op tests against another runtime's outputs read their cases from folders laid out as ONNX's
// backend tests are (tools/gen_models writes them so):
//
//   <dir>/model.onnx
//   <dir>/test_data_set_<k>/input_<i>.pb   serialized TensorProtos, each named as the graph input it feeds
//   <dir>/test_data_set_<k>/output_<i>.pb  the expected value of graph output i
//
// A whole model runs through a Session (LoadCaseFolder, RunCase); a one-node case runs its node
// through OpTest, the kernel alone (LoadNodeCase, NodeTest). What cannot be read is a test failure
// naming the file. Paths are relative to the test's working directory (its runfiles).
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/session.h"
#include "ops/framework/testing.h"
#include "proto/onnx.pb.h"

namespace onnxflow {

// A model and one test_data_set of it.
struct CaseFolder {
  std::string dir;                   // for messages
  onnx::ModelProto model;
  std::vector<NamedValue> inputs;    // input_0.pb, input_1.pb, ... up to the first missing one
  std::vector<NamedValue> expected;  // per graph output, in order, named as the graph names it
};

CaseFolder LoadCaseFolder(const std::string& dir, int set = 0);

// The expected value of graph output `output`; a test failure and an empty tensor when the case
// has none.
Tensor ExpectedOutput(const CaseFolder& c, const std::string& output);

// `model` on `inputs` in a new Session. Inline, so that only the tests that call it need the
// runtime behind Session (//include/onnxflow); the one-node tests link the kernels alone.
inline Result<std::vector<NamedValue>> RunCase(const onnx::ModelProto& model, const std::vector<NamedValue>& inputs,
                                               const SessionOptions& options = {}) {
  ONNXFLOW_ASSIGN_OR_RETURN(Session session, Session::LoadFromBytes(model.SerializeAsString(), options));
  return session.Run(inputs);
}
inline Result<std::vector<NamedValue>> RunCase(const CaseFolder& c, const SessionOptions& options = {}) {
  return RunCase(c.model, c.inputs, options);
}

// A one-node case as its kernel sees it: graph node 0, its inputs and expected outputs by the
// node's input and output index, undefined where the node leaves one out (the files hold only
// the given ones, in order).
struct NodeCase {
  std::string dir;
  onnx::NodeProto node;
  int opset = 1;  // the model's import of the node's domain
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;
};

NodeCase LoadNodeCase(const std::string& dir, int set = 0);

// An OpTest of `c`'s node (op, domain, attributes; outputs as the node has them, absent ones
// absent) on `inputs`, an undefined tensor an absent input.
OpTest NodeTest(const NodeCase& c, const std::vector<Tensor>& inputs);
inline OpTest NodeTest(const NodeCase& c) { return NodeTest(c, c.inputs); }

// `actual` against `expected` by CompareTensors' rule (rtol = atol = 0: exactly). A failure names
// `what` (say the case and the output), the first mismatch, and for float types the worst element
// (the one farthest outside the tolerance) and the largest absolute error.
::testing::AssertionResult CaseTensorNear(const std::string& what, const Tensor& expected, const Tensor& actual,
                                          double rtol, double atol);

// Every expected output of `c` against the output of that name in `actual`.
::testing::AssertionResult OutputsNear(const CaseFolder& c, const std::vector<NamedValue>& actual, double rtol,
                                       double atol);

}  // namespace onnxflow
