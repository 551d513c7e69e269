// Runs one ONNX backend test case folder (model.onnx + test_data_set_N/) the way run_model
// --inputs/--check does, so the conformance test and the CLI agree.
#pragma once

#include <string>

namespace onnxflow::testing {

struct CaseResult {
  bool passed = false;
  std::string reason;  // first failure, one line
};

CaseResult RunCase(const std::string& folder);

}  // namespace onnxflow::testing
