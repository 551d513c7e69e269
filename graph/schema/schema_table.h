#pragma once

#include <vector>

#include "graph/schema/schema.h"

namespace onnxflow::graph::schema {

// Every schema of the spec, sorted by (domain, op, since_version).
const std::vector<OpSchema>& AllSchemas();

}  // namespace onnxflow::graph::schema
