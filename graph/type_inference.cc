#include "graph/type_inference.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/schema/schema.h"
#include "ops/framework/domains.h"

namespace onnxflow::graph {
namespace {

// The spec's names of tensor element types ("tensor(float)" -> float), by DataType value.
const char* const kTypeNames[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
                                  "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128",
                                  "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
                                  "uint4", "int4", "float4e2m1", "float8e8m0", "uint2", "int2"};
constexpr int kTypeCount = sizeof(kTypeNames) / sizeof(kTypeNames[0]);

std::string TypeName(DataType t) {
  const int i = static_cast<int>(t);
  return i > 0 && i < kTypeCount ? kTypeNames[i] : "type " + std::to_string(i);
}

// "tensor(float)" -> kFloat; anything else (a sequence, a map, a type variable) -> kUndefined.
DataType TensorType(const char* spec) {
  if (std::strncmp(spec, "tensor(", 7) != 0) return DataType::kUndefined;
  const std::string name(spec + 7, std::strlen(spec) - 8);
  for (int i = 1; i < kTypeCount; ++i) {
    if (name == kTypeNames[i]) return static_cast<DataType>(i);
  }
  return DataType::kUndefined;
}

// com.microsoft ops have no schema table here (they pass unchecked), nor do the normalizations
// ONNX Runtime registers in the default domain below opset 17 (LayerNormalization,
// SimplifiedLayerNormalization) and the experimental ops ONNX removed at opset 10; but the passes that need types see through the common ones: by
// ONNX Runtime's contrib schemas, each output listed takes the type of the input named (or the one
// type its schema fixes: Unique's int64 indices and counts, MatMulInteger16's int32), and a
// normalization's mean and inverse deviation (outputs 1 and 2) are float, or the input's type with
// stash_type 0. Without this, a float16 model with no value_info for them kept everything after
// such a node out of the float region.
void InferContribOutputs(const onnx::NodeProto& node, bool microsoft, const std::vector<DataType>& in,
                         std::vector<DataType>* out) {
  struct Rule {
    int type_of_input;         // the input whose type the outputs take
    std::vector<int> outputs;  // which outputs
    bool norm_stats = false;   // outputs 1 and 2 are a normalization's statistics
    bool default_domain = false;  // also registered in the default domain below opset 17
    std::vector<std::pair<int, DataType>> fixed = {};  // outputs of one type whatever the inputs
  };
  static const std::unordered_map<std::string, Rule> kRules = {
      {"Attention", {0, {0, 1}}}, {"BiasAdd", {0, {0}}}, {"BiasGelu", {0, {0}}}, {"BiasSoftmax", {0, {0}}},
      {"FastGelu", {0, {0}}}, {"FusedConv", {0, {0}}}, {"FusedGemm", {0, {0}}}, {"FusedMatMul", {0, {0}}},
      {"GatherBlockQuantized", {2, {0}}}, {"Gelu", {0, {0}}}, {"GroupQueryAttention", {0, {0, 1, 2}}},
      {"Inverse", {0, {0}}}, {"LayerNormalization", {0, {0}, true, true}}, {"MatMulBnb4", {0, {0}}},
      {"MatMulIntegerToFloat", {2, {0}}}, {"MatMulNBits", {0, {0}}}, {"MultiHeadAttention", {0, {0, 1, 2}}},
      {"NhwcMaxPool", {0, {0}}}, {"QuickGelu", {0, {0}}}, {"RotaryEmbedding", {0, {0}}},
      {"SimplifiedLayerNormalization", {0, {0}, true, true}}, {"SkipLayerNormalization", {0, {0, 3}, true}},
      {"SkipSimplifiedLayerNormalization", {0, {0, 3}, true}}, {"TransposeMatMul", {0, {0}}}, {"Trilu", {0, {0}}},
      {"GridSample", {0, {0}}}, {"CDist", {0, {0}}},
      // The version-1 ops converters wrote before ONNX had them (ops/contrib/legacy_ms.cc).
      {"ExpandDims", {0, {0}}}, {"Pad", {0, {0}}}, {"GatherND", {0, {0}}}, {"CropAndResize", {0, {0}}},
      {"Unique", {0, {0}, false, false, {{1, DataType::kInt64}, {2, DataType::kInt64}}}},
      // The experimental ops of opsets 1-9 (ops/legacy, DynamicSlice): the output is the input's type.
      {"Affine", {0, {0}, false, true}}, {"Crop", {0, {0}, false, true}}, {"DynamicSlice", {0, {0}, false, true}},
      {"ImageScaler", {0, {0}, false, true}}, {"ParametricSoftplus", {0, {0}, false, true}},
      {"Scale", {0, {0}, false, true}}, {"ScaledTanh", {0, {0}, false, true}},
      {"ThresholdedRelu", {0, {0}, false, true}}, {"MeanVarianceNormalization", {0, {0}, false, true}}};
  // MatMulInteger16's int32 is uint32 when both operands are uint16: known once both types are,
  // or once one of them is int16.
  if (microsoft && node.op_type() == "MatMulInteger16" && in.size() >= 2 && !out->empty()) {
    if (in[0] == DataType::kInt16 || in[1] == DataType::kInt16) (*out)[0] = DataType::kInt32;
    if (in[0] == DataType::kUint16 && in[1] == DataType::kUint16) (*out)[0] = DataType::kUint32;
    return;
  }
  auto it = kRules.find(node.op_type());
  if (it == kRules.end() || (!microsoft && !it->second.default_domain)) return;
  const Rule& rule = it->second;
  for (const auto& [o, type] : rule.fixed) {
    if (o < static_cast<int>(out->size())) (*out)[o] = type;
  }
  if (rule.type_of_input >= static_cast<int>(in.size())) return;
  for (int o : rule.outputs) {
    if (o < static_cast<int>(out->size())) (*out)[o] = in[rule.type_of_input];
  }
  if (!rule.norm_stats) return;
  int64_t stash = 1;
  for (const auto& a : node.attribute()) {
    if (a.name() == "stash_type") stash = a.i();
  }
  const DataType stats = stash == 1 ? DataType::kFloat : in[0];
  for (int o = 1; o <= 2 && o < static_cast<int>(out->size()); ++o) (*out)[o] = stats;
}

// One graph's names: the element types known, and every name it defines (for shadowing).
struct Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, DataType> types;
  std::unordered_set<std::string> names;

  DataType Type(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      auto it = s->types.find(name);
      if (it != s->types.end()) return it->second;
      if (s->names.count(name)) return DataType::kUndefined;
    }
    return DataType::kUndefined;
  }
  bool VisibleOutside(const std::string& name) const {
    for (const Scope* s = parent; s != nullptr; s = s->parent) {
      if (s->names.count(name)) return true;
    }
    return false;
  }
};

DataType Declared(const ValueInfo& v) { return v.kind == Value::Kind::kTensor ? v.dtype : DataType::kUndefined; }

class Inference {
 public:
  // Infers `g` within `parent`; `inputs` gives the types the enclosing node feeds the graph's
  // inputs (kUndefined: as declared). Returns the types of its outputs.
  Result<std::vector<DataType>> InferGraph(Graph& g, const Scope* parent, const std::vector<DataType>& inputs,
                                           const std::string& where) {
    Scope scope;
    scope.parent = parent;
    auto define = [&](const std::string& name, DataType type) -> Status {
      if (name.empty()) return Status::Ok();
      if (parent != nullptr && scope.VisibleOutside(name)) {
        return InvalidArgument(where + ": value '" + name + "' is already defined in an enclosing graph (no shadowing)");
      }
      scope.names.insert(name);
      if (type != DataType::kUndefined) scope.types[name] = type;
      return Status::Ok();
    };
    for (const auto& [name, tensor] : g.constants) ONNXFLOW_RETURN_IF_ERROR(define(name, tensor.dtype()));
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const ValueInfo& in = g.inputs[i];
      const DataType given = i < inputs.size() ? inputs[i] : DataType::kUndefined;
      const DataType declared = Declared(in);
      if (given != DataType::kUndefined && declared != DataType::kUndefined && given != declared) {
        return InvalidArgument(where + ": input '" + in.name + "' is declared " + TypeName(declared) +
                               " but is given " + TypeName(given));
      }
      if (g.constants.count(in.name)) continue;
      ONNXFLOW_RETURN_IF_ERROR(define(in.name, declared != DataType::kUndefined ? declared : given));
    }
    for (const Node& node : g.nodes) {
      for (const auto& out : node.proto->output()) ONNXFLOW_RETURN_IF_ERROR(define(out, DataType::kUndefined));
    }
    for (const Node& node : g.nodes) {
      ONNXFLOW_ASSIGN_OR_RETURN(std::vector<DataType> outs, InferNode(node, scope));
      for (int i = 0; i < node.proto->output_size() && i < static_cast<int>(outs.size()); ++i) {
        if (!node.proto->output(i).empty() && outs[i] != DataType::kUndefined) scope.types[node.proto->output(i)] = outs[i];
      }
    }
    // What the passes read (KnownType): every value whose element type follows, the enclosing
    // scopes' values this graph reads included (a merged decoder's branches read the caches and
    // the attention mask from the main graph; unknown there, the attention fusion declined them).
    for (const auto& [name, type] : scope.types) g.known_types.emplace(name, type);
    for (const auto& name : g.outer_names) {
      const DataType type = scope.Type(name);
      if (type != DataType::kUndefined) g.known_types.emplace(name, type);
    }
    std::vector<DataType> result;
    for (const ValueInfo& out : g.outputs) {
      const DataType produced = scope.Type(out.name), declared = Declared(out);
      if (produced != DataType::kUndefined && declared != DataType::kUndefined && produced != declared) {
        return InvalidArgument(where + ": output '" + out.name + "' is declared " + TypeName(declared) +
                               " but the graph produces " + TypeName(produced));
      }
      // A declared output type the nodes do not fix (a constraint no input binds: LinearAttention's
      // state without a past) is known too: the kernel reads it (KernelInfo::output_type).
      if (produced == DataType::kUndefined && declared != DataType::kUndefined) g.known_types.emplace(out.name, declared);
      result.push_back(produced != DataType::kUndefined ? produced : declared);
    }
    return result;
  }

 private:
  static std::string Who(const Node& node) { return node.Describe(); }

  Result<std::vector<DataType>> Sub(const Node& node, const std::string& attribute, const Scope& scope,
                                    const std::vector<DataType>& inputs) {
    auto it = node.subgraphs.find(attribute);
    if (it == node.subgraphs.end()) return std::vector<DataType>{};
    return InferGraph(*it->second, &scope, inputs, Who(node) + ", attribute '" + attribute + "'");
  }

  Result<std::vector<DataType>> InferNode(const Node& node, const Scope& scope) {
    const auto& proto = *node.proto;
    std::vector<DataType> in;
    for (const auto& name : proto.input()) in.push_back(name.empty() ? DataType::kUndefined : scope.Type(name));
    const int outputs = proto.output_size();
    if (node.domain.empty() && node.op_type() == "If" && node.subgraphs.size() == 2) return InferIf(node, scope);
    if (node.domain.empty() && node.op_type() == "Loop" && node.subgraphs.count("body")) return InferLoop(node, scope, in);
    if (node.domain.empty() && node.op_type() == "Scan" && node.subgraphs.count("body")) return InferScan(node, scope, in);
    for (const auto& [attribute, sub] : node.subgraphs) {
      ONNXFLOW_RETURN_IF_ERROR(InferGraph(*sub, &scope, {}, Who(node) + ", attribute '" + attribute + "'").status());
    }
    std::vector<DataType> out(outputs, DataType::kUndefined);
    const schema::OpSchema* s = schema::FindSchema(node.domain, node.op_type(), node.opset);
    if (s == nullptr) {
      if (node.domain == kMsDomain || node.domain.empty()) InferContribOutputs(proto, node.domain == kMsDomain, in, &out);
      return out;
    }

    // Bind each type variable from the inputs, refusing types the schema does not allow.
    std::unordered_map<std::string, std::pair<DataType, int>> bound;  // variable -> type, input index
    for (int i = 0; i < static_cast<int>(in.size()); ++i) {
      if (in[i] == DataType::kUndefined || s->inputs.empty()) continue;
      const schema::FormalSchema& f = s->inputs[std::min<size_t>(i, s->inputs.size() - 1)];
      if (f.heterogeneous) continue;
      const DataType fixed = TensorType(f.type);
      if (fixed != DataType::kUndefined) {
        if (fixed != in[i]) {
          return InvalidArgument(Who(node) + ": input " + std::to_string(i) + " ('" + proto.input(i) + "') is " +
                                 TypeName(in[i]) + " but " + s->op + "-" + std::to_string(s->since_version) +
                                 " takes " + f.type);
        }
        continue;
      }
      const schema::TypeConstraint* constraint = nullptr;
      for (const auto& c : s->type_constraints) {
        if (std::strcmp(c.name, f.type) == 0) constraint = &c;
      }
      if (constraint == nullptr) continue;
      bool has_tensors = false, allowed = false;
      for (const char* t : constraint->allowed) {
        const DataType a = TensorType(t);
        has_tensors |= a != DataType::kUndefined;
        allowed |= a == in[i];
      }
      if (has_tensors && !allowed) {
        return InvalidArgument(Who(node) + ": input " + std::to_string(i) + " ('" + proto.input(i) + "') is " +
                               TypeName(in[i]) + ", which " + s->op + "-" + std::to_string(s->since_version) +
                               " does not allow for " + f.type);
      }
      auto [it, fresh] = bound.emplace(f.type, std::make_pair(in[i], i));
      if (!fresh && it->second.first != in[i]) {
        return InvalidArgument(Who(node) + ": input " + std::to_string(i) + " ('" + proto.input(i) + "') is " +
                               TypeName(in[i]) + " but input " + std::to_string(it->second.second) + " ('" +
                               proto.input(it->second.second) + "') is " + TypeName(it->second.first) +
                               " (both of type " + f.type + ")");
      }
    }
    for (int i = 0; i < outputs && !s->outputs.empty(); ++i) {
      const schema::FormalSchema& f = s->outputs[std::min<size_t>(i, s->outputs.size() - 1)];
      if (f.heterogeneous) continue;
      const DataType fixed = TensorType(f.type);
      if (fixed != DataType::kUndefined) {
        out[i] = fixed;
        continue;
      }
      auto it = bound.find(f.type);
      if (it != bound.end()) {
        // Only when the variable admits tensors alone (an output typed T of seq(T) stays unknown).
        out[i] = it->second.first;
        continue;
      }
      // A variable that admits one type alone (Shape's T1: tensor(int64)) fixes the output's.
      for (const auto& c : s->type_constraints) {
        if (std::strcmp(c.name, f.type) == 0 && c.allowed.size() == 1) out[i] = TensorType(c.allowed[0]);
      }
    }
    if (outputs > 0 && out[0] == DataType::kUndefined && node.domain.empty()) out[0] = AttributeType(proto);
    return out;
  }

  // The output type that an attribute names (the schemas say only "T").
  static DataType AttributeType(const onnx::NodeProto& proto) {
    const std::string& op = proto.op_type();
    for (const auto& a : proto.attribute()) {
      if ((op == "Cast" && a.name() == "to") || (a.name() == "dtype" && op.rfind("Random", 0) == 0)) {
        return IsValidDataType(static_cast<int32_t>(a.i())) ? static_cast<DataType>(a.i()) : DataType::kUndefined;
      }
      if ((op == "ConstantOfShape" || op == "Constant") && a.name() == "value" && a.has_t()) {
        return IsValidDataType(a.t().data_type()) ? static_cast<DataType>(a.t().data_type()) : DataType::kUndefined;
      }
      if (op == "Constant" && (a.name() == "value_float" || a.name() == "value_floats")) return DataType::kFloat;
      if (op == "Constant" && (a.name() == "value_int" || a.name() == "value_ints")) return DataType::kInt64;
    }
    // ConstantOfShape's value defaults to a float zero; RandomNormal and RandomUniform's dtype to float.
    if (op == "ConstantOfShape" || op == "RandomNormal" || op == "RandomUniform") return DataType::kFloat;
    return DataType::kUndefined;
  }

  Result<std::vector<DataType>> InferIf(const Node& node, const Scope& scope) {
    const int outputs = node.proto->output_size();
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<DataType> then_types, Sub(node, "then_branch", scope, {}));
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<DataType> else_types, Sub(node, "else_branch", scope, {}));
    for (const auto& [branch, types] : {std::pair<const char*, const std::vector<DataType>*>{"then_branch", &then_types},
                                        {"else_branch", &else_types}}) {
      if (static_cast<int>(types->size()) != outputs) {
        return InvalidArgument(Who(node) + ": attribute '" + branch + "' returns " + std::to_string(types->size()) +
                               " outputs; the node has " + std::to_string(outputs));
      }
    }
    std::vector<DataType> out(outputs);
    for (int k = 0; k < outputs; ++k) {
      if (then_types[k] != DataType::kUndefined && else_types[k] != DataType::kUndefined &&
          then_types[k] != else_types[k]) {
        return InvalidArgument(Who(node) + ": output " + std::to_string(k) + " is " + TypeName(then_types[k]) +
                               " in attribute 'then_branch' but " + TypeName(else_types[k]) +
                               " in attribute 'else_branch'");
      }
      out[k] = then_types[k] != DataType::kUndefined ? then_types[k] : else_types[k];
    }
    return out;
  }

  Result<std::vector<DataType>> InferLoop(const Node& node, const Scope& scope, const std::vector<DataType>& in) {
    Graph& body = *node.subgraphs.at("body");
    const int carried = static_cast<int>(in.size()) - 2;
    const int outputs = node.proto->output_size();
    if (carried < 0 || static_cast<int>(body.inputs.size()) != carried + 2) {
      return InvalidArgument(Who(node) + ": attribute 'body' takes " + std::to_string(body.inputs.size()) +
                             " inputs; with " + std::to_string(std::max(carried, 0)) + " loop-carried values it must take " +
                             std::to_string(std::max(carried, 0) + 2));
    }
    if (static_cast<int>(body.outputs.size()) != 1 + outputs || outputs < carried) {
      return InvalidArgument(Who(node) + ": attribute 'body' returns " + std::to_string(body.outputs.size()) +
                             " outputs; the node has " + std::to_string(outputs) + " outputs, so it must return " +
                             std::to_string(1 + outputs) + " (the condition first) and at least " +
                             std::to_string(1 + carried));
    }
    std::vector<DataType> given = {DataType::kInt64, DataType::kBool};
    for (int j = 0; j < carried; ++j) given.push_back(in[2 + j]);
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<DataType> body_out,
                              InferGraph(body, &scope, given, Who(node) + ", attribute 'body'"));
    if (body_out[0] != DataType::kUndefined && body_out[0] != DataType::kBool) {
      return InvalidArgument(Who(node) + ": attribute 'body' returns its condition as " + TypeName(body_out[0]) +
                             ", not bool");
    }
    std::vector<DataType> out(outputs);
    for (int k = 0; k < outputs; ++k) out[k] = body_out[1 + k];
    for (int j = 0; j < carried; ++j) {
      const DataType before = Declared(body.inputs[2 + j]) != DataType::kUndefined ? Declared(body.inputs[2 + j])
                                                                                   : in[2 + j];
      if (before != DataType::kUndefined && out[j] != DataType::kUndefined && before != out[j]) {
        return InvalidArgument(Who(node) + ": loop-carried value " + std::to_string(j) + " ('" + body.inputs[2 + j].name +
                               "') enters attribute 'body' as " + TypeName(before) + " but leaves it as " +
                               TypeName(out[j]));
      }
      if (out[j] == DataType::kUndefined) out[j] = before;
    }
    return out;
  }

  Result<std::vector<DataType>> InferScan(const Node& node, const Scope& scope, const std::vector<DataType>& in) {
    Graph& body = *node.subgraphs.at("body");
    int64_t scans = 0;
    for (const auto& a : node.proto->attribute()) {
      if (a.name() == "num_scan_inputs") scans = a.i();
    }
    // Scan-8 takes sequence_lens first; its body sees the rest.
    const int skip = node.opset < 9 ? 1 : 0;
    const int node_inputs = static_cast<int>(in.size()) - skip;
    const int state = node_inputs - static_cast<int>(scans);
    const int outputs = node.proto->output_size();
    if (static_cast<int>(body.inputs.size()) != node_inputs) {
      return InvalidArgument(Who(node) + ": attribute 'body' takes " + std::to_string(body.inputs.size()) +
                             " inputs; the node gives it " + std::to_string(node_inputs));
    }
    if (static_cast<int>(body.outputs.size()) != outputs || outputs < state) {
      return InvalidArgument(Who(node) + ": attribute 'body' returns " + std::to_string(body.outputs.size()) +
                             " outputs; the node has " + std::to_string(outputs));
    }
    std::vector<DataType> given(in.begin() + skip, in.end());
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<DataType> body_out,
                              InferGraph(body, &scope, given, Who(node) + ", attribute 'body'"));
    for (int j = 0; j < state; ++j) {
      const DataType before =
          Declared(body.inputs[j]) != DataType::kUndefined ? Declared(body.inputs[j]) : given[j];
      if (before != DataType::kUndefined && body_out[j] != DataType::kUndefined && before != body_out[j]) {
        return InvalidArgument(Who(node) + ": state value " + std::to_string(j) + " ('" + body.inputs[j].name +
                               "') enters attribute 'body' as " + TypeName(before) + " but leaves it as " +
                               TypeName(body_out[j]));
      }
    }
    return body_out;
  }
};

}  // namespace

Status InferTypes(Graph* main) {
  Inference inference;
  return inference.InferGraph(*main, nullptr, {}, main->name.empty() ? "graph" : "graph '" + main->name + "'").status();
}

}  // namespace onnxflow::graph
