#include "graph/schema/schema.h"

#include <algorithm>
#include <unordered_map>

#include "graph/schema/schema_table.h"

namespace onnxflow::graph::schema {
namespace {

using Index = std::unordered_map<std::string, std::vector<const OpSchema*>>;

std::string Key(const std::string& domain, const std::string& op) { return domain + '\0' + op; }

const Index& SchemaIndex() {
  static const Index* const index = [] {
    auto* i = new Index;
    for (const OpSchema& s : AllSchemas()) (*i)[Key(s.domain, s.op)].push_back(&s);  // sorted by version
    return i;
  }();
  return *index;
}

// Models of IR version 1 and 2 may leave an attribute's type unset; the field that holds the
// value says it (as the ONNX checker reads them).
AttrType TypeOf(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return static_cast<AttrType>(a.type());
  if (a.has_f()) return AttrType::kFloat;
  if (a.has_i()) return AttrType::kInt;
  if (a.has_s()) return AttrType::kString;
  if (a.has_t()) return AttrType::kTensor;
  if (a.has_g()) return AttrType::kGraph;
  if (a.has_sparse_tensor()) return AttrType::kSparseTensor;
  if (a.has_tp()) return AttrType::kTypeProto;
  if (a.floats_size() > 0) return AttrType::kFloats;
  if (a.ints_size() > 0) return AttrType::kInts;
  if (a.strings_size() > 0) return AttrType::kStrings;
  if (a.tensors_size() > 0) return AttrType::kTensors;
  if (a.graphs_size() > 0) return AttrType::kGraphs;
  if (a.sparse_tensors_size() > 0) return AttrType::kSparseTensors;
  if (a.type_protos_size() > 0) return AttrType::kTypeProtos;
  return AttrType::kUndefined;
}

std::string Range(int low, int high) {
  if (high < 0) return std::to_string(low) + " or more";
  if (low == high) return std::to_string(low);
  return std::to_string(low) + " to " + std::to_string(high);
}

std::string Version(const OpSchema& s) { return std::string(s.op) + "-" + std::to_string(s.since_version); }

}  // namespace

const char* AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kFloat: return "FLOAT";
    case AttrType::kInt: return "INT";
    case AttrType::kString: return "STRING";
    case AttrType::kTensor: return "TENSOR";
    case AttrType::kGraph: return "GRAPH";
    case AttrType::kFloats: return "FLOATS";
    case AttrType::kInts: return "INTS";
    case AttrType::kStrings: return "STRINGS";
    case AttrType::kTensors: return "TENSORS";
    case AttrType::kGraphs: return "GRAPHS";
    case AttrType::kSparseTensor: return "SPARSE_TENSOR";
    case AttrType::kSparseTensors: return "SPARSE_TENSORS";
    case AttrType::kTypeProto: return "TYPE_PROTO";
    case AttrType::kTypeProtos: return "TYPE_PROTOS";
    default: return "UNDEFINED";
  }
}

const OpSchema* FindSchema(const std::string& domain, const std::string& op, int opset) {
  const Index& index = SchemaIndex();
  auto it = index.find(Key(domain, op));
  if (it == index.end()) return nullptr;
  const OpSchema* found = nullptr;
  for (const OpSchema* s : it->second) {
    if (s->since_version <= opset && !s->deprecated) found = s;
  }
  return found;
}

Status CheckNode(const onnx::NodeProto& node, const std::string& domain, int opset, const std::string& who) {
  const OpSchema* schema = FindSchema(domain, node.op_type(), opset);
  if (schema == nullptr) return Status::Ok();
  const std::string where = who + ", " + Version(*schema);

  std::vector<const std::string*> seen;
  seen.reserve(node.attribute_size());
  for (const auto& a : node.attribute()) {
    for (const std::string* name : seen) {
      if (*name == a.name()) return InvalidArgument(who + ": attribute '" + a.name() + "' is given twice");
    }
    seen.push_back(&a.name());
    const AttrSchema* spec = nullptr;
    for (const AttrSchema& s : schema->attributes) {
      if (a.name() == s.name) spec = &s;
    }
    if (spec == nullptr) {
      std::string known;
      for (const AttrSchema& s : schema->attributes) known += (known.empty() ? "" : ", ") + std::string(s.name);
      return InvalidArgument(who + ": unknown attribute '" + a.name() + "' (" + Version(*schema) + " has " +
                             (known.empty() ? std::string("none") : known) + ")");
    }
    if (!a.ref_attr_name().empty()) continue;  // a function body's reference, bound when inlined
    const AttrType type = TypeOf(a);
    if (type != spec->type) {
      return InvalidArgument(who + ": attribute '" + a.name() + "' must be " + AttrTypeName(spec->type) + ", not " +
                             AttrTypeName(type));
    }
  }
  for (const AttrSchema& s : schema->attributes) {
    if (!s.required) continue;
    bool given = false;
    for (const std::string* name : seen) given |= *name == s.name;
    if (!given) return InvalidArgument(who + ": required attribute '" + std::string(s.name) + "' is missing");
  }

  const int inputs = node.input_size(), outputs = node.output_size();
  if (inputs < schema->min_inputs || (schema->max_inputs >= 0 && inputs > schema->max_inputs)) {
    return InvalidArgument(where + " takes " + Range(schema->min_inputs, schema->max_inputs) + " inputs, not " +
                           std::to_string(inputs));
  }
  if (outputs < schema->min_outputs || (schema->max_outputs >= 0 && outputs > schema->max_outputs)) {
    return InvalidArgument(where + " has " + Range(schema->min_outputs, schema->max_outputs) + " outputs, not " +
                           std::to_string(outputs));
  }
  for (size_t i = 0; i < schema->inputs.size() && static_cast<int>(i) < inputs; ++i) {
    const FormalSchema& f = schema->inputs[i];
    if (!f.optional && !f.variadic && node.input(static_cast<int>(i)).empty()) {
      return InvalidArgument(who + ": input " + std::to_string(i) + " ('" + f.name + "') is required but empty");
    }
  }
  return CheckValues(*schema, node, who);
}

}  // namespace onnxflow::graph::schema
