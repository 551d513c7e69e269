// The generated table, as data (see tools/gen_schema/gen_schema.py).
#include "graph/schema/schema_table.h"

namespace onnxflow::graph::schema {

const std::vector<OpSchema>& AllSchemas() {
  static const std::vector<OpSchema>* const table = new std::vector<OpSchema>{
#include "graph/schema/onnx_schemas.inc"
  };
  return *table;
}

}  // namespace onnxflow::graph::schema
