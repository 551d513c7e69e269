// The operator schema table (issue 23): for every (domain, op, version) of the ONNX spec, the
// attributes (name, type, required, default), the input and output counts and the type
// constraints, generated from the spec's changelogs by tools/gen_schema/gen_schema.py into
// onnx_schemas.inc. Every node is checked against it at load, before any kernel is created, so
// kernels read attributes that are known to be well typed. Ops the table does not list (other
// domains: com.microsoft, com.onnxflow) pass unchecked.
#pragma once

#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "proto/onnx.pb.h"

namespace onnxflow::graph::schema {

// The values of onnx::AttributeProto::AttributeType.
enum class AttrType {
  kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5, kFloats = 6, kInts = 7,
  kStrings = 8, kTensors = 9, kGraphs = 10, kSparseTensor = 11, kSparseTensors = 12, kTypeProto = 13,
  kTypeProtos = 14,
};
const char* AttrTypeName(AttrType type);

struct AttrSchema {
  const char* name;
  AttrType type;
  bool required;
  const char* default_value;  // as the spec writes it; "" when none
};

struct FormalSchema {
  const char* name;
  bool optional;
  bool variadic;
  bool heterogeneous;  // a variadic formal whose values may differ in type (Loop, Scan, If)
  const char* type;  // a type constraint's name ("T") or a type ("tensor(int64)")
};

struct TypeConstraint {
  const char* name;
  std::vector<const char*> allowed;  // "tensor(float)", "seq(tensor(int64))", ...
};

struct OpSchema {
  const char* domain;
  const char* op;
  int since_version;
  std::vector<AttrSchema> attributes;
  int min_inputs, max_inputs;  // max -1: variadic
  std::vector<FormalSchema> inputs;
  int min_outputs, max_outputs;
  std::vector<FormalSchema> outputs;
  std::vector<TypeConstraint> type_constraints;
  // The spec marks this version deprecated and lists nothing of it (Scatter-11, Upsample-10,
  // GroupNormalization-18, ...): FindSchema answers with the version before it, if any.
  bool deprecated = false;
};

// The schema in force for `op` of `domain` (normalized: "" for ai.onnx) at `opset`, or null when
// the table has none. A deprecated version is skipped: runtimes (this one included) keep running
// the op as last specified, so a node is checked against that version, or not at all when the op
// was deprecated on introduction (GroupNormalization-18).
const OpSchema* FindSchema(const std::string& domain, const std::string& op, int opset);

// Refuses the node, with one message naming `who` (the node and its op) and the attribute or
// input at fault, when it breaks its schema: an unknown, duplicated, missing or mistyped
// attribute, a value the spec does not allow, too few or too many inputs or outputs.
Status CheckNode(const onnx::NodeProto& node, const std::string& domain, int opset, const std::string& who);

// The value restrictions the spec states in prose (value_rules.cc); called by CheckNode once the
// attributes are known to be well typed.
Status CheckValues(const OpSchema& schema, const onnx::NodeProto& node, const std::string& who);

}  // namespace onnxflow::graph::schema
