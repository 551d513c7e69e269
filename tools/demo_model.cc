#include "tools/demo_model.h"

#include <cmath>
#include <vector>

#include "proto/onnx.pb.h"

namespace onnxflow::tools {
namespace {

// A fixed linear congruential sequence scaled to roughly unit variance per fan-in.
std::vector<float> Weights(int count, int fan_in, uint32_t seed) {
  std::vector<float> w(count);
  uint32_t state = seed;
  const float scale = std::sqrt(2.0f / static_cast<float>(fan_in));
  for (float& x : w) {
    state = state * 1664525u + 1013904223u;
    x = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 2.0f * scale;
  }
  return w;
}

void AddInitializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<float>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * sizeof(float));
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                         const std::string& output) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(output);
  for (const auto& in : inputs) n->add_input(in);
  n->add_output(output);
  return n;
}

void IntsAttribute(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

void SetTensorType(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

}  // namespace

std::string DemoModelBytes() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("onnxflow demo");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("demo_cnn");
  SetTensorType(g->add_input(), "image", {1, 3, 32, 32});
  SetTensorType(g->add_output(), "probabilities", {1, 10});

  AddInitializer(g, "conv1.w", {16, 3, 3, 3}, Weights(16 * 27, 27, 1));
  AddInitializer(g, "conv1.b", {16}, Weights(16, 16, 2));
  AddInitializer(g, "conv2.w", {32, 16, 3, 3}, Weights(32 * 144, 144, 3));
  AddInitializer(g, "bn.scale", {32}, std::vector<float>(32, 1.0f));
  AddInitializer(g, "bn.bias", {32}, Weights(32, 32, 4));
  AddInitializer(g, "bn.mean", {32}, Weights(32, 64, 5));
  AddInitializer(g, "bn.var", {32}, std::vector<float>(32, 0.9f));
  AddInitializer(g, "fc.w", {32, 10}, Weights(320, 32, 6));
  AddInitializer(g, "fc.b", {10}, Weights(10, 10, 7));

  IntsAttribute(AddNode(g, "Conv", {"image", "conv1.w", "conv1.b"}, "conv1"), "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", {"conv1"}, "relu1");
  auto* pool = AddNode(g, "MaxPool", {"relu1"}, "pool1");
  IntsAttribute(pool, "kernel_shape", {2, 2});
  IntsAttribute(pool, "strides", {2, 2});
  IntsAttribute(AddNode(g, "Conv", {"pool1", "conv2.w"}, "conv2"), "pads", {1, 1, 1, 1});
  AddNode(g, "BatchNormalization", {"conv2", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, "bn");
  AddNode(g, "Relu", {"bn"}, "relu2");
  AddNode(g, "GlobalAveragePool", {"relu2"}, "gap");
  AddNode(g, "Flatten", {"gap"}, "flat");
  AddNode(g, "Gemm", {"flat", "fc.w", "fc.b"}, "logits");
  AddNode(g, "Softmax", {"logits"}, "probabilities");
  return m.SerializeAsString();
}

}  // namespace onnxflow::tools
