#include "tools/cli_common.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "include/onnxflow/io.h"
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

namespace {
constexpr int64_t kMaxCount = int64_t{1} << 40;

bool Split(const std::string& text, std::string* key, std::string* value) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  *key = text.substr(0, eq);
  *value = text.substr(eq + 1);
  return true;
}
}  // namespace

Result<int64_t> ParseCount(const std::string& flag, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument(flag + ": '" + text + "' is not a non-negative whole number");
  }
  // Checked digit by digit: the value stays below 2^40 before each multiply, so it cannot overflow.
  int64_t value = 0;
  for (char c : text) {
    value = value * 10 + (c - '0');
    if (value > kMaxCount) {
      return InvalidArgument(flag + ": " + text + " is too large (at most " + std::to_string(kMaxCount) + ")");
    }
  }
  return value;
}

std::string ShapeText(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

Result<InputShapes> ParseInputShapes(const Session& session, const std::vector<std::string>& dims,
                                     const std::vector<std::string>& shapes) {
  InputShapes out;
  std::map<std::string, bool> symbols;
  for (const ValueInfo& info : session.inputs()) {
    for (const auto& name : info.dim_names) {
      if (!name.empty()) symbols[name] = true;
    }
  }
  for (const auto& d : dims) {
    std::string name, value;
    if (!Split(d, &name, &value)) return InvalidArgument("--dim expects NAME=N, got '" + d + "'");
    if (!symbols.count(name)) {
      std::string known;
      for (const auto& [s, unused] : symbols) known += (known.empty() ? "" : ", ") + s;
      return InvalidArgument("--dim " + d + ": no input has a dimension named '" + name + "' (named dimensions: " +
                             (known.empty() ? "none" : known) + ")");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(out.dims[name], ParseCount("--dim " + name, value));
  }
  for (const auto& s : shapes) {
    std::string name, text;
    if (!Split(s, &name, &text)) return InvalidArgument("--shape expects NAME=1x3x224x224, got '" + s + "'");
    const ValueInfo* info = nullptr;
    for (const ValueInfo& i : session.inputs()) {
      if (i.name == name) info = &i;
    }
    if (info == nullptr) return InvalidArgument("--shape " + s + ": the model has no input named '" + name + "'");
    Shape shape;
    if (text != "scalar") {
      size_t begin = 0;
      while (true) {
        const size_t x = text.find('x', begin);
        ONNXFLOW_ASSIGN_OR_RETURN(int64_t d, ParseCount("--shape " + name, text.substr(begin, x - begin)));
        shape.push_back(d);
        if (x == std::string::npos) break;
        begin = x + 1;
      }
    }
    if (info->has_shape) {
      if (shape.size() != info->shape.size()) {
        return InvalidArgument("--shape " + s + ": input '" + name + "' has rank " + std::to_string(info->shape.size()) +
                               ", not " + std::to_string(shape.size()));
      }
      for (size_t d = 0; d < shape.size(); ++d) {
        if (info->shape[d] >= 0 && info->shape[d] != shape[d]) {
          return InvalidArgument("--shape " + s + ": dimension " + std::to_string(d) + " of input '" + name +
                                 "' is fixed at " + std::to_string(info->shape[d]));
        }
      }
    }
    out.shapes[name] = std::move(shape);
  }
  return out;
}

Shape FillShape(const ValueInfo& info, const InputShapes& given) {
  auto it = given.shapes.find(info.name);
  if (it != given.shapes.end()) return it->second;
  Shape shape;
  for (size_t d = 0; d < info.shape.size(); ++d) {
    auto dim = given.dims.find(info.dim_names[d]);
    shape.push_back(info.shape[d] >= 0 ? info.shape[d] : dim != given.dims.end() ? dim->second : 1);
  }
  return shape;
}

RunOptions WithTimeout(double seconds) {
  using Clock = std::chrono::steady_clock;
  RunOptions options;
  if (seconds > 0) {
    options.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  return options;
}

Result<std::vector<NamedValue>> GatherInputs(const Session& session, const InputShapes& shapes,
                                             const std::map<std::string, std::string>& files, const std::string& dir,
                                             bool fill) {
  std::vector<NamedValue> inputs;
  for (size_t i = 0; i < session.inputs().size(); ++i) {
    const ValueInfo& info = session.inputs()[i];
    std::string path;
    if (files.count(info.name)) {
      path = files.at(info.name);
    } else if (!dir.empty()) {
      path = dir + "/input_" + std::to_string(i) + ".pb";
      // A test set written for a model before ONNX Runtime saved it has no file for an input
      // that ONNX Runtime's folding left unread.
      if (info.unread && !std::filesystem::exists(path)) path.clear();
    }
    if (!path.empty()) {
      auto value = ReadValueFile(path, &info);
      if (!value.ok()) return InvalidArgument("input '" + info.name + "': " + value.status().message());
      inputs.push_back({info.name, std::move(value).value()});
    } else if (fill) {
      if (info.kind != Value::Kind::kTensor) {
        return InvalidArgument("--fill cannot make a value for non-tensor input '" + info.name + "'");
      }
      auto t = FillTensor(info.dtype, FillShape(info, shapes));
      if (!t.ok()) return InvalidArgument("input '" + info.name + "': " + t.status().message());
      inputs.push_back({info.name, std::move(t).value()});
    } else if (!info.optional && !info.unread) {
      return InvalidArgument("input '" + info.name + "' was not given (use --input, --inputs or --fill)");
    }
  }
  return inputs;
}

}  // namespace onnxflow::tools
