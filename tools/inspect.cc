#include "tools/inspect.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "include/onnxflow/describe.h"

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
  std::string type = DataTypeName(info.dtype);
  if (info.map_key != DataType::kUndefined) type = std::string("map<") + DataTypeName(info.map_key) + ", " + type + ">";
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

std::string NodeLabel(const NodeDescription& n) {
  return (n.name.empty() ? "(unnamed)" : n.name) + " (" + (n.domain.empty() ? "" : n.domain + ".") + n.op_type + ")";
}

std::string OpKey(const NodeDescription& n) { return (n.domain.empty() ? "" : n.domain + ".") + n.op_type; }

}  // namespace

Result<std::string> InspectModel(const std::string& path, const SessionOptions& session_options,
                                 const InspectOptions& options) {
  ONNXFLOW_ASSIGN_OR_RETURN(ModelDescription model, DescribeModel(path, session_options, options.optimized));
  std::map<std::string, int> histogram;
  for (const auto& node : model.nodes) ++histogram[OpKey(node)];
  std::map<std::string, int> subgraph_histogram;
  for (const auto& node : model.subgraph_nodes) ++subgraph_histogram[OpKey(node)];
  std::map<std::string, int> optimized_histogram;
  for (const auto& node : model.optimized) ++optimized_histogram[OpKey(node)];
  // A fused node's label, and those of the ONNX nodes it replaced.
  auto replaced_labels = [&](const NodeDescription& n) {
    std::vector<std::string> labels;
    for (int i : n.replaced) labels.push_back(NodeLabel(model.nodes[i]));
    return labels;
  };
  const ModelMetadata& m = model.metadata;
  const int node_count = static_cast<int>(model.nodes.size());

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
    for (const auto& i : model.inputs) j["inputs"].push_back(InfoJson(i));
    j["outputs"] = nlohmann::json::array();
    for (const auto& o : model.outputs) j["outputs"].push_back(InfoJson(o));
    j["nodes"] = node_count;
    j["initializers"] = model.initializer_count;
    j["ops"] = histogram;
    j["subgraph_nodes"] = model.subgraph_nodes.size();
    j["subgraph_ops"] = subgraph_histogram;
    if (options.optimized) {
      nlohmann::json nodes = nlohmann::json::array();
      for (const auto& o : model.optimized) {
        nlohmann::json n{{"node", NodeLabel(o)}, {"inputs", o.inputs}, {"outputs", o.outputs}};
        if (!o.replaced.empty()) n["replaced"] = replaced_labels(o);
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
  s << "\n  graph: " << (m.graph_name.empty() ? "(unnamed)" : m.graph_name) << ", " << node_count << " nodes, "
    << model.initializer_count << " initializers\n";
  if (!m.doc_string.empty()) s << "  doc: " << m.doc_string << "\n";
  for (const auto& [k, v] : m.metadata_props) s << "  metadata " << k << " = " << v << "\n";
  s << "opset imports:";
  for (const auto& [d, v] : m.opset_imports) s << " " << (d.empty() ? "ai.onnx" : d) << " " << v;
  s << "\ninputs:\n";
  for (const auto& i : model.inputs) {
    s << "  " << i.name << ": " << KindText(i) << " " << DimsText(i) << (i.optional ? " (optional)" : "") << "\n";
  }
  s << "outputs:\n";
  for (const auto& o : model.outputs) s << "  " << o.name << ": " << KindText(o) << " " << DimsText(o) << "\n";
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
  s << "ops (" << node_count << " nodes):\n";
  print_histogram(histogram);
  if (!model.subgraph_nodes.empty()) {
    s << "ops in subgraphs (" << model.subgraph_nodes.size() << " nodes in If, Loop and Scan bodies):\n";
    print_histogram(subgraph_histogram);
  }
  if (options.optimized) {
    s << "optimized graph (" << model.optimized.size() << " nodes after the load passes):\n";
    for (const auto& o : model.optimized) {
      s << "  " << NodeLabel(o);
      const std::vector<std::string> replaced = replaced_labels(o);
      for (size_t i = 0; i < replaced.size(); ++i) s << (i ? " + " : "  <- ") << replaced[i];
      s << "\n";
    }
    s << "optimized ops:\n";
    print_histogram(optimized_histogram);
  }
  return s.str();
}

}  // namespace onnxflow::tools
