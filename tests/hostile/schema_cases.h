// Hostile models of issue 23's classes, each with the outcome it must have: the Status code and a
// fragment of the message naming the node and the attribute or input at fault. Used by
// schema_cases_test (in process) and written out as fuzz seeds (write_schema_cases).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"

namespace onnxflow::hostile {

struct SchemaCase {
  std::string name;
  std::string reason;  // why the model is invalid, in the spec's words where it has them
  // Writes whatever the case needs (external files) into `dir`; returns the model's bytes.
  std::function<std::string(const std::string& dir)> make;
  StatusCode code;
  std::vector<std::string> fragments;  // each must occur in the message
  bool at_run = false;                 // refused by the run, not the load
};

std::vector<SchemaCase> SchemaCases();

}  // namespace onnxflow::hostile
