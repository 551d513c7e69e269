// DescribeModel (describe.h): the session's view of the model, the file's nodes,
// and on request the graph after the load passes traced back to them.
#include "include/onnxflow/describe.h"

#include <fstream>

#include "graph/describe.h"
#include "graph/model.h"
#include "ops/register_all.h"
#include "proto/onnx.pb.h"
#include "scheduler/custom_op.h"

namespace onnxflow {
namespace {

void DescribeSubgraphNodes(const onnx::GraphProto& graph, std::vector<NodeDescription>* out) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      std::vector<const onnx::GraphProto*> bodies;
      if (a.has_g()) bodies.push_back(&a.g());
      for (const onnx::GraphProto& g : a.graphs()) bodies.push_back(&g);
      for (const onnx::GraphProto* body : bodies) {
        for (NodeDescription& n : graph::DescribeNodes(*body)) out->push_back(std::move(n));
        DescribeSubgraphNodes(*body, out);
      }
    }
  }
}

}  // namespace

Result<ModelDescription> DescribeModel(const std::string& path, const SessionOptions& options, bool optimized) {
  // The session first: the model is refused exactly as Session::Load refuses it.
  ONNXFLOW_ASSIGN_OR_RETURN(Session session, Session::Load(path, options));
  onnx::ModelProto proto;
  {
    std::ifstream file(path, std::ios::binary);
    if (!file || !proto.ParseFromIstream(&file)) return InvalidArgument("cannot parse '" + path + "' as an ONNX model");
  }
  ModelDescription d;
  d.metadata = session.metadata();
  d.inputs = session.inputs();
  d.outputs = session.outputs();
  d.initializer_count = proto.graph().initializer_size();
  d.nodes = graph::DescribeNodes(proto.graph());
  DescribeSubgraphNodes(proto.graph(), &d.subgraph_nodes);
  if (optimized) {
    // The graph as the load passes leave it (the session keeps only its plan's view of it).
    const KernelRegistry* registry = &GlobalKernelRegistry();
    if (options.custom_ops != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(registry, CustomOpSetAccess::Registry(*options.custom_ops));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(auto model, graph::LoadModelFile(path, options, *registry));
    d.optimized = graph::TraceOptimized(proto.graph(), *model->graph);
  }
  return d;
}

}  // namespace onnxflow
