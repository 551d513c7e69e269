// Builds ONNX models in code: the demo, the tests and the control-flow benchmark use it.
//
//   ModelBuilder m(17);
//   m.Input("x", DataType::kFloat, {1, 4});
//   m.Node("Relu", {"x"}, {"y"});
//   m.Output("y", DataType::kFloat, {1, 4});
//   std::string bytes = m.Serialize();
#pragma once

#include <string>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "proto/onnx.pb.h"

namespace onnxflow::tools {

class GraphBuilder {
 public:
  explicit GraphBuilder(onnx::GraphProto* graph) : graph_(graph) {}

  // Shapes: -1 is a dynamic dimension; `rank_known` false declares no shape at all.
  GraphBuilder& Input(const std::string& name, DataType dtype, const std::vector<int64_t>& shape, bool rank_known = true);
  GraphBuilder& Output(const std::string& name, DataType dtype, const std::vector<int64_t>& shape, bool rank_known = true);
  GraphBuilder& Initializer(const std::string& name, const Tensor& value);
  onnx::NodeProto& Node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");
  onnx::GraphProto* proto() { return graph_; }

 private:
  onnx::GraphProto* graph_;
};

class ModelBuilder : public GraphBuilder {
 public:
  explicit ModelBuilder(int opset, int64_t ir_version = 8);
  onnx::ModelProto& proto() { return model_; }
  std::string Serialize() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

// Attribute setters for a node under construction.
void SetAttr(onnx::NodeProto& node, const std::string& name, int64_t value);
void SetAttr(onnx::NodeProto& node, const std::string& name, float value);
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::string& value);
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& values);
void SetAttr(onnx::NodeProto& node, const std::string& name, const Tensor& value);
// A graph attribute (If branches, Loop/Scan bodies); returns the graph to fill in.
GraphBuilder SetGraphAttr(onnx::NodeProto& node, const std::string& name);

}  // namespace onnxflow::tools
