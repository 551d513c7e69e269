// Running a built tool as a user does, for the tests of run_model and benchmark: the command
// line through the shell, its output and exit status; and files in the test's own temp folder.
#pragma once

#include <string>

namespace onnxflow::testing {

struct ToolOutcome {
  int exit_code;       // the exit status, or 128 + the signal that ended the tool
  std::string output;  // stdout, and stderr when asked for
};

ToolOutcome RunCommand(const std::string& command_line, bool with_stderr = true);

// $TEST_TMPDIR (or /tmp outside Bazel).
std::string TestTmpDir();

// Writes `bytes` to TestTmpDir()/name; returns the path.
std::string WriteTestFile(const std::string& name, const std::string& bytes);

// Writes the model y = x + 1 (x, y: float32 [3]) to TestTmpDir()/add_one.onnx; returns its path.
std::string WriteAddOneModel();

}  // namespace onnxflow::testing
