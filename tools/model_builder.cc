#include "tools/model_builder.h"

#include <cstring>

namespace onnxflow::tools {
namespace {

void DeclareValue(onnx::ValueInfoProto* v, const std::string& name, DataType dtype, const std::vector<int64_t>& shape,
                  bool rank_known) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  if (!rank_known) return;
  auto* s = tt->mutable_shape();
  for (int64_t d : shape) {
    auto* dim = s->add_dim();
    if (d >= 0) {
      dim->set_dim_value(d);
    } else {
      dim->set_dim_param("d" + std::to_string(s->dim_size()));
    }
  }
}

void WriteTensor(const Tensor& value, onnx::TensorProto* t) {
  t->set_data_type(static_cast<int32_t>(value.dtype()));
  for (int64_t d : value.shape()) t->add_dims(d);
  if (value.dtype() == DataType::kString) {
    for (int64_t i = 0; i < value.size(); ++i) t->add_string_data(value.data<std::string>()[i]);
  } else {
    t->set_raw_data(value.raw_data(), value.nbytes());
  }
}

onnx::AttributeProto* NewAttr(onnx::NodeProto& node, const std::string& name, onnx::AttributeProto::AttributeType type) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

}  // namespace

GraphBuilder& GraphBuilder::Input(const std::string& name, DataType dtype, const std::vector<int64_t>& shape, bool rank_known) {
  DeclareValue(graph_->add_input(), name, dtype, shape, rank_known);
  return *this;
}

GraphBuilder& GraphBuilder::Output(const std::string& name, DataType dtype, const std::vector<int64_t>& shape, bool rank_known) {
  DeclareValue(graph_->add_output(), name, dtype, shape, rank_known);
  return *this;
}

GraphBuilder& GraphBuilder::Initializer(const std::string& name, const Tensor& value) {
  auto* t = graph_->add_initializer();
  t->set_name(name);
  WriteTensor(value, t);
  return *this;
}

onnx::NodeProto& GraphBuilder::Node(const std::string& op_type, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs, const std::string& name) {
  auto* n = graph_->add_node();
  n->set_op_type(op_type);
  n->set_name(name.empty() && !outputs.empty() ? outputs[0] : name);
  for (const auto& in : inputs) n->add_input(in);
  for (const auto& out : outputs) n->add_output(out);
  return *n;
}

ModelBuilder::ModelBuilder(int opset, int64_t ir_version) : GraphBuilder(nullptr) {
  model_.set_ir_version(ir_version);
  model_.set_producer_name("onnxflow");
  auto* imp = model_.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  model_.mutable_graph()->set_name("main");
  static_cast<GraphBuilder&>(*this) = GraphBuilder(model_.mutable_graph());
}

void SetAttr(onnx::NodeProto& node, const std::string& name, int64_t value) {
  NewAttr(node, name, onnx::AttributeProto::INT)->set_i(value);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, float value) {
  NewAttr(node, name, onnx::AttributeProto::FLOAT)->set_f(value);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  NewAttr(node, name, onnx::AttributeProto::STRING)->set_s(value);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = NewAttr(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& values) {
  auto* a = NewAttr(node, name, onnx::AttributeProto::FLOATS);
  for (float v : values) a->add_floats(v);
}
void SetAttr(onnx::NodeProto& node, const std::string& name, const Tensor& value) {
  WriteTensor(value, NewAttr(node, name, onnx::AttributeProto::TENSOR)->mutable_t());
}
GraphBuilder SetGraphAttr(onnx::NodeProto& node, const std::string& name) {
  auto* a = NewAttr(node, name, onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return GraphBuilder(a->mutable_g());
}

}  // namespace onnxflow::tools
