// Writes the model dist/custom_op_test.sh runs (argv[1]): com.example.Scale in the main graph and
// in a Loop body. x [3] -> y = Scale(x, factor 3); v = Loop 4 times v = Scale(v, factor 2) from y.
#include <cstdio>
#include <fstream>

#include "tools/model_builder.h"

int main(int argc, char** argv) {
  using onnxflow::DataType;
  if (argc != 2) return std::fprintf(stderr, "usage: custom_op_model OUT.onnx\n"), 2;
  onnxflow::tools::ModelBuilder m(17);
  auto* imp = m.proto().add_opset_import();
  imp->set_domain("com.example");
  imp->set_version(1);
  m.Input("x", DataType::kFloat, {3});
  auto& scale = m.Node("Scale", {"x"}, {"y"}, "scale");
  scale.set_domain("com.example");
  onnxflow::tools::SetAttr(scale, "factor", 3.0f);
  m.Initializer("trips", onnxflow::Tensor::Scalar<int64_t>(4));
  m.Initializer("cond", onnxflow::Tensor::Scalar<bool>(true));
  auto& loop = m.Node("Loop", {"trips", "cond", "y"}, {"v"}, "loop");
  onnxflow::tools::GraphBuilder body = onnxflow::tools::SetGraphAttr(loop, "body");
  body.Input("i", DataType::kInt64, {});
  body.Input("c", DataType::kBool, {});
  body.Input("v_in", DataType::kFloat, {3});
  body.Node("Identity", {"c"}, {"c_out"});
  auto& twice = body.Node("Scale", {"v_in"}, {"v_out"}, "body_scale");
  twice.set_domain("com.example");
  onnxflow::tools::SetAttr(twice, "factor", 2.0f);
  body.Output("c_out", DataType::kBool, {});
  body.Output("v_out", DataType::kFloat, {3});
  m.Output("y", DataType::kFloat, {3});
  m.Output("v", DataType::kFloat, {3});
  std::ofstream out(argv[1], std::ios::binary);
  out << m.Serialize();
  return out ? 0 : 1;
}
