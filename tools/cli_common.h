// What every command-line tool shares: paths as the user typed them, --version, and the input
// shapes run_model and benchmark take (--dim NAME=N, --shape NAME=1x3x224x224).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "include/onnxflow/session.h"

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

// --dim / --shape: every mistake is a Status whose message names the flag and the text, never an
// exception (std::stoll's "stoll" meant nothing).

// A dimension or count from the command line: digits only, at most 2^40 (no tensor is larger);
// `flag` and `text` name it in the message.
Result<int64_t> ParseCount(const std::string& flag, const std::string& text);

struct InputShapes {
  std::map<std::string, int64_t> dims;   // symbolic dim name -> size
  std::map<std::string, Shape> shapes;   // input name -> full shape
};

// Parses --dim NAME=N and --shape NAME=AxBxC (a scalar is NAME=scalar) and checks each name
// against the session: a --dim must name a symbolic dimension of some input, a --shape an input,
// and a --shape must have the input's rank and agree with its fixed dimensions.
Result<InputShapes> ParseInputShapes(const Session& session, const std::vector<std::string>& dims,
                                     const std::vector<std::string>& shapes);

// The shape --fill gives `info`: its --shape, else fixed dims with --dim values for named
// dynamic ones (1 when not given).
Shape FillShape(const ValueInfo& info, const InputShapes& given);

// "1x3x224x224" ("scalar" for rank 0).
std::string ShapeText(const Shape& shape);

// The graph inputs of one run: input NAME from files[NAME], else from `dir`/input_<i>.pb (i counts
// session.inputs()), else filled with the --dim/--shape sizes when `fill`; an input left without
// a value must be optional or unread.
Result<std::vector<NamedValue>> GatherInputs(const Session& session, const InputShapes& shapes,
                                             const std::map<std::string, std::string>& files, const std::string& dir,
                                             bool fill);

// A run's options for --timeout: its deadline `seconds` from now (none when 0).
RunOptions WithTimeout(double seconds);

}  // namespace onnxflow::tools
