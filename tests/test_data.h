// Where the tests find the ONNX backend test data: the @onnx_tests repository (../shared/onnx-tests,
// see WORKSPACE) in the test's runfiles. A test that reads it depends on //tests:test_data (node
// cases and networks) or //tests:test_models (networks only), so Bazel tracks every file it reads.
#pragma once

#include <string>

#include "include/onnxflow/status.h"

namespace onnxflow::testing {

// The data folder (holding node/ and models/), or NotFound saying where it was looked for.
Result<std::string> TestDataDir();

}  // namespace onnxflow::testing
