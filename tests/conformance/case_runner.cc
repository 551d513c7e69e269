#include "tests/conformance/case_runner.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"

namespace onnxflow::testing {
namespace {

std::vector<std::string> DataSets(const std::string& folder) {
  std::vector<std::string> sets;
  if (DIR* dir = opendir(folder.c_str())) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name.rfind("test_data_set_", 0) == 0) sets.push_back(folder + "/" + name);
    }
    closedir(dir);
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > 300) s = s.substr(0, 297) + "...";
  return s;
}

}  // namespace

CaseResult RunCase(const std::string& folder) {
  CaseResult r;
  auto session = Session::Load(folder + "/model.onnx");
  if (!session.ok()) {
    r.reason = "load: " + OneLine(session.status().ToString());
    return r;
  }
  const auto sets = DataSets(folder);
  if (sets.empty()) {
    r.reason = "no test_data_set_* folder";
    return r;
  }
  for (const std::string& set : sets) {
    std::vector<NamedValue> inputs;
    for (size_t i = 0; i < session->inputs().size(); ++i) {
      const std::string path = set + "/input_" + std::to_string(i) + ".pb";
      if (!Exists(path)) continue;  // an optional input the case leaves out
      auto value = ReadValueFile(path, &session->inputs()[i]);
      if (!value.ok()) {
        r.reason = "input " + std::to_string(i) + ": " + OneLine(value.status().ToString());
        return r;
      }
      inputs.push_back({session->inputs()[i].name, std::move(value).value()});
    }
    auto outputs = session->Run(inputs);
    if (!outputs.ok()) {
      r.reason = "run: " + OneLine(outputs.status().ToString());
      return r;
    }
    for (size_t i = 0; i < outputs->size(); ++i) {
      const std::string path = set + "/output_" + std::to_string(i) + ".pb";
      auto expected = ReadValueFile(path, &session->outputs()[i]);
      if (!expected.ok()) {
        r.reason = "expected output " + std::to_string(i) + ": " + OneLine(expected.status().ToString());
        return r;
      }
      const Comparison c = CompareValues(*expected, (*outputs)[i].value);
      if (!c.match) {
        r.reason = "output " + std::to_string(i) + " ('" + (*outputs)[i].name + "'): " + OneLine(c.mismatch);
        return r;
      }
    }
    const std::string extra = set + "/output_" + std::to_string(outputs->size()) + ".pb";
    if (Exists(extra)) {
      r.reason = "the data set expects more than the model's " + std::to_string(outputs->size()) + " outputs";
      return r;
    }
  }
  r.passed = true;
  return r;
}

}  // namespace onnxflow::testing
