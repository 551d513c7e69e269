#include "graph/functions.h"

#include <map>
#include <string>

namespace onnxflow::graph {
namespace {

using FunctionKey = std::pair<std::string, std::string>;  // (normalized domain, name)

void RenameInGraph(onnx::GraphProto* g, const std::map<std::string, std::string>& rename);

void RenameInNode(onnx::NodeProto* n, const std::map<std::string, std::string>& rename) {
  for (auto& in : *n->mutable_input()) {
    auto it = rename.find(in);
    if (it != rename.end()) in = it->second;
  }
  for (auto& out : *n->mutable_output()) {
    auto it = rename.find(out);
    if (it != rename.end()) out = it->second;
  }
  for (auto& a : *n->mutable_attribute()) {
    if (a.has_g()) RenameInGraph(a.mutable_g(), rename);
    for (auto& sub : *a.mutable_graphs()) RenameInGraph(&sub, rename);
  }
}

// Subgraphs of a function body read the body's values by name: rename those references too.
void RenameInGraph(onnx::GraphProto* g, const std::map<std::string, std::string>& rename) {
  for (auto& n : *g->mutable_node()) RenameInNode(&n, rename);
  for (auto& out : *g->mutable_output()) {
    auto it = rename.find(out.name());
    if (it != rename.end()) out.set_name(it->second);
  }
}

// Binds attribute references (ref_attr_name) in a body node, recursively into its subgraphs.
void BindAttributes(onnx::NodeProto* n, const onnx::NodeProto& caller, const onnx::FunctionProto& fn);

void BindAttributesInGraph(onnx::GraphProto* g, const onnx::NodeProto& caller, const onnx::FunctionProto& fn) {
  for (auto& n : *g->mutable_node()) BindAttributes(&n, caller, fn);
}

void BindAttributes(onnx::NodeProto* n, const onnx::NodeProto& caller, const onnx::FunctionProto& fn) {
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> bound;
  for (const auto& a : n->attribute()) {
    if (a.ref_attr_name().empty()) {
      bound.Add()->CopyFrom(a);
      continue;
    }
    const onnx::AttributeProto* value = nullptr;
    for (const auto& c : caller.attribute()) {
      if (c.name() == a.ref_attr_name()) value = &c;
    }
    if (value == nullptr) {
      for (const auto& d : fn.attribute_proto()) {
        if (d.name() == a.ref_attr_name()) value = &d;
      }
    }
    if (value == nullptr) continue;  // unset and without default: the attribute is absent
    onnx::AttributeProto* b = bound.Add();
    b->CopyFrom(*value);
    b->set_name(a.name());
  }
  n->mutable_attribute()->Swap(&bound);
  for (auto& a : *n->mutable_attribute()) {
    if (a.has_g()) BindAttributesInGraph(a.mutable_g(), caller, fn);
    for (auto& sub : *a.mutable_graphs()) BindAttributesInGraph(&sub, caller, fn);
  }
}

struct Inliner {
  std::map<FunctionKey, const onnx::FunctionProto*> functions;
  const OpsetMap* opsets;
  const KernelRegistry* registry;
  int counter = 0;

  const onnx::FunctionProto* Callee(const onnx::NodeProto& n) const {
    const std::string domain = NormalizeDomain(n.domain());
    auto it = functions.find({domain, n.op_type()});
    if (it == functions.end()) return nullptr;
    auto opset = opsets->find(domain);
    if (opset != opsets->end() && registry->Find(domain, n.op_type(), opset->second) != nullptr) return nullptr;
    return it->second;
  }

  // Expands calls in `g` (and its subgraphs); returns whether anything changed.
  bool Expand(onnx::GraphProto* g) {
    bool changed = false;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> result;
    for (auto& n : *g->mutable_node()) {
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) changed |= Expand(a.mutable_g());
        for (auto& sub : *a.mutable_graphs()) changed |= Expand(&sub);
      }
      const onnx::FunctionProto* fn = Callee(n);
      if (fn == nullptr) {
        result.Add()->Swap(&n);
        continue;
      }
      changed = true;
      const std::string prefix = (n.name().empty() ? fn->name() : n.name()) + "/" + std::to_string(counter++) + "/";
      std::map<std::string, std::string> rename;
      for (int i = 0; i < fn->input_size(); ++i) rename[fn->input(i)] = i < n.input_size() ? n.input(i) : "";
      for (int i = 0; i < fn->output_size(); ++i) {
        const bool used = i < n.output_size() && !n.output(i).empty();
        rename[fn->output(i)] = used ? n.output(i) : prefix + fn->output(i);
      }
      for (const auto& body : fn->node()) {
        for (const auto& out : body.output()) {
          if (!out.empty() && !rename.count(out)) rename[out] = prefix + out;
        }
      }
      for (const auto& body : fn->node()) {
        onnx::NodeProto* copy = result.Add();
        copy->CopyFrom(body);
        copy->set_name(prefix + body.name());
        RenameInNode(copy, rename);
        BindAttributes(copy, n, *fn);
      }
    }
    g->mutable_node()->Swap(&result);
    return changed;
  }
};

}  // namespace

Status InlineFunctions(onnx::ModelProto* model, OpsetMap* opsets, const KernelRegistry& registry) {
  if (model->functions_size() == 0) return Status::Ok();
  Inliner inliner;
  inliner.opsets = opsets;
  inliner.registry = &registry;
  for (const auto& fn : model->functions()) {
    inliner.functions[{NormalizeDomain(fn.domain()), fn.name()}] = &fn;
    for (const auto& imp : fn.opset_import()) opsets->emplace(NormalizeDomain(imp.domain()), static_cast<int>(imp.version()));
  }
  // Functions may call functions; a call chain deeper than this is a recursive definition.
  constexpr int kMaxRounds = 32;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (!inliner.Expand(model->mutable_graph())) return Status::Ok();
  }
  return InvalidArgument("model-local functions call each other more than " + std::to_string(kMaxRounds) +
                         " levels deep (a recursive function?)");
}

}  // namespace onnxflow::graph
