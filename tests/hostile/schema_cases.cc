#include "tests/hostile/schema_cases.h"

#include <sys/stat.h>

#include <fstream>
#include <utility>

#include "tools/model_builder.h"

namespace onnxflow::hostile {
namespace {

using tools::GraphBuilder;
using tools::ModelBuilder;
using tools::SetAttr;
using tools::SetGraphAttr;

using Attrs = std::function<void(onnx::NodeProto&)>;

// One node named "victim" whose inputs are graph inputs of unknown shape ("" leaves an input
// empty), `outputs` outputs.
std::string OneNode(int opset, const std::string& op, const std::vector<std::string>& inputs, int outputs,
                    const Attrs& attrs = nullptr) {
  ModelBuilder m(opset);
  for (const std::string& name : inputs) {
    if (!name.empty()) m.Input(name, DataType::kFloat, {}, /*rank_known=*/false);
  }
  std::vector<std::string> outs;
  for (int i = 0; i < outputs; ++i) outs.push_back("out" + std::to_string(i));
  auto& node = m.Node(op, inputs, outs, "victim");
  if (attrs) attrs(node);
  for (const auto& o : outs) m.Output(o, DataType::kFloat, {}, false);
  return m.Serialize();
}

onnx::AttributeProto& Add(onnx::NodeProto& n, const std::string& name, onnx::AttributeProto::AttributeType type) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return *a;
}
void Float(onnx::NodeProto& n, const std::string& name, float v) { Add(n, name, onnx::AttributeProto::FLOAT).set_f(v); }
void Int(onnx::NodeProto& n, const std::string& name, int64_t v) { Add(n, name, onnx::AttributeProto::INT).set_i(v); }
void Str(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  Add(n, name, onnx::AttributeProto::STRING).set_s(v);
}
void Ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto& a = Add(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
}
void Floats(onnx::NodeProto& n, const std::string& name, std::vector<float> v) {
  auto& a = Add(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a.add_floats(x);
}

std::string Victim(const std::string& op) { return "node 'victim' (" + op + ")"; }

struct Builder {
  std::vector<SchemaCase> cases;

  void Load(const std::string& name, const std::string& reason, std::function<std::string()> bytes,
            std::vector<std::string> fragments, StatusCode code = StatusCode::kInvalidArgument) {
    cases.push_back(SchemaCase{name, reason, [bytes](const std::string&) { return bytes(); }, code,
                               std::move(fragments)});
  }
  // One node of `op` breaking its schema.
  void Node(const std::string& name, const std::string& reason, int opset, const std::string& op,
            std::vector<std::string> inputs, int outputs, Attrs attrs, std::vector<std::string> fragments) {
    fragments.insert(fragments.begin(), Victim(op));
    Load(name, reason, [=] { return OneNode(opset, op, inputs, outputs, attrs); }, fragments);
  }
};

// A Loop (trip count from an initializer) whose body adds one.
std::string LoopOf(int64_t trips) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1});
  m.Initializer("M", Tensor::Scalar<int64_t>(trips));
  m.Initializer("cond", Tensor::Scalar<bool>(true));
  auto& loop = m.Node("Loop", {"M", "cond", "x"}, {"y"}, "victim");
  GraphBuilder body = SetGraphAttr(loop, "body");
  body.Input("i", DataType::kInt64, {});
  body.Input("c", DataType::kBool, {});
  body.Input("v", DataType::kFloat, {1});
  body.Initializer("one", Tensor::FromVector<float>({1}, {1.0f}));
  body.Node("Identity", {"c"}, {"c_out"});
  body.Node("Add", {"v", "one"}, {"v_out"});
  body.Output("c_out", DataType::kBool, {});
  body.Output("v_out", DataType::kFloat, {1});
  m.Output("y", DataType::kFloat, {1});
  return m.Serialize();
}

// An initializer whose external data names `location` (files made by `prepare` in the folder).
std::string ExternalModel(const std::string& location) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  t->add_dims(2);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value(location);
  m.Node("Add", {"x", "w"}, {"y"}, "victim");
  m.Output("y", DataType::kFloat, {2});
  return m.Serialize();
}

// A main graph whose inputs are typed as given, one node "victim", outputs declared as given.
std::string Typed(const std::string& op, const std::vector<std::pair<std::string, DataType>>& inputs,
                  const std::vector<std::pair<std::string, DataType>>& outputs, const Attrs& attrs = nullptr) {
  ModelBuilder m(17);
  std::vector<std::string> names, outs;
  for (const auto& [name, type] : inputs) {
    m.Input(name, type, {2});
    names.push_back(name);
  }
  for (const auto& [name, type] : outputs) outs.push_back(name);
  auto& node = m.Node(op, names, outs, "victim");
  if (attrs) attrs(node);
  for (const auto& [name, type] : outputs) m.Output(name, type, {}, false);
  return m.Serialize();
}

// An If "victim" whose branches are written by `then_fill` and `else_fill`.
std::string IfModel(int node_outputs, DataType declared, const std::function<void(GraphBuilder&)>& then_fill,
                    const std::function<void(GraphBuilder&)>& else_fill) {
  ModelBuilder m(17);
  m.Input("c", DataType::kBool, {});
  m.Input("x", DataType::kFloat, {2});
  m.Input("n", DataType::kInt64, {2});
  std::vector<std::string> outs;
  for (int i = 0; i < node_outputs; ++i) outs.push_back("y" + std::to_string(i));
  auto& node = m.Node("If", {"c"}, outs, "victim");
  GraphBuilder t = SetGraphAttr(node, "then_branch");
  then_fill(t);
  GraphBuilder e = SetGraphAttr(node, "else_branch");
  else_fill(e);
  for (const auto& o : outs) m.Output(o, declared, {}, false);
  return m.Serialize();
}

// A Loop "victim" over x (float [2]) whose body is written by `fill` (inputs i, c, v given).
std::string LoopBody(DataType v_type, const std::function<void(GraphBuilder&)>& fill, int node_outputs = 1) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Initializer("M", Tensor::Scalar<int64_t>(3));
  std::vector<std::string> outs;
  for (int i = 0; i < node_outputs; ++i) outs.push_back("y" + std::to_string(i));
  auto& loop = m.Node("Loop", {"M", "", "x"}, outs, "victim");
  GraphBuilder body = SetGraphAttr(loop, "body");
  body.Input("i", DataType::kInt64, {});
  body.Input("c", DataType::kBool, {});
  body.Input("v", v_type, {2});
  fill(body);
  for (const auto& o : outs) m.Output(o, DataType::kUndefined, {}, false);
  return m.Serialize();
}

}  // namespace

std::vector<SchemaCase> SchemaCases() {
  Builder b;

  // --- An attribute of the wrong type (it used to be accepted and ignored).
  struct WrongType {
    const char* op;
    int opset;
    std::vector<std::string> inputs;
    const char* attribute;
    Attrs set;
    const char* expected;
    const char* given;
  };
  const std::vector<WrongType> wrong_types = {
      {"Conv", 17, {"x", "w"}, "strides", [](auto& n) { Float(n, "strides", 1); }, "INTS", "FLOAT"},
      {"Conv", 17, {"x", "w"}, "pads", [](auto& n) { Int(n, "pads", 0); }, "INTS", "INT"},
      {"Transpose", 17, {"x"}, "perm", [](auto& n) { Floats(n, "perm", {1, 0}); }, "INTS", "FLOATS"},
      {"Gemm", 17, {"a", "b"}, "alpha", [](auto& n) { Int(n, "alpha", 2); }, "FLOAT", "INT"},
      {"Gemm", 17, {"a", "b"}, "transA", [](auto& n) { Float(n, "transA", 1); }, "INT", "FLOAT"},
      {"Concat", 17, {"a", "b"}, "axis", [](auto& n) { Str(n, "axis", "0"); }, "INT", "STRING"},
      {"Softmax", 17, {"x"}, "axis", [](auto& n) { Ints(n, "axis", {1}); }, "INT", "INTS"},
      {"LeakyRelu", 17, {"x"}, "alpha", [](auto& n) { Str(n, "alpha", "0.1"); }, "FLOAT", "STRING"},
      {"Cast", 17, {"x"}, "to", [](auto& n) { Str(n, "to", "FLOAT"); }, "INT", "STRING"},
      {"Flatten", 17, {"x"}, "axis", [](auto& n) { Float(n, "axis", 1); }, "INT", "FLOAT"},
      {"Gather", 17, {"x", "i"}, "axis", [](auto& n) { Float(n, "axis", 0); }, "INT", "FLOAT"},
      {"Squeeze", 11, {"x"}, "axes", [](auto& n) { Int(n, "axes", 0); }, "INTS", "INT"},
      {"ReduceSum", 11, {"x"}, "keepdims", [](auto& n) { Float(n, "keepdims", 1); }, "INT", "FLOAT"},
      {"TopK", 17, {"x", "k"}, "axis", [](auto& n) { Str(n, "axis", "-1"); }, "INT", "STRING"},
      {"Elu", 17, {"x"}, "alpha", [](auto& n) { Floats(n, "alpha", {1}); }, "FLOAT", "FLOATS"},
      {"MaxPool", 17, {"x"}, "kernel_shape", [](auto& n) { Int(n, "kernel_shape", 2); }, "INTS", "INT"},
      {"Resize", 17, {"x", "", "s"}, "mode", [](auto& n) { Int(n, "mode", 1); }, "STRING", "INT"},
      {"If", 17, {"c"}, "then_branch", [](auto& n) { Int(n, "then_branch", 1); }, "GRAPH", "INT"},
      {"Loop", 17, {"m", "c"}, "body", [](auto& n) { Float(n, "body", 0); }, "GRAPH", "FLOAT"},
      {"Split", 13, {"x"}, "axis", [](auto& n) { Ints(n, "axis", {0}); }, "INT", "INTS"},
  };
  for (const auto& w : wrong_types) {
    b.Node(std::string("wrong_type_") + w.op + "_" + w.attribute, "the spec gives the attribute another type",
           w.opset, w.op, w.inputs, 1, w.set,
           {std::string("attribute '") + w.attribute + "' must be " + w.expected + ", not " + w.given});
  }

  // --- An attribute named twice.
  struct Twice {
    const char* op;
    std::vector<std::string> inputs;
    const char* attribute;
    Attrs set;
  };
  const std::vector<Twice> twice = {
      {"Conv", {"x", "w"}, "strides", [](auto& n) { Ints(n, "strides", {1, 1}), Ints(n, "strides", {2, 2}); }},
      {"Gemm", {"a", "b"}, "alpha", [](auto& n) { Float(n, "alpha", 1), Float(n, "alpha", 2); }},
      {"Transpose", {"x"}, "perm", [](auto& n) { Ints(n, "perm", {0, 1}), Ints(n, "perm", {1, 0}); }},
      {"Softmax", {"x"}, "axis", [](auto& n) { Int(n, "axis", 0), Int(n, "axis", 1); }},
      {"Concat", {"a", "b"}, "axis", [](auto& n) { Int(n, "axis", 0), Int(n, "axis", 1); }},
      {"Cast", {"x"}, "to", [](auto& n) { Int(n, "to", 1), Int(n, "to", 7); }},
      {"LeakyRelu", {"x"}, "alpha", [](auto& n) { Float(n, "alpha", 0.1f), Float(n, "alpha", 0.2f); }},
  };
  for (const auto& t : twice) {
    b.Node(std::string("attribute_twice_") + t.op, "an attribute name must be unique within a node (IR.md)", 17, t.op,
           t.inputs, 1, t.set, {std::string("attribute '") + t.attribute + "' is given twice"});
  }

  // --- An attribute the operator does not have.
  struct Unknown {
    const char* op;
    int opset;
    std::vector<std::string> inputs;
    const char* attribute;
  };
  const std::vector<Unknown> unknown = {
      {"Relu", 17, {"x"}, "alpha"},          {"Add", 17, {"a", "b"}, "broadcast"}, {"MatMul", 17, {"a", "b"}, "transA"},
      {"Identity", 17, {"x"}, "foo"},        {"Softmax", 17, {"x"}, "dim"},        {"Conv", 17, {"x", "w"}, "padding"},
      {"Sigmoid", 17, {"x"}, "beta"},        {"Split", 18, {"x"}, "split"},        {"ReduceSum", 18, {"x"}, "axes"},
      {"Squeeze", 13, {"x"}, "axes"},
  };
  for (const auto& u : unknown) {
    b.Node(std::string("unknown_attribute_") + u.op + "_" + u.attribute, "the operator's schema has no such attribute",
           u.opset, u.op, u.inputs, 1, [a = std::string(u.attribute)](auto& n) { Int(n, a, 1); },
           {std::string("unknown attribute '") + u.attribute + "'"});
  }

  // --- A required attribute missing.
  struct Missing {
    const char* op;
    std::vector<std::string> inputs;
    const char* attribute;
  };
  const std::vector<Missing> missing = {
      {"Cast", {"x"}, "to"},          {"Loop", {"m", "c"}, "body"}, {"Scan", {"x"}, "body"},
      {"LRN", {"x"}, "size"},         {"Concat", {"a", "b"}, "axis"}, {"DepthToSpace", {"x"}, "blocksize"},
      {"SpaceToDepth", {"x"}, "blocksize"},
  };
  for (const auto& mi : missing) {
    b.Node(std::string("missing_attribute_") + mi.op + "_" + mi.attribute, "the spec marks the attribute required", 17,
           mi.op, mi.inputs, 1, nullptr, {std::string("required attribute '") + mi.attribute + "' is missing"});
  }
  b.Node("missing_attribute_If_else_branch", "If needs both branches", 17, "If", {"c"}, 1,
         [](auto& n) { SetGraphAttr(n, "then_branch"); }, {"required attribute 'else_branch' is missing"});

  // --- A value the spec does not allow.
  struct Value {
    const char* name;
    const char* op;
    int opset;
    std::vector<std::string> inputs;
    int outputs;
    Attrs set;
    const char* fragment;
  };
  auto scan = [](Attrs more) {
    return [more](onnx::NodeProto& n) {
      GraphBuilder body = SetGraphAttr(n, "body");
      body.Input("s", DataType::kFloat, {});
      body.Node("Identity", {"s"}, {"o"});
      body.Output("o", DataType::kFloat, {});
      Int(n, "num_scan_inputs", 1);
      more(n);
    };
  };
  const std::vector<Value> values = {
      {"scan_input_direction_2", "Scan", 17, {"x"}, 1, scan([](auto& n) { Ints(n, "scan_input_directions", {2}); }),
       "attribute 'scan_input_directions' must be 0 (forward) or 1 (reverse) (got 2)"},
      {"scan_input_direction_negative", "Scan", 17, {"x"}, 1,
       scan([](auto& n) { Ints(n, "scan_input_directions", {-1}); }),
       "attribute 'scan_input_directions' must be 0 (forward) or 1 (reverse) (got -1)"},
      {"scan_output_direction_5", "Scan", 17, {"x"}, 1, scan([](auto& n) { Ints(n, "scan_output_directions", {5}); }),
       "attribute 'scan_output_directions' must be 0 (forward) or 1 (reverse) (got 5)"},
      {"scan_num_scan_inputs_past_inputs", "Scan", 17, {"x"}, 1,
       [](auto& n) {
         SetGraphAttr(n, "body");
         Int(n, "num_scan_inputs", 4);
       },
       "attribute 'num_scan_inputs' is 4 but the node has only 1 inputs"},
      {"scan_num_scan_inputs_0", "Scan", 17, {"x"}, 1,
       [](auto& n) {
         SetGraphAttr(n, "body");
         Int(n, "num_scan_inputs", 0);
       },
       "attribute 'num_scan_inputs' must be at least 1 (got 0)"},
      {"split_num_outputs_0", "Split", 18, {"x"}, 1, [](auto& n) { Int(n, "num_outputs", 0); },
       "attribute 'num_outputs' must be at least 1 (got 0)"},
      {"split_num_outputs_negative", "Split", 18, {"x"}, 1, [](auto& n) { Int(n, "num_outputs", -2); },
       "attribute 'num_outputs' must be at least 1 (got -2)"},
      {"split_num_outputs_not_outputs", "Split", 18, {"x"}, 2, [](auto& n) { Int(n, "num_outputs", 3); },
       "attribute 'num_outputs' is 3 but the node has 2 outputs"},
      {"split_num_outputs_and_split", "Split", 18, {"x", "s"}, 2, [](auto& n) { Int(n, "num_outputs", 2); },
       "attribute 'num_outputs' and input 'split' are both given"},
      {"conv_transpose_output_padding_1_stride_1", "ConvTranspose", 17, {"x", "w"}, 1,
       [](auto& n) { Ints(n, "output_padding", {1, 0}); },
       "attribute 'output_padding' [1, 0] must be non-negative and smaller than the stride 1 or the dilation 1 of axis 0"},
      {"conv_transpose_output_padding_equal_stride", "ConvTranspose", 17, {"x", "w"}, 1,
       [](auto& n) { Ints(n, "strides", {2, 2}), Ints(n, "output_padding", {0, 2}); },
       "smaller than the stride 2 or the dilation 1 of axis 1"},
      {"conv_transpose_output_padding_negative", "ConvTranspose", 17, {"x", "w"}, 1,
       [](auto& n) { Ints(n, "strides", {2, 2}), Ints(n, "output_padding", {-1, 0}); },
       "attribute 'output_padding' [-1, 0] must be non-negative"},
      {"conv_strides_0", "Conv", 17, {"x", "w"}, 1, [](auto& n) { Ints(n, "strides", {1, 0}); },
       "attribute 'strides' must be at least 1 (got 0)"},
      {"conv_dilations_0", "Conv", 17, {"x", "w"}, 1, [](auto& n) { Ints(n, "dilations", {0, 1}); },
       "attribute 'dilations' must be at least 1 (got 0)"},
      {"conv_kernel_shape_negative", "Conv", 17, {"x", "w"}, 1, [](auto& n) { Ints(n, "kernel_shape", {-3, 3}); },
       "attribute 'kernel_shape' must be at least 1 (got -3)"},
      {"conv_pads_negative", "Conv", 17, {"x", "w"}, 1, [](auto& n) { Ints(n, "pads", {0, -1, 0, 0}); },
       "attribute 'pads' must be at least 0 (got -1)"},
      {"conv_group_0", "Conv", 17, {"x", "w"}, 1, [](auto& n) { Int(n, "group", 0); },
       "attribute 'group' must be at least 1 (got 0)"},
      {"conv_auto_pad_same", "Conv", 17, {"x", "w"}, 1, [](auto& n) { Str(n, "auto_pad", "SAME"); },
       "attribute 'auto_pad' must be one of NOTSET, SAME_UPPER, SAME_LOWER, VALID (got 'SAME')"},
      {"max_pool_ceil_mode_2", "MaxPool", 17, {"x"}, 1,
       [](auto& n) { Ints(n, "kernel_shape", {2}), Int(n, "ceil_mode", 2); },
       "attribute 'ceil_mode' must be 0 or 1 (got 2)"},
      {"max_pool_strides_negative", "MaxPool", 17, {"x"}, 1,
       [](auto& n) { Ints(n, "kernel_shape", {2}), Ints(n, "strides", {-1}); },
       "attribute 'strides' must be at least 1 (got -1)"},
      {"average_pool_count_include_pad_7", "AveragePool", 17, {"x"}, 1,
       [](auto& n) { Ints(n, "kernel_shape", {2}), Int(n, "count_include_pad", 7); },
       "attribute 'count_include_pad' must be 0 or 1 (got 7)"},
      {"cast_to_0", "Cast", 17, {"x"}, 1, [](auto& n) { Int(n, "to", 0); },
       "attribute 'to' is not a tensor element type (got 0)"},
      {"cast_to_99", "Cast", 17, {"x"}, 1, [](auto& n) { Int(n, "to", 99); },
       "attribute 'to' is not a tensor element type (got 99)"},
      {"cast_saturate_3", "Cast", 19, {"x"}, 1, [](auto& n) { Int(n, "to", 1), Int(n, "saturate", 3); },
       "attribute 'saturate' must be 0 or 1 (got 3)"},
      {"top_k_largest_2", "TopK", 17, {"x", "k"}, 2, [](auto& n) { Int(n, "largest", 2); },
       "attribute 'largest' must be 0 or 1 (got 2)"},
      {"depth_to_space_mode", "DepthToSpace", 17, {"x"}, 1,
       [](auto& n) { Int(n, "blocksize", 2), Str(n, "mode", "XYZ"); },
       "attribute 'mode' must be one of DCR, CRD (got 'XYZ')"},
      {"depth_to_space_blocksize_0", "DepthToSpace", 17, {"x"}, 1, [](auto& n) { Int(n, "blocksize", 0); },
       "attribute 'blocksize' must be at least 1 (got 0)"},
      {"space_to_depth_blocksize_negative", "SpaceToDepth", 17, {"x"}, 1, [](auto& n) { Int(n, "blocksize", -2); },
       "attribute 'blocksize' must be at least 1 (got -2)"},
      {"pad_mode_mirror", "Pad", 17, {"x", "p"}, 1, [](auto& n) { Str(n, "mode", "mirror"); },
       "attribute 'mode' must be one of constant, reflect, edge, wrap (got 'mirror')"},
      {"resize_mode_area", "Resize", 17, {"x", "", "s"}, 1, [](auto& n) { Str(n, "mode", "area"); },
       "attribute 'mode' must be one of nearest, linear, cubic (got 'area')"},
      {"resize_nearest_mode_up", "Resize", 17, {"x", "", "s"}, 1, [](auto& n) { Str(n, "nearest_mode", "up"); },
       "attribute 'nearest_mode' must be one of"},
      {"resize_coordinate_mode", "Resize", 17, {"x", "", "s"}, 1,
       [](auto& n) { Str(n, "coordinate_transformation_mode", "center"); },
       "attribute 'coordinate_transformation_mode' must be one of"},
      {"grid_sample_padding_wrap", "GridSample", 17, {"x", "g"}, 1, [](auto& n) { Str(n, "padding_mode", "wrap"); },
       "attribute 'padding_mode' must be one of zeros, border, reflection (got 'wrap')"},
      {"lstm_direction_both", "LSTM", 17, {"x", "w", "r"}, 1,
       [](auto& n) { Int(n, "hidden_size", 2), Str(n, "direction", "both"); },
       "attribute 'direction' must be one of forward, reverse, bidirectional (got 'both')"},
      {"gru_hidden_size_0", "GRU", 17, {"x", "w", "r"}, 1, [](auto& n) { Int(n, "hidden_size", 0); },
       "attribute 'hidden_size' must be at least 1 (got 0)"},
      {"rnn_layout_2", "RNN", 17, {"x", "w", "r"}, 1, [](auto& n) { Int(n, "hidden_size", 2), Int(n, "layout", 2); },
       "attribute 'layout' must be 0 or 1 (got 2)"},
      {"scatter_elements_reduction_avg", "ScatterElements", 18, {"x", "i", "u"}, 1,
       [](auto& n) { Str(n, "reduction", "avg"); },
       "attribute 'reduction' must be one of none, add, mul, max, min (got 'avg')"},
      {"eye_like_dtype_0", "EyeLike", 17, {"x"}, 1, [](auto& n) { Int(n, "dtype", 0); },
       "attribute 'dtype' is not a tensor element type (got 0)"},
      {"random_normal_dtype_30", "RandomNormal", 17, {}, 1, [](auto& n) { Ints(n, "shape", {2}), Int(n, "dtype", 30); },
       "attribute 'dtype' is not a tensor element type (got 30)"},
      {"constant_two_values", "Constant", 17, {}, 1, [](auto& n) { Float(n, "value_float", 1), Int(n, "value_int", 1); },
       "exactly one value attribute must be given (got 2)"},
      {"constant_no_value", "Constant", 17, {}, 1, nullptr, "exactly one value attribute must be given (got 0)"},
  };
  for (const auto& v : values) {
    b.Node(std::string("value_") + v.name, "the spec does not allow this value", v.opset, v.op, v.inputs, v.outputs,
           v.set, {v.fragment});
  }

  // --- Too few or too many inputs or outputs; a required input left empty.
  struct Count {
    const char* op;
    int opset;
    std::vector<std::string> inputs;
    int outputs;
    const char* fragment;
    Attrs set = nullptr;  // the required attributes, so that the count is the only fault
  };
  const std::vector<Count> counts = {
      {"Relu", 17, {"a", "b"}, 1, "Relu-14 takes 1 inputs, not 2"},
      {"Relu", 17, {}, 1, "Relu-14 takes 1 inputs, not 0"},
      {"Add", 17, {"a"}, 1, "Add-14 takes 2 inputs, not 1"},
      {"Add", 17, {"a", "b", "c"}, 1, "Add-14 takes 2 inputs, not 3"},
      {"MatMul", 17, {"a", "b", "c"}, 1, "MatMul-13 takes 2 inputs, not 3"},
      {"Gemm", 17, {"a"}, 1, "Gemm-13 takes 2 to 3 inputs, not 1"},
      {"Gemm", 17, {"a", "b", "c", "d"}, 1, "Gemm-13 takes 2 to 3 inputs, not 4"},
      {"Conv", 17, {"x"}, 1, "Conv-11 takes 2 to 3 inputs, not 1"},
      {"Conv", 17, {"x", "w", "b", "z"}, 1, "Conv-11 takes 2 to 3 inputs, not 4"},
      {"Concat", 17, {}, 1, "Concat-13 takes 1 or more inputs, not 0", [](auto& n) { Int(n, "axis", 0); }},
      {"Where", 17, {"c", "x"}, 1, "Where-16 takes 3 inputs, not 2"},
      {"Clip", 17, {"x", "a", "b", "c"}, 1, "Clip-13 takes 1 to 3 inputs, not 4"},
      {"Reshape", 17, {"x"}, 1, "Reshape-14 takes 2 inputs, not 1"},
      {"Gather", 17, {"x"}, 1, "Gather-13 takes 2 inputs, not 1"},
      {"Transpose", 17, {"x", "p"}, 1, "Transpose-13 takes 1 inputs, not 2"},
      {"BatchNormalization", 17, {"x", "s", "b", "m"}, 1, "BatchNormalization-15 takes 5 inputs, not 4"},
      {"Relu", 17, {"x"}, 2, "Relu-14 has 1 outputs, not 2"},
      {"Add", 17, {"a", "b"}, 0, "Add-14 has 1 outputs, not 0"},
      {"Dropout", 17, {"x"}, 3, "Dropout-13 has 1 to 2 outputs, not 3"},
      {"TopK", 17, {"x", "k"}, 1, "TopK-11 has 2 outputs, not 1"},
      {"Split", 17, {"x"}, 0, "Split-13 has 1 or more outputs, not 0"},
      {"MaxPool", 17, {"x"}, 3, "MaxPool-12 has 1 to 2 outputs, not 3", [](auto& n) { Ints(n, "kernel_shape", {2}); }},
      {"Shape", 17, {"x"}, 2, "Shape-15 has 1 outputs, not 2"},
      {"Identity", 17, {"x"}, 0, "Identity-16 has 1 outputs, not 0"},
      {"Conv", 17, {"x", ""}, 1, "input 1 ('W') is required but empty"},
      {"Gemm", 17, {"", "b"}, 1, "input 0 ('A') is required but empty"},
      {"Where", 17, {"c", "", "y"}, 1, "input 1 ('X') is required but empty"},
  };
  for (const auto& c : counts) {
    std::string name = std::string("count_") + c.op + "_" + std::to_string(c.inputs.size()) + "_in_" +
                       std::to_string(c.outputs) + "_out";
    for (const auto& i : c.inputs) name += i.empty() ? "_empty" : "";
    b.Node(name, "the operator's schema fixes how many inputs and outputs it has", c.opset, c.op, c.inputs,
           c.outputs, c.set, {c.fragment});
  }

  // --- Types through the graph, subgraphs included.
  const DataType F = DataType::kFloat, L = DataType::kInt64;
  b.Load("type_output_declared_wrong", "the graph output is declared int64 but Relu of a float is float",
         [=] { return Typed("Relu", {{"x", F}}, {{"y", L}}); },
         {"graph", "output 'y' is declared int64 but the graph produces float"});
  b.Load("type_add_mixed", "Add's inputs share the type variable T",
         [=] { return Typed("Add", {{"a", F}, {"b", L}}, {{"y", F}}); },
         {"node 'victim' (Add)", "input 1 ('b') is int64 but input 0 ('a') is float (both of type T)"});
  b.Load("type_sqrt_of_int64", "Sqrt is defined for floating types only",
         [=] { return Typed("Sqrt", {{"x", L}}, {{"y", L}}); },
         {"node 'victim' (Sqrt)", "input 0 ('x') is int64, which Sqrt-13 does not allow for T"});
  b.Load("type_matmul_bool", "MatMul is defined for numbers",
         [=] { return Typed("MatMul", {{"a", DataType::kBool}, {"b", DataType::kBool}}, {{"y", DataType::kBool}}); },
         {"node 'victim' (MatMul)", "input 0 ('a') is bool, which MatMul-13 does not allow for T"});
  b.Load("type_gather_float_indices", "Gather's indices are int32 or int64",
         [=] { return Typed("Gather", {{"x", F}, {"i", F}}, {{"y", F}}); },
         {"node 'victim' (Gather)", "input 1 ('i') is float, which Gather-13 does not allow for Tind"});
  b.Load("type_reshape_float_shape", "Reshape's shape is int64",
         [=] { return Typed("Reshape", {{"x", F}, {"s", F}}, {{"y", F}}); },
         {"node 'victim' (Reshape)", "input 1 ('s') is float but Reshape-14 takes tensor(int64)"});
  b.Load("type_where_condition_float", "Where's condition is bool",
         [=] { return Typed("Where", {{"c", F}, {"x", F}, {"y", F}}, {{"z", F}}); },
         {"node 'victim' (Where)", "input 0 ('c') is float, which Where-16 does not allow for B"});
  b.Load("type_shape_output_declared_float", "Shape returns int64",
         [=] { return Typed("Shape", {{"x", F}}, {{"y", F}}); },
         {"output 'y' is declared float but the graph produces int64"});
  auto branch = [](const std::string& from, DataType type) {
    return [=](GraphBuilder& g) {
      g.Node("Identity", {from}, {from + "_out"});
      g.Output(from + "_out", type, {2});
    };
  };
  b.Load("if_branch_output_count", "an If branch must return one value per node output",
         [=] {
           return IfModel(1, F, branch("x", F), [](GraphBuilder& g) {
             g.Node("Identity", {"x"}, {"e0"});
             g.Node("Identity", {"x"}, {"e1"});
             g.Output("e0", DataType::kFloat, {2});
             g.Output("e1", DataType::kFloat, {2});
           });
         },
         {"node 'victim' (If)", "attribute 'else_branch' returns 2 outputs; the node has 1"});
  b.Load("if_then_branch_no_outputs", "an If branch must return one value per node output",
         [=] { return IfModel(1, F, [](GraphBuilder&) {}, branch("x", F)); },
         {"node 'victim' (If)", "attribute 'then_branch' returns 0 outputs; the node has 1"});
  b.Load("if_branch_types_disagree", "both branches must return the same types",
         [=] { return IfModel(1, DataType::kUndefined, branch("x", F), branch("n", L)); },
         {"node 'victim' (If)", "output 0 is float in attribute 'then_branch' but int64 in attribute 'else_branch'"});
  b.Load("if_branch_declared_wrong", "a branch output is declared int64 but the branch returns a float",
         [=] { return IfModel(1, F, branch("x", L), branch("x", F)); },
         {"node 'victim' (If), attribute 'then_branch'", "output 'x_out' is declared int64 but the graph produces float"});
  b.Load("if_output_declared_wrong", "the node's output is declared int64 but both branches return float",
         [=] { return IfModel(1, L, branch("x", F), branch("x", F)); },
         {"output 'y0' is declared int64 but the graph produces float"});
  b.Load("loop_carried_type_changes", "a loop-carried value keeps its type from iteration to iteration",
         [=] {
           return LoopBody(F, [](GraphBuilder& g) {
             g.Node("Identity", {"c"}, {"c_out"});
             g.Node("Cast", {"v"}, {"v_out"}).add_attribute()->CopyFrom([] {
               onnx::AttributeProto a;
               a.set_name("to");
               a.set_type(onnx::AttributeProto::INT);
               a.set_i(7);
               return a;
             }());
             g.Output("c_out", DataType::kBool, {});
             g.Output("v_out", DataType::kInt64, {2});
           });
         },
         {"node 'victim' (Loop)", "loop-carried value 0 ('v') enters attribute 'body' as float but leaves it as int64"});
  b.Load("loop_body_input_declared_wrong", "the body's carried input must have the type the node gives it",
         [=] {
           return LoopBody(L, [](GraphBuilder& g) {
             g.Node("Identity", {"c"}, {"c_out"});
             g.Node("Identity", {"v"}, {"v_out"});
             g.Output("c_out", DataType::kBool, {});
             g.Output("v_out", DataType::kInt64, {2});
           });
         },
         {"node 'victim' (Loop), attribute 'body'", "input 'v' is declared int64 but is given float"});
  b.Load("loop_body_output_count", "the body returns the condition, the carried values and the scan outputs",
         [=] {
           return LoopBody(F, [](GraphBuilder& g) {
             g.Node("Identity", {"c"}, {"c_out"});
             g.Output("c_out", DataType::kBool, {});
           });
         },
         {"node 'victim' (Loop)", "attribute 'body' returns 1 outputs; the node has 1 outputs, so it must return 2"});
  b.Load("loop_condition_float", "the body's first output is the bool condition",
         [=] {
           return LoopBody(F, [](GraphBuilder& g) {
             g.Node("Identity", {"v"}, {"v_out"});
             g.Node("ReduceSum", {"v"}, {"c_out"});
             g.Output("c_out", DataType::kUndefined, {}, false);
             g.Output("v_out", DataType::kFloat, {2});
           });
         },
         {"node 'victim' (Loop)", "attribute 'body' returns its condition as float, not bool"});
  b.Load("scan_state_type_changes", "a Scan state value keeps its type",
         [=] {
           ModelBuilder m(17);
           m.Input("s", DataType::kFloat, {2});
           m.Input("xs", DataType::kFloat, {3, 2});
           auto& node = m.Node("Scan", {"s", "xs"}, {"s_final", "ys"}, "victim");
           tools::SetAttr(node, "num_scan_inputs", int64_t{1});
           GraphBuilder body = SetGraphAttr(node, "body");
           body.Input("st", DataType::kFloat, {2});
           body.Input("x", DataType::kFloat, {2});
           body.Node("Shape", {"st"}, {"st_out"});
           body.Node("Identity", {"x"}, {"y"});
           body.Output("st_out", DataType::kUndefined, {}, false);
           body.Output("y", DataType::kFloat, {2});
           m.Output("s_final", DataType::kUndefined, {}, false);
           m.Output("ys", DataType::kFloat, {}, false);
           return m.Serialize();
         },
         {"node 'victim' (Scan)", "state value 0 ('st') enters attribute 'body' as float but leaves it as int64"});
  b.Load("scan_body_input_count", "the body takes one input per state and scan input",
         [=] {
           ModelBuilder m(17);
           m.Input("xs", DataType::kFloat, {3, 2});
           auto& node = m.Node("Scan", {"xs"}, {"ys"}, "victim");
           tools::SetAttr(node, "num_scan_inputs", int64_t{1});
           GraphBuilder body = SetGraphAttr(node, "body");
           body.Input("x", DataType::kFloat, {2});
           body.Input("extra", DataType::kFloat, {2});
           body.Node("Add", {"x", "extra"}, {"y"});
           body.Output("y", DataType::kFloat, {2});
           m.Output("ys", DataType::kFloat, {}, false);
           return m.Serialize();
         },
         {"node 'victim' (Scan)", "attribute 'body' takes 2 inputs; the node gives it 1"});

  // --- Every run ends: a trip count past the iteration limit is refused before the first one.
  b.cases.push_back(SchemaCase{"loop_trip_count_past_limit", "M = 2^40 is past the default limit of 2^20 iterations",
                               [](const std::string&) { return LoopOf(int64_t{1} << 40); },
                               StatusCode::kResourceExhausted,
                               {"node 'victim' (Loop)", "the trip count M = 1099511627776 exceeds the limit of 1048576"},
                               /*at_run=*/true});

  // --- External data that cannot be trusted.
  b.cases.push_back(SchemaCase{"external_data_fifo", "a FIFO would block the load until a writer came",
                               [](const std::string& dir) {
                                 mkfifo((dir + "/pipe.bin").c_str(), 0644);
                                 return ExternalModel("pipe.bin");
                               },
                               StatusCode::kInvalidArgument, {"tensor 'w'", "'pipe.bin' is not a regular file"}});
  b.cases.push_back(SchemaCase{"external_data_directory", "a folder is no weights file",
                               [](const std::string& dir) {
                                 mkdir((dir + "/sub").c_str(), 0755);
                                 return ExternalModel("sub");
                               },
                               StatusCode::kInvalidArgument, {"tensor 'w'", "'sub' is not a regular file"}});
  b.cases.push_back(SchemaCase{"external_data_nul_byte", "the file system would stop at the NUL",
                               [](const std::string& dir) {
                                 std::ofstream(dir + "/w.bin", std::ios::binary).write("\0\0\0\0\0\0\0\0", 8);
                                 return ExternalModel(std::string("w.bin\0.txt", 10));
                               },
                               StatusCode::kInvalidArgument, {"tensor 'w'", "location contains a NUL byte"}});
  return b.cases;
}

}  // namespace onnxflow::hostile
