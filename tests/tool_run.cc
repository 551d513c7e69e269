#include "tests/tool_run.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "tools/model_builder.h"

namespace onnxflow::testing {

ToolOutcome RunCommand(const std::string& command_line, bool with_stderr) {
  const std::string command = command_line + (with_stderr ? " 2>&1" : " 2>/dev/null");
  ToolOutcome o{-1, ""};
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return o;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) o.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

std::string TestTmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

std::string WriteTestFile(const std::string& name, const std::string& bytes) {
  const std::string path = TestTmpDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string WriteAddOneModel() {
  tools::ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {3});
  m.Initializer("one", Tensor::FromVector<float>({1}, {1}));
  m.Node("Add", {"x", "one"}, {"y"});
  m.Output("y", DataType::kFloat, {3});
  return WriteTestFile("add_one.onnx", m.Serialize());
}

}  // namespace onnxflow::testing
