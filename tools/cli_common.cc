#include "tools/cli_common.h"

#include <cstdlib>

#include "include/onnxflow/version.h"

namespace onnxflow::tools {

std::string UserPath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const char* base = std::getenv("BUILD_WORKING_DIRECTORY");
  if (base == nullptr || *base == '\0') return path;  // relative to the current directory
  std::string resolved = base;
  if (resolved.back() != '/') resolved += '/';
  return resolved + path;
}

CLI::Validator UserPathArg() {
  return CLI::Validator([](std::string& value) {
    value = UserPath(value);
    return std::string();
  }, "PATH", "UserPath");
}

void AddVersionFlag(CLI::App& app, const std::string& tool) {
  app.set_version_flag("--version", tool + " " + ONNXFLOW_VERSION_STRING);
}

}  // namespace onnxflow::tools
