// What every command-line tool shares: paths as the user typed them, and --version.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace onnxflow::tools {

// `bazel run` starts a tool inside its runfiles folder and names the folder the user ran it from
// in BUILD_WORKING_DIRECTORY; run directly, the current directory is where the user stands. A
// relative path (read or written) is resolved against that folder; absolute paths and "" pass.
std::string UserPath(const std::string& path);

// A CLI11 transform that applies UserPath to an option's value:
//   app.add_option("--json", json_path)->transform(UserPathArg());
CLI::Validator UserPathArg();

// "--version": prints "<tool> <ONNXFLOW_VERSION_STRING>" and exits 0.
void AddVersionFlag(CLI::App& app, const std::string& tool);

}  // namespace onnxflow::tools
