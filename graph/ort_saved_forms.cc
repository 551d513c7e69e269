#include "graph/ort_saved_forms.h"

#include <memory>

#include "graph/fusion_util.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"

namespace onnxflow::graph {

std::optional<Patch> AdoptSavedFusedConv(Rewriter& r, Id id) {
  const Node& n = r[id];
  if (n.domain != kMsDomain || n.op_type() != "FusedConv" || n.proto->output_size() != 1 ||
      n.proto->input_size() < 2 || !IsFloatProduct(r.graph(), n)) {
    return std::nullopt;
  }
  Result<FusedActivationSpec> spec = FusedActivationSpec::FromOrtParams(*n.proto);
  if (!spec.ok()) return std::nullopt;
  auto node = std::make_shared<onnx::NodeProto>(*n.proto);
  RemoveAttribute(*node, "activation_params");
  spec->WriteTo(*node);
  return Patch{{id}, {InternalNode(n, std::move(node), internal_ops::kFusedConv)}, {}};
}

std::optional<Patch> DropShapeStartZero(Rewriter& r, Id id) {
  const Node& n = r[id];
  const auto* start = Attr(*n.proto, "start");
  if (!IsOp(n, "Shape") || start == nullptr || start->i() != 0 || Attr(*n.proto, "end") != nullptr) {
    return std::nullopt;
  }
  auto node = std::make_shared<onnx::NodeProto>(*n.proto);
  RemoveAttribute(*node, "start");
  return Patch{{id}, {WithProto(n, std::move(node))}, {}};
}

}  // namespace onnxflow::graph
