#include "tests/test_data.h"

#include <sys/stat.h>

#include <cstdlib>
#include <vector>

namespace onnxflow::testing {

Result<std::string> TestDataDir() {
  const char* runfiles = std::getenv("TEST_SRCDIR");
  if (runfiles == nullptr) return NotFound("TEST_SRCDIR is not set: run the test through ./bazelw test");
  const std::string root = runfiles;
  // Bazel 4 lays an external repository's runfiles out both ways (legacy_external_runfiles).
  for (const std::string& dir : {root + "/onnx_tests", root + "/onnxflow/external/onnx_tests"}) {
    struct stat st;
    if (stat((dir + "/node").c_str(), &st) == 0 || stat((dir + "/models").c_str(), &st) == 0) return dir;
  }
  return NotFound("no ONNX test data under " + root + "/onnx_tests: is ../shared/onnx-tests beside the checkout?");
}

}  // namespace onnxflow::testing
