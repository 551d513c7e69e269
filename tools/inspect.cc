#include "tools/inspect.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "graph/model.h"
#include "ops/register_all.h"
#include "proto/onnx.pb.h"

namespace onnxflow::tools {
namespace {

std::string DimsText(const ValueInfo& info) {
  if (!info.has_shape) return "(rank unknown)";
  std::string s = "[";
  for (size_t d = 0; d < info.shape.size(); ++d) {
    if (d) s += ",";
    s += info.shape[d] >= 0 ? std::to_string(info.shape[d]) : info.dim_names[d].empty() ? "?" : info.dim_names[d];
  }
  return s + "]";
}

std::string KindText(const ValueInfo& info) {
  const std::string type = DataTypeName(info.dtype);
  return info.kind == Value::Kind::kSequence ? "sequence<" + type + ">" : type;
}

nlohmann::json InfoJson(const ValueInfo& info) {
  nlohmann::json dims = nlohmann::json::array();
  for (size_t d = 0; d < info.shape.size(); ++d) {
    if (info.shape[d] >= 0) {
      dims.push_back(info.shape[d]);
    } else {
      dims.push_back(info.dim_names[d].empty() ? nlohmann::json(nullptr) : nlohmann::json(info.dim_names[d]));
    }
  }
  nlohmann::json j{{"name", info.name}, {"type", KindText(info)}};
  j["dims"] = info.has_shape ? dims : nlohmann::json(nullptr);
  if (info.optional) j["optional"] = true;
  return j;
}

std::string NodeLabel(const std::string& name, const std::string& op, const std::string& domain) {
  return (name.empty() ? "(unnamed)" : name) + " (" + (domain.empty() ? "" : domain + ".") + op + ")";
}

struct OptimizedNode {
  std::string label;
  std::vector<std::string> inputs, outputs;
  std::vector<std::string> replaced;  // labels of the ONNX nodes it stands for, when it is not one of them as written
};

// The load passes keep a fused node's outer edges: its inputs and outputs are values of the
// original graph, or derived from one by a suffix ("r1/blocked" is r1 in the blocked layout). So
// the ONNX nodes a node replaced are found without help from the passes: map its inputs and
// outputs to original values, then walk the original graph back from the outputs to the inputs,
// collecting the producers on the way (up to the values other optimized nodes produce). A node
// that is exactly an original one replaced nothing.
std::vector<OptimizedNode> TraceOptimized(const onnx::GraphProto& original, const graph::Graph& optimized) {
  std::map<std::string, int> producer;
  std::set<std::string> values;  // every value the original graph names
  for (const auto& in : original.input()) values.insert(in.name());
  for (const auto& init : original.initializer()) values.insert(init.name());
  for (int i = 0; i < original.node_size(); ++i) {
    for (const auto& out : original.node(i).output()) {
      if (out.empty()) continue;
      producer[out] = i;
      values.insert(out);
    }
  }
  // The original value a name stands for: itself, else the name with "/suffix" parts dropped.
  auto original_value = [&](std::string name) {
    while (!values.count(name)) {
      const size_t slash = name.rfind('/');
      if (slash == std::string::npos) return std::string();
      name.resize(slash);
    }
    return name;
  };
  // Which optimized nodes produce each original value: a walk stops at a value another node
  // produces (its producers are that node's), as where convolutions append to one Concat in turn.
  std::map<std::string, std::set<const graph::Node*>> made_by;
  for (const graph::Node& n : optimized.nodes) {
    for (const auto& out : n.proto->output()) made_by[original_value(out)].insert(&n);
  }
  std::vector<OptimizedNode> result;
  for (const graph::Node& n : optimized.nodes) {
    OptimizedNode o;
    o.label = NodeLabel(n.proto->name(), n.op_type(), n.domain);
    o.inputs.assign(n.proto->input().begin(), n.proto->input().end());
    o.outputs.assign(n.proto->output().begin(), n.proto->output().end());
    std::set<std::string> stop;
    for (const auto& in : o.inputs) stop.insert(original_value(in));
    std::set<int> seen;
    std::vector<std::string> pending;
    std::set<std::string> own;
    for (const auto& out : o.outputs) own.insert(original_value(out));
    pending.assign(own.begin(), own.end());
    auto made_elsewhere = [&](const std::string& value) {
      auto m = made_by.find(value);
      return m != made_by.end() && !own.count(value) && (m->second.size() > 1 || !m->second.count(&n));
    };
    while (!pending.empty()) {
      const std::string value = pending.back();
      pending.pop_back();
      auto p = producer.find(value);
      if (p == producer.end() || stop.count(value) || made_elsewhere(value) || seen.count(p->second)) continue;
      seen.insert(p->second);
      for (const auto& in : original.node(p->second).input()) pending.push_back(in);
    }
    const bool as_written = seen.size() == 1 && original.node(*seen.begin()).op_type() == n.op_type() &&
                            original.node(*seen.begin()).name() == n.proto->name();
    if (!as_written) {
      for (int i : seen) o.replaced.push_back(NodeLabel(original.node(i).name(), original.node(i).op_type(), original.node(i).domain()));
    }
    result.push_back(std::move(o));
  }
  return result;
}

}  // namespace

Result<std::string> InspectModel(const std::string& path, const SessionOptions& session_options,
                                 const InspectOptions& options) {
  ONNXFLOW_ASSIGN_OR_RETURN(Session session, Session::Load(path, session_options));
  onnx::ModelProto proto;
  {
    std::ifstream file(path, std::ios::binary);
    if (!file || !proto.ParseFromIstream(&file)) return InvalidArgument("cannot parse '" + path + "' as an ONNX model");
  }
  std::map<std::string, int> histogram;
  for (const auto& node : proto.graph().node()) {
    ++histogram[(node.domain().empty() || node.domain() == "ai.onnx" ? "" : node.domain() + ".") + node.op_type()];
  }
  std::vector<OptimizedNode> optimized;
  std::map<std::string, int> optimized_histogram;
  if (options.optimized) {
    ONNXFLOW_ASSIGN_OR_RETURN(auto model, graph::LoadModelFile(path, session_options, GlobalKernelRegistry()));
    optimized = TraceOptimized(proto.graph(), *model->graph);
    for (const graph::Node& n : model->graph->nodes) ++optimized_histogram[(n.domain.empty() ? "" : n.domain + ".") + n.op_type()];
  }
  const ModelMetadata& m = session.metadata();

  if (options.json) {
    nlohmann::json j;
    j["model"] = path;
    j["ir_version"] = m.ir_version;
    j["producer_name"] = m.producer_name;
    j["producer_version"] = m.producer_version;
    j["domain"] = m.domain;
    j["model_version"] = m.model_version;
    j["doc_string"] = m.doc_string;
    j["graph_name"] = m.graph_name;
    j["metadata_props"] = nlohmann::json::object();
    for (const auto& [k, v] : m.metadata_props) j["metadata_props"][k] = v;
    j["opset_imports"] = nlohmann::json::object();
    for (const auto& [d, v] : m.opset_imports) j["opset_imports"][d.empty() ? "ai.onnx" : d] = v;
    j["inputs"] = nlohmann::json::array();
    for (const auto& i : session.inputs()) j["inputs"].push_back(InfoJson(i));
    j["outputs"] = nlohmann::json::array();
    for (const auto& o : session.outputs()) j["outputs"].push_back(InfoJson(o));
    j["nodes"] = proto.graph().node_size();
    j["initializers"] = proto.graph().initializer_size();
    j["ops"] = histogram;
    if (options.optimized) {
      nlohmann::json nodes = nlohmann::json::array();
      for (const auto& o : optimized) {
        nlohmann::json n{{"node", o.label}, {"inputs", o.inputs}, {"outputs", o.outputs}};
        if (!o.replaced.empty()) n["replaced"] = o.replaced;
        nodes.push_back(n);
      }
      j["optimized"] = {{"nodes", nodes}, {"ops", optimized_histogram}};
    }
    return j.dump(2) + "\n";
  }

  std::ostringstream s;
  s << "model: " << path << "\n";
  s << "  ir_version " << m.ir_version << ", producer " << (m.producer_name.empty() ? "(none)" : m.producer_name)
    << (m.producer_version.empty() ? "" : " " + m.producer_version) << ", model_version " << m.model_version;
  if (!m.domain.empty()) s << ", domain " << m.domain;
  s << "\n  graph: " << (m.graph_name.empty() ? "(unnamed)" : m.graph_name) << ", " << proto.graph().node_size()
    << " nodes, " << proto.graph().initializer_size() << " initializers\n";
  if (!m.doc_string.empty()) s << "  doc: " << m.doc_string << "\n";
  for (const auto& [k, v] : m.metadata_props) s << "  metadata " << k << " = " << v << "\n";
  s << "opset imports:";
  for (const auto& [d, v] : m.opset_imports) s << " " << (d.empty() ? "ai.onnx" : d) << " " << v;
  s << "\ninputs:\n";
  for (const auto& i : session.inputs()) {
    s << "  " << i.name << ": " << KindText(i) << " " << DimsText(i) << (i.optional ? " (optional)" : "") << "\n";
  }
  s << "outputs:\n";
  for (const auto& o : session.outputs()) s << "  " << o.name << ": " << KindText(o) << " " << DimsText(o) << "\n";
  auto print_histogram = [&](const std::map<std::string, int>& h) {
    std::vector<std::pair<std::string, int>> sorted(h.begin(), h.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    int width = 28;  // wider for long internal op names, so the counts stay in one column
    for (const auto& [op, count] : sorted) width = std::max(width, static_cast<int>(op.size()));
    for (const auto& [op, count] : sorted) {
      char line[256];
      std::snprintf(line, sizeof line, "  %-*s %5d\n", width, op.c_str(), count);
      s << line;
    }
  };
  s << "ops (" << proto.graph().node_size() << " nodes):\n";
  print_histogram(histogram);
  if (options.optimized) {
    s << "optimized graph (" << optimized.size() << " nodes after the load passes):\n";
    for (const auto& o : optimized) {
      s << "  " << o.label;
      if (!o.replaced.empty()) {
        s << "  <- ";
        for (size_t i = 0; i < o.replaced.size(); ++i) s << (i ? " + " : "") << o.replaced[i];
      }
      s << "\n";
    }
    s << "optimized ops:\n";
    print_histogram(optimized_histogram);
  }
  return s.str();
}

}  // namespace onnxflow::tools
