// Hostile models: each is given to run_model in a subprocess, which must refuse it with exit 2 and
// a one-line reason on stderr, within a time limit, without a signal. The models are written in
// code (tools/model_builder.h) into the test's temporary folder; nothing here is committed data.
//
// Families: truncated and bit-flipped files, rule-breaking graphs, lying tensors, escaping external
// data, out-of-range indices and shapes fed to data-dependent kernels, huge allocations, deep
// nesting, integer division by zero and INT64_MIN / -1.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using tools::GraphBuilder;
using tools::ModelBuilder;
using tools::SetAttr;
using tools::SetGraphAttr;

constexpr int kTimeLimitSeconds = 30;

std::string TmpRoot() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// One hostile case: `make` writes whatever it needs into `dir` and returns run_model's arguments.
struct Case {
  std::string name;
  std::function<std::string(const std::string& dir)> make;
  bool may_succeed = false;  // defined behaviour is also acceptable (exit 0); never a crash
  // What the one-line refusal must say (Reasons()): the status code, and a fragment naming the
  // node, attribute, input or limit. A case refused for another reason fails.
  std::string code;
  std::string reason;
};

// A model file, plus inputs given as tensors (written as .pb and passed with --input); the rest
// are filled by --fill.
std::string ModelArgs(const std::string& dir, const std::string& bytes,
                      const std::vector<std::pair<std::string, Tensor>>& inputs = {}) {
  const std::string model = dir + "/model.onnx";
  WriteBytes(model, bytes);
  std::string args = model + " --fill";
  for (const auto& [name, value] : inputs) {
    const std::string path = dir + "/" + name + ".pb";
    EXPECT_TRUE(WriteValueFile(path, Value(value), name).ok());
    args += " --input " + name + "=" + path;
  }
  return args;
}

Case Simple(const std::string& name, std::function<std::string()> bytes,
            std::vector<std::pair<std::string, Tensor>> inputs = {}) {
  return Case{name, [bytes, inputs](const std::string& dir) { return ModelArgs(dir, bytes(), inputs); }};
}

Tensor I64(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v); }
Tensor I64s(const Shape& shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(shape, v); }
Tensor F32s(const Shape& shape, std::vector<float> v) { return Tensor::FromVector<float>(shape, v); }

// A valid model with a weight, the base for file-level damage.
std::string ValidModel() {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2, 3});
  std::vector<float> w(3 * 4);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.25f;
  m.Initializer("w", F32s({3, 4}, w));
  m.Node("MatMul", {"x", "w"}, {"y"});
  m.Node("Relu", {"y"}, {"z"});
  m.Output("z", DataType::kFloat, {2, 4});
  return m.Serialize();
}

// One node whose inputs all come from the command line (so nothing is folded at load).
std::string OneNode(int opset, const std::string& op, const std::vector<std::pair<std::string, DataType>>& ins,
                    int outputs, const std::function<void(onnx::NodeProto&)>& attrs = nullptr,
                    DataType out_type = DataType::kFloat, const std::vector<DataType>& out_types = {}) {
  ModelBuilder m(opset);
  std::vector<std::string> names, outs;
  for (const auto& [name, type] : ins) {
    if (name.empty()) {
      names.push_back("");
      continue;
    }
    m.Input(name, type, {}, /*rank_known=*/false);
    names.push_back(name);
  }
  for (int i = 0; i < outputs; ++i) outs.push_back("out" + std::to_string(i));
  auto& node = m.Node(op, names, outs, "victim");
  if (attrs) attrs(node);
  for (size_t i = 0; i < outs.size(); ++i) m.Output(outs[i], i < out_types.size() ? out_types[i] : out_type, {}, false);
  return m.Serialize();
}

// A raw TensorProto as an initializer of a model that reads it.
std::string LyingInitializer(const std::function<void(onnx::TensorProto&)>& fill) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1});
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name("w");
  fill(*t);
  m.Node("Identity", {"w"}, {"w2"});
  m.Node("Add", {"x", "w2"}, {"y"});
  m.Output("y", DataType::kFloat, {}, false);
  return m.Serialize();
}

// An external-data initializer whose location and offsets are chosen by the case; `files` are
// created in the model's folder first.
Case External(const std::string& name, const std::string& location, int64_t offset, int64_t length,
              bool make_secret_symlink = false) {
  return Case{name, [=](const std::string& dir) {
                const std::string secret = TmpRoot() + "/secret.bin";
                WriteBytes(secret, std::string(4096, 'S'));
                WriteBytes(dir + "/weights.bin", std::string(16, '\0'));
                if (make_secret_symlink) (void)!symlink(secret.c_str(), (dir + "/link.bin").c_str());
                ModelBuilder m(17);
                m.Input("x", DataType::kFloat, {4});
                auto* t = m.proto().mutable_graph()->add_initializer();
                t->set_name("w");
                t->set_data_type(static_cast<int>(DataType::kFloat));
                t->add_dims(4);
                t->set_data_location(onnx::TensorProto::EXTERNAL);
                auto add = [t](const std::string& k, const std::string& v) {
                  auto* e = t->add_external_data();
                  e->set_key(k);
                  e->set_value(v);
                };
                add("location", location);
                if (offset >= 0) add("offset", std::to_string(offset));
                if (length >= 0) add("length", std::to_string(length));
                m.Node("Add", {"x", "w"}, {"y"});
                m.Output("y", DataType::kFloat, {4});
                return ModelArgs(dir, m.Serialize());
              }};
}

// If nodes nested `depth` deep.
std::string NestedIf(int depth) {
  ModelBuilder m(17);
  m.Input("c", DataType::kBool, {});
  m.Input("x", DataType::kFloat, {1});
  std::function<void(GraphBuilder&, int)> nest = [&](GraphBuilder& g, int level) {
    auto& node = g.Node("If", {"c"}, {"y" + std::to_string(level)});
    for (const char* branch : {"then_branch", "else_branch"}) {
      GraphBuilder body = SetGraphAttr(node, branch);
      if (level + 1 < depth && std::string(branch) == "then_branch") {  // one chain, not 2^depth graphs
        nest(body, level + 1);
        body.Node("Identity", {"y" + std::to_string(level + 1)}, {"r" + std::to_string(level)});
      } else {
        body.Node("Identity", {"x"}, {"r" + std::to_string(level)});
      }
      body.Output("r" + std::to_string(level), DataType::kFloat, {1});
    }
  };
  nest(m, 0);
  m.Output("y0", DataType::kFloat, {1});
  return m.Serialize();
}

// One node of the kernels added in the last session, its operands given (name, value, constant):
// constants become initializers (weights packed at load, another path than the same weights fed
// at run time); the rest are graph inputs written as files. An empty name is an absent input.
struct Operand {
  std::string name;
  Tensor value;
  bool constant = false;
};

Case NodeCase(const std::string& name, int opset, const std::string& op, const std::vector<Operand>& operands,
              int outputs, const std::function<void(onnx::NodeProto&)>& attrs = nullptr,
              const std::string& domain = "", DataType out_type = DataType::kFloat) {
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (const Operand& o : operands) {
    if (!o.name.empty() && !o.constant) inputs.emplace_back(o.name, o.value);
  }
  auto bytes = [=] {
    ModelBuilder m(opset);
    if (!domain.empty()) {
      auto* imp = m.proto().add_opset_import();
      imp->set_domain(domain);
      imp->set_version(1);
    }
    std::vector<std::string> names, outs;
    for (const Operand& o : operands) {
      names.push_back(o.name);
      if (o.name.empty()) continue;
      if (o.constant) {
        m.Initializer(o.name, o.value);
      } else {
        m.Input(o.name, o.value.dtype(), {}, /*rank_known=*/false);
      }
    }
    for (int i = 0; i < outputs; ++i) outs.push_back("out" + std::to_string(i));
    auto& node = m.Node(op, names, outs, "victim");
    if (!domain.empty()) node.set_domain(domain);
    if (attrs) attrs(node);
    for (const auto& out : outs) m.Output(out, out_type, {}, false);
    return m.Serialize();
  };
  return Simple(name, bytes, inputs);
}

// Deterministic values in [-1, 1) of `shape`.
Tensor Wave(const Shape& shape, int seed = 0) {
  std::vector<float> v(static_cast<size_t>(ElementCount(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i * 7 + seed * 13) * 0.37f);
  return F32s(shape, v);
}

// A Conv of 16 -> `channels` (constant weights: the blocked layout takes it) whose output `c` a
// node made by `tail` reads; X is [1, x_channels, 6, 6].
std::string BlockedConvThen(int opset, int64_t channels, const std::function<void(ModelBuilder&)>& tail,
                            int64_t x_channels = 16) {
  ModelBuilder m(opset);
  m.Input("x", DataType::kFloat, {1, x_channels, 6, 6});
  m.Initializer("w", Wave({channels, 16, 3, 3}, 1));
  m.Initializer("b", Wave({channels}, 2));
  auto& conv = m.Node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  SetAttr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  tail(m);
  return m.Serialize();
}

// Why each case must be refused: the status code and a fragment of run_model's one line naming the
// node, attribute, input or limit (no code: run_model refused the inputs before loading the model).
std::map<std::string, std::pair<std::string, std::string>> Reasons() {
  return {
      {"empty_file", {"InvalidArgument", "the model has no ir_version"}},
      {"sparse_initializer_negative_dims", {"InvalidArgument", "sparse initializer 'w' has dims [-4]"}},
      {"sparse_initializer_dims_overflow", {"InvalidArgument", "has too many elements"}},
      {"sparse_initializer_past_the_limit", {"ResourceExhausted", "sparse initializer 'w' of dims [1099511627776]"}},
      {"not_protobuf", {"InvalidArgument", "the file is not a valid ONNX model (protobuf parse failed)"}},
      {"truncated_1_of_9", {"InvalidArgument", "the file is not a valid ONNX model (protobuf parse failed)"}},
      {"truncated_2_of_9", {"InvalidArgument", "the file is not a valid ONNX model (protobuf parse failed)"}},
      {"truncated_3_of_9", {"InvalidArgument", "the file is not a valid ONNX model (protobuf parse failed)"}},
      {"truncated_5_of_9", {"InvalidArgument", "the file is not a valid ONNX model (protobuf parse failed)"}},
      {"truncated_8_of_9", {"InvalidArgument", "the file is not a valid ONNX model (protobuf parse failed)"}},
      {"truncated_last_byte", {"InvalidArgument", "the file is not a valid ONNX model (protobuf parse failed)"}},
      {"op_type_flipped", {"Unimplemented", "1 unsupported node: node 'y' (MatLul), domain 'ai.onnx', opset 17"}},
      {"huge_length_prefix", {"InvalidArgument", "the file is not a valid ONNX model (protobuf parse failed)"}},
      {"protobuf_recursion_300_levels", {"InvalidArgument", "the file is not a valid ONNX model (protobuf parse failed)"}},
      {"duplicate_output_name", {"InvalidArgument", "graph 'main': value 'y' is defined twice (again by node 'dup' (Neg))"}},
      {"node_output_shadows_input", {"InvalidArgument", "graph 'main': value 'x' is defined twice (again by node 'x' (Relu))"}},
      {"undefined_input", {"InvalidArgument", "node 'y' (Add): input 'nowhere' is not defined"}},
      {"cycle", {"InvalidArgument", "graph 'main' has a cycle through node 'a' (Add), node 'b' (Relu)"}},
      {"self_loop", {"InvalidArgument", "graph 'main' has a cycle through node 'a' (Add)"}},
      {"output_never_produced", {"InvalidArgument", "graph 'main': output 'ghost' is not produced by any node"}},
      {"unknown_op", {"Unimplemented", "1 unsupported node: node 'victim' (NoSuchOp), domain 'ai.onnx', opset 17"}},
      {"empty_op_type", {"Unimplemented", "1 unsupported node: node 'victim' (), domain 'ai.onnx', opset 17"}},
      {"attribute_wrong_type", {"InvalidArgument", "node 'victim' (Transpose): attribute 'perm' must be INTS, not STRING"}},
      {"attribute_type_field_lies", {"InvalidArgument", "node 'victim' (Concat): attribute 'axis' is declared INT but holds FLOAT"}},
      {"missing_required_attribute", {"InvalidArgument", "node 'victim' (Cast): required attribute 'to' is missing"}},
      {"too_many_inputs", {"InvalidArgument", "node 'victim' (Relu), Relu-14 takes 1 inputs, not 3"}},
      {"transpose_perm_out_of_range", {"InvalidArgument", "node 'victim' (Transpose): perm [0,7] is not a permutation of [0, 2)"}},
      {"opset_zero", {"InvalidArgument", "opset import of domain '' has invalid version 0"}},
      {"opset_from_the_future", {"InvalidArgument", "opset import of domain '' has invalid version 100000"}},
      {"opset_negative", {"InvalidArgument", "opset import of domain '' has invalid version -3"}},
      {"unknown_domain", {"InvalidArgument", "node 'y' (Relu) uses domain 'com.evil', which the model does not import"}},
      {"duplicate_opset_import", {"InvalidArgument", "domain '' is imported twice"}},
      {"ir_version_from_the_future", {"InvalidArgument", "IR version 999 is not supported (supported: 1 to 13)"}},
      {"graph_input_type_undefined", {"", "input 'x': cannot fill a tensor of undefined type"}},
      {"graph_input_type_999", {"InvalidArgument", "graph input 'x' declares an invalid element type (999)"}},
      {"graph_input_negative_dim", {"InvalidArgument", "graph 'main': graph input 'x' declares a negative dimension (-5)"}},
      {"graph_input_absurd_dims", {"", "input 'x': shape [1099511627776,1099511627776] has too many elements"}},
      {"function_recursion", {"InvalidArgument", "model-local functions call each other more than 32 levels deep (a recursive function?)"}},
      {"dims_larger_than_raw_data", {"InvalidArgument", "graph 'main': tensor 'w': its data holds fewer elements than its shape needs (1000)"}},
      {"dims_larger_than_float_data", {"InvalidArgument", "graph 'main': tensor 'w': its data holds fewer elements than its shape needs (7)"}},
      {"negative_dim", {"InvalidArgument", "graph 'main': tensor 'w': negative dimension in shape [-4]"}},
      {"dims_product_overflows", {"InvalidArgument", "graph 'main': tensor 'w': shape [4294967296,4294967296,2147483647] has too many elements"}},
      {"dims_product_wraps_to_small", {"InvalidArgument", "graph 'main': tensor 'w': shape [4294967296,4294967296] has too many elements"}},
      {"int64_max_dim", {"ResourceExhausted", "graph 'main': tensor 'w' of shape [9223372036854775807] exceeds the limit of 4294967296 bytes per tensor"}},
      {"data_type_999", {"InvalidArgument", "graph 'main': tensor 'w' has invalid data_type 999"}},
      {"data_type_negative", {"InvalidArgument", "graph 'main': tensor 'w' has invalid data_type -1"}},
      {"data_type_undefined", {"InvalidArgument", "graph 'main': tensor 'w' has invalid data_type 0"}},
      {"raw_data_odd_bytes_for_float", {"InvalidArgument", "graph 'main': tensor 'w': its data holds fewer elements than its shape needs (2)"}},
      {"int4_packed_too_short", {"InvalidArgument", "graph 'main': tensor 'w': its data holds fewer elements than its shape needs (9)"}},
      {"string_tensor_count_lies", {"InvalidArgument", "graph 'main': tensor 'w': tensor field string_data holds 1 values, its shape needs 5"}},
      {"segment_field", {"Unimplemented", "graph 'main': tensor 'w' is segmented; segmented tensors are not supported"}},
      {"lying_input_file", {"", "input 'x': tensor 'x' of shape [1099511627776] exceeds the limit of 1099511627776 bytes per tensor"}},
      {"input_file_wrong_type", {"InvalidArgument", "input 'x' has type int64, the model expects float32"}},
      {"external_dotdot", {"InvalidArgument", "graph 'main': external data of tensor 'w': location '../secret.bin' leaves the model's folder"}},
      {"external_dotdot_inside", {"InvalidArgument", "graph 'main': external data of tensor 'w': location 'sub/../../secret.bin' leaves the model's folder"}},
      {"external_absolute", {"InvalidArgument", "external data of tensor 'w': location '"}},
      {"external_etc_passwd", {"InvalidArgument", "graph 'main': external data of tensor 'w': location '/etc/passwd' must be a relative path"}},
      {"external_symlink_out", {"InvalidArgument", "graph 'main': external data of tensor 'w': location 'link.bin' resolves outside the model's folder"}},
      {"external_offset_past_end", {"InvalidArgument", "graph 'main': external data of tensor 'w': offset 4096 and length 16 exceed the size of 'weights.bin' (16"}},
      {"external_length_past_end", {"InvalidArgument", "graph 'main': external data of tensor 'w': offset 0 and length 1048576 exceed the size of 'weights.bin' (16"}},
      {"external_offset_plus_length_overflows", {"InvalidArgument", "offset '9223372036854775803'"}},
      {"external_negative_offset", {"InvalidArgument", "graph 'main': offset '-8' is not a non-negative integer"}},
      {"external_missing_file", {"NotFound", "graph 'main': external data of tensor 'w': file 'nope.bin' does not exist"}},
      {"external_directory", {"InvalidArgument", "external data of tensor 'w': location '.'"}},
      {"external_dev_zero", {"InvalidArgument", "graph 'main': external data of tensor 'w': location '/dev/zero' must be a relative path"}},
      {"external_empty_location", {"InvalidArgument", "graph 'main': external data of tensor 'w': location '' must be a relative path"}},
      {"external_short_for_dims", {"InvalidArgument", "graph 'main': tensor 'w': its data holds fewer elements than its shape needs (4)"}},
      {"gather_index_too_big", {"OutOfRange", "node 'victim' (Gather): input 'indices': index 5 is out of range for a dimension of size 3"}},
      {"gather_index_too_negative", {"OutOfRange", "node 'victim' (Gather): input 'indices': index -4 is out of range for a dimension of size 3"}},
      {"gather_index_int64_min", {"OutOfRange", "node 'victim' (Gather): input 'indices': index -9223372036854775808 is out of range for a dimension of size 3"}},
      {"gather_axis_out_of_range", {"InvalidArgument", "node 'victim' (Gather): axis 5 is out of range for rank 1"}},
      {"gather_elements_index", {"OutOfRange", "node 'victim' (GatherElements): input 'indices': index 9 is out of range for a dimension of size 2"}},
      {"gather_elements_rank_mismatch", {"InvalidArgument", "node 'victim' (GatherElements): input 'indices' [1] must have the rank of data [2,2]"}},
      {"gather_nd_index", {"OutOfRange", "node 'victim' (GatherND): input 'indices': index 7 is out of range for a dimension of size 2"}},
      {"gather_nd_index_too_long", {"InvalidArgument", "node 'victim' (GatherND): indices' last dim 3 exceeds data rank - batch_dims = 2"}},
      {"scatter_nd_index", {"OutOfRange", "node 'victim' (ScatterND): input 'indices': index 9 is out of range for a dimension of size 4"}},
      {"scatter_nd_updates_shape", {"InvalidArgument", "node 'victim' (ScatterND): input 'updates' has shape [1], expected [2]"}},
      {"scatter_elements_index", {"OutOfRange", "node 'victim' (ScatterElements): input 'indices': index -9 is out of range for a dimension of size 4"}},
      {"onehot_negative_depth", {"InvalidArgument", "node 'victim' (OneHot): input 'depth' must be a positive count, got -3.000000"}},
      {"onehot_huge_depth", {"ResourceExhausted", "node 'victim' (OneHot): output 0 of shape [3,1099511627776] (float32) exceeds the limit of 4294967296 bytes"}},
      {"slice_step_zero", {"InvalidArgument", "node 'victim' (Slice): input 'steps' has a zero step for axis 0"}},
      {"slice_axis_out_of_range", {"InvalidArgument", "node 'victim' (Slice): Slice axes: axis 3 is out of range for rank 1"}},
      {"slice_starts_ends_lengths_differ", {"InvalidArgument", "node 'victim' (Slice): starts has 2 entries but ends has 1"}},
      {"pad_negative_beyond_dim", {"InvalidArgument", "node 'victim' (Pad): pads -5, -5 on axis 0 of size 3 leave a negative size"}},
      {"pad_huge", {"ResourceExhausted", "node 'victim' (Pad): output 0 of shape [1099511627779] (float32) exceeds the limit of 4294967296 bytes per"}},
      {"pad_int64_max", {"InvalidArgument", "node 'victim' (Pad): pads on axis 0 are out of range"}},
      {"pad_wrong_length", {"InvalidArgument", "node 'victim' (Pad): pads has 3 entries, expected 2 * rank = 2"}},
      {"expand_huge", {"ResourceExhausted", "node 'victim' (Expand): output 0 of shape [1000000,1000000] (float32) exceeds the limit of 4294967296 bytes"}},
      {"expand_overflow", {"InvalidArgument", "node 'victim' (Expand): shape [1099511627776,1099511627776] has too many elements"}},
      {"expand_negative", {"InvalidArgument", "node 'victim' (Expand): input 'shape' has a negative dim -2"}},
      {"expand_incompatible", {"InvalidArgument", "node 'victim' (Expand): shapes [3] and [4] do not broadcast"}},
      {"tile_negative", {"InvalidArgument", "node 'victim' (Tile): input 'repeats' has a negative count -1"}},
      {"tile_huge", {"InvalidArgument", "node 'victim' (Tile): input 'repeats' makes axis 0 too large"}},
      {"tile_wrong_length", {"InvalidArgument", "node 'victim' (Tile): input 'repeats' has 2 entries for rank 1"}},
      {"reshape_two_minus_one", {"InvalidArgument", "node 'victim' (Reshape): shape [-1,-1] has more than one -1"}},
      {"reshape_count_mismatch", {"InvalidArgument", "node 'victim' (Reshape): cannot reshape input [4] (4 elements) to [3,3] (9 elements)"}},
      {"reshape_overflow", {"InvalidArgument", "node 'victim' (Reshape): shape [4294967296,4294967296,4] is too large"}},
      {"reshape_negative", {"InvalidArgument", "node 'victim' (Reshape): shape [-4,-1] has a negative dim -4"}},
      {"reshape_zero_copies_missing_dim", {"InvalidArgument", "node 'victim' (Reshape): shape [2,0,2] copies dim 1 (0) but the input [4] has rank 1"}},
      {"range_step_zero", {"InvalidArgument", "node 'victim' (Range): input 'delta' is zero"}},
      {"range_tiny_step", {"ResourceExhausted", "node 'victim' (Range): output 0 of shape [1000000028281933] (float32) exceeds the limit of 4294967296 bytes"}},
      {"range_int64_extremes", {"InvalidArgument", "node 'victim' (Range): Range has too many elements"}},
      {"range_nan_step", {"InvalidArgument", "node 'victim' (Range): Range bounds are NaN"}},
      {"range_infinite_limit", {"InvalidArgument", "node 'victim' (Range): Range has too many elements"}},
      {"constant_of_shape_huge", {"ResourceExhausted", "node 'victim' (ConstantOfShape): output 0 of shape [1000000,1000000] (float32) exceeds the limit of"}},
      {"constant_of_shape_negative", {"InvalidArgument", "node 'victim' (ConstantOfShape): input 'input' (the shape) has a negative dim -1"}},
      {"constant_of_shape_huge_folded", {"ResourceExhausted", "node 'big' (ConstantOfShape): output 0 of shape [1000000,1000000] (float32) exceeds the limit of 4294967296"}},
      {"topk_k_too_big", {"OutOfRange", "node 'victim' (TopK): k = 10 is outside [0, 3] for axis 0 of input shape [3]"}},
      {"topk_k_negative", {"OutOfRange", "node 'victim' (TopK): k = -1 is outside [0, 3] for axis 0 of input shape [3]"}},
      {"split_sizes_do_not_sum", {"InvalidArgument", "node 'victim' (Split): split sizes [3,3] sum to 6, not the axis size 4"}},
      {"split_negative_size", {"InvalidArgument", "node 'victim' (Split): split has a negative size -2"}},
      {"split_count_mismatch", {"InvalidArgument", "node 'victim' (Split): split has 3 entries but the node has 2 outputs"}},
      {"resize_huge_scales", {"ResourceExhausted", "node 'victim' (Resize): the output shape [1,1,2000000000,2000000000] exceeds the tensor size limit"}},
      {"resize_negative_scales", {"InvalidArgument", "node 'victim' (Resize): 'scales' value -2.000000 at 2 is not a positive number"}},
      {"resize_huge_sizes", {"ResourceExhausted", "node 'victim' (Resize): the output shape [1,1,2147483648,2147483648] exceeds the tensor size limit"}},
      {"resize_scales_wrong_length", {"InvalidArgument", "node 'victim' (Resize): 'scales' has 2 values, expected 4 for input shape [1,1,2,2]"}},
      {"nms_shape_mismatch", {"InvalidArgument", "node 'victim' (NonMaxSuppression): scores shape [1,1,5] does not match boxes [1,3,4] (expected [num_batches,"}},
      {"nms_boxes_not_4", {"InvalidArgument", "node 'victim' (NonMaxSuppression): boxes must be [num_batches, spatial_dimension, 4], got [1,2,3]"}},
      {"split_to_sequence_scalar", {"InvalidArgument", "node 'victim' (SplitToSequence): axis 0 is out of range for rank 0"}},
      {"gather_scalar_data", {"InvalidArgument", "node 'victim' (Gather): axis 0 is out of range for rank 0"}},
      {"concat_scalars", {"InvalidArgument", "node 'victim' (Concat): axis 0 is out of range for rank 0"}},
      {"depth_to_space_bad_blocksize", {"InvalidArgument", "node 'victim' (DepthToSpace): attribute 'blocksize' must be at least 1 (got 0)"}},
      {"concat_rank_mismatch", {"InvalidArgument", "node 'victim' (Concat): inputs have different ranks: [2] and [1,2]"}},
      {"matmul_inner_mismatch", {"InvalidArgument", "node 'victim' (MatMul): MatMul: inner dimensions differ, A [2,3] and B [2,3]"}},
      {"div_by_zero_int64", {"InvalidArgument", "node 'victim' (Div): integer division by zero (input B, element 0)"}},
      {"div_int64_min_by_minus_one", {"InvalidArgument", "node 'victim' (Div): integer division overflows: the smallest value divided by -1"}},
      {"div_by_zero_int32", {"InvalidArgument", "node 'victim' (Div): integer division by zero (input B, element 0)"}},
      {"mod_by_zero_int64", {"InvalidArgument", "node 'victim' (Mod): Mod: integer division by zero (input B, element 0)"}},
      {"mod_fmod_by_zero_int64", {"InvalidArgument", "node 'victim' (Mod): Mod: integer division by zero (input B, element 0)"}},
      {"div_by_zero_folded_at_load", {"InvalidArgument", "node 'q' (Div): integer division by zero (input B, element 0)"}},
      {"nested_if_past_depth_limit", {"ResourceExhausted", "subgraph 'then_branch' is nested 65 levels deep, more than the limit of 64"}},
      {"loop_body_missing_outputs", {"InvalidArgument", "node 'y' (Loop): attribute 'body' returns 1 outputs; the node has 1 outputs, so it must return 2 (the condition first)"}},
      {"scan8_scalar_state", {"InvalidArgument", "node 'y' (Scan): state 0 must be a tensor [batch, ...] with batch 1"}},
      {"scan8_state_batch_mismatch", {"InvalidArgument", "node 'y' (Scan): state 0 must be a tensor [batch, ...] with batch 1"}},
      {"if_condition_not_bool", {"InvalidArgument", "node 'y' (If): the condition must be a single bool, got float32 [2]"}},
      // The kernels added in the last session (see AllCases).
      {"einsum_repeated_output_label", {"InvalidArgument", "node 'victim' (Einsum): Einsum: attribute 'equation' ('ij,jk->iik') names output label 'i' more than once"}},
      {"einsum_diagonal_sizes_differ", {"InvalidArgument", "node 'victim' (Einsum): Einsum: input 0 [2,3] repeats label 'i' over axes of different sizes"}},
      {"einsum_diagonal_of_one_and_three", {"InvalidArgument", "node 'victim' (Einsum): Einsum: input 0 [1,3] repeats label 'i' over axes of different sizes"}},
      {"einsum_label_sizes_disagree", {"InvalidArgument", "node 'victim' (Einsum): Einsum: input 1 [4,5] gives label 'j' size 4, another input 3"}},
      {"einsum_ellipsis_dims_disagree", {"InvalidArgument", "node 'victim' (Einsum): Einsum: input 1 [3,3,4] gives label '...' size 3, another input 2"}},
      {"einsum_output_label_not_in_inputs", {"InvalidArgument", "node 'victim' (Einsum): Einsum: output label not in any input"}},
      {"einsum_bad_character", {"InvalidArgument", "node 'victim' (Einsum): Einsum: unexpected character '$'"}},
      {"einsum_operand_count", {"InvalidArgument", "node 'victim' (Einsum): Einsum: the equation names 2 operands, got 1"}},
      {"einsum_empty_operand_huge_dims", {"", "input 'a': tensor 'a': shape [0,1099511627776,1099511627776] has too many elements"}},
      {"einsum_direct_loop_too_long", {"ResourceExhausted", "node 'victim' (Einsum): Einsum: attribute 'equation' asks for 1 outputs of 1099511627776 summed products each over 2 inputs, more than the direct"}},
      {"conv_transpose_huge_strides", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attributes 'strides', 'dilations' and 'output_padding' make spatial axis 0 of the output longer than"}},
      {"conv_transpose_huge_dilations", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attributes 'strides', 'dilations' and 'output_padding' make spatial axis 0 of the output longer than"}},
      {"conv_transpose_output_padding_int64_max", {"InvalidArgument", "node 'victim' (ConvTranspose): attribute 'output_padding' [9223372036854775807, 1] must be non-negative and smaller than the stride 2 or the dilation"}},
      {"conv_transpose_pads_int64_max", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attribute 'pads' (9223372036854775807, 9223372036854775807) leaves a negative output size on spatial"}},
      {"conv_transpose_huge_output_shape", {"InvalidArgument", "node 'victim' (ConvTranspose): shape [1,3,2147483648,2147483648] has too many elements"}},
      {"conv_transpose_negative_output_shape", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attribute 'output_shape' is negative on spatial axis 0"}},
      {"conv_transpose_dilation_zero", {"InvalidArgument", "node 'victim' (ConvTranspose): attribute 'dilations' must be at least 1 (got 0)"}},
      {"conv_transpose_group_not_dividing", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: W [3,3,3,3] does not match the 3 channels of X in 2 groups"}},
      {"conv_transpose_weight_lies_about_channels", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: W [3,3,3,3] does not match the 2 channels of X in 1 groups"}},
      {"conv_transpose_kernel_shape_lies", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: kernel_shape does not match W [2,3,3,3]"}},
      {"pool_max_dilations_past_int64_max", {"InvalidArgument", "node 'victim' (MaxPool): attribute 'dilations' (4611686018427387904) makes the pooling window on spatial axis 0 longer than any input"}},
      {"pool_average_dilations_past_int64_max", {"InvalidArgument", "node 'victim' (AveragePool): attribute 'dilations' (4611686018427387904) makes the pooling window on spatial axis 0 longer than any input"}},
      {"pool_max_pads_int64_max", {"InvalidArgument", "node 'victim' (MaxPool): attribute 'pads' (9223372036854775807, 1) on spatial axis 0 makes the padded input longer than any tensor"}},
      {"pool_average_pads_int64_max", {"InvalidArgument", "node 'victim' (AveragePool): attribute 'pads' (9223372036854775807, 1) on spatial axis 0 makes the padded input longer than any tensor"}},
      {"conv_transpose_col_past_the_tensor_limit", {"ResourceExhausted", "node 'victim' (ConvTranspose): ConvTranspose: the unfolded product (col) of shape [1,65536,65536] would pass the limit of 4294967296 bytes per tensor"}},
      {"conv_transpose_1d_huge_output_shape", {"ResourceExhausted", "node 'victim' (ConvTranspose): output 0 of shape [1,3,1099511627776] (float32) exceeds the limit of 4294967296 bytes per tensor (max_tensor_bytes)"}},
      {"conv_transpose_1d_strides_and_pads_overflow", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attributes 'strides', 'dilations' and 'output_padding' make spatial axis 0 of the output longer than"}},
      {"conv_transpose_output_padding_past_stride", {"InvalidArgument", "node 'victim' (ConvTranspose): attribute 'output_padding' [2, 2] must be non-negative and smaller than the stride 2 or the dilation 1 of axis 0"}},
      {"conv_transpose_huge_strides_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attributes 'strides', 'dilations' and 'output_padding' make spatial axis 0 of the output longer than"}},
      {"conv_transpose_huge_dilations_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attributes 'strides', 'dilations' and 'output_padding' make spatial axis 0 of the output longer than"}},
      {"conv_transpose_output_padding_int64_max_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): attribute 'output_padding' [9223372036854775807, 1] must be non-negative and smaller than the stride 2 or the dilation"}},
      {"conv_transpose_pads_int64_max_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attribute 'pads' (9223372036854775807, 9223372036854775807) leaves a negative output size on spatial"}},
      {"conv_transpose_huge_output_shape_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): shape [1,3,2147483648,2147483648] has too many elements"}},
      {"conv_transpose_negative_output_shape_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attribute 'output_shape' is negative on spatial axis 0"}},
      {"conv_transpose_dilation_zero_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): attribute 'dilations' must be at least 1 (got 0)"}},
      {"conv_transpose_group_not_dividing_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: W [3,3,3,3] does not match the 3 channels of X in 2 groups"}},
      {"conv_transpose_weight_lies_about_channels_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: W [3,3,3,3] does not match the 2 channels of X in 1 groups"}},
      {"conv_transpose_kernel_shape_lies_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: kernel_shape does not match W [2,3,3,3]"}},
      {"conv_transpose_col_past_the_tensor_limit_constant_w", {"ResourceExhausted", "node 'victim' (ConvTranspose): ConvTranspose: the unfolded product (col) of shape [1,65536,65536] would pass the limit of 4294967296 bytes per tensor"}},
      {"conv_transpose_1d_huge_output_shape_constant_w", {"ResourceExhausted", "node 'victim' (ConvTranspose): output 0 of shape [1,3,1099511627776] (float32) exceeds the limit of 4294967296 bytes per tensor (max_tensor_bytes)"}},
      {"conv_transpose_1d_strides_and_pads_overflow_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): ConvTranspose: attributes 'strides', 'dilations' and 'output_padding' make spatial axis 0 of the output longer than"}},
      {"conv_transpose_output_padding_past_stride_constant_w", {"InvalidArgument", "node 'victim' (ConvTranspose): attribute 'output_padding' [2, 2] must be non-negative and smaller than the stride 2 or the dilation 1 of axis 0"}},
      {"conv_1d_dilation_past_input", {"InvalidArgument", "node 'victim' (Conv): the kernel (extent 21) does not fit the padded input (4) on spatial axis 0"}},
      {"conv_1d_dilation_overflows", {"InvalidArgument", "node 'victim' (Conv): attribute 'dilations' (4611686018427387904) makes the kernel on spatial axis 0 longer than any input"}},
      {"conv_1d_pads_overflow", {"InvalidArgument", "node 'victim' (Conv): attribute 'pads' (9223372036854775807, 9223372036854775807) on spatial axis 0 makes the padded input longer than any tensor"}},
      {"conv_1d_stride_zero", {"InvalidArgument", "node 'victim' (Conv): attribute 'strides' must be at least 1 (got 0)"}},
      {"conv_1d_kernel_shape_lies", {"InvalidArgument", "node 'victim' (Conv): kernel_shape does not match W [4,8,3]"}},
      {"conv_3d_dilation_past_input", {"InvalidArgument", "node 'victim' (Conv): the kernel (extent 11) does not fit the padded input (3) on spatial axis 1"}},
      {"conv_3d_pads_overflow", {"InvalidArgument", "node 'victim' (Conv): attribute 'pads' (9223372036854775807, 9223372036854775807) on spatial axis 0 makes the padded input longer than any tensor"}},
      {"conv_3d_kernel_shape_lies", {"InvalidArgument", "node 'victim' (Conv): kernel_shape does not match W [2,4,3,3,3]"}},
      {"conv_1d_dilation_past_input_input_w", {"InvalidArgument", "node 'victim' (Conv): the kernel (extent 21) does not fit the padded input (4) on spatial axis 0"}},
      {"conv_1d_dilation_overflows_input_w", {"InvalidArgument", "node 'victim' (Conv): attribute 'dilations' (4611686018427387904) makes the kernel on spatial axis 0 longer than any input"}},
      {"conv_1d_pads_overflow_input_w", {"InvalidArgument", "node 'victim' (Conv): attribute 'pads' (9223372036854775807, 9223372036854775807) on spatial axis 0 makes the padded input longer than any tensor"}},
      {"conv_1d_stride_zero_input_w", {"InvalidArgument", "node 'victim' (Conv): attribute 'strides' must be at least 1 (got 0)"}},
      {"conv_1d_kernel_shape_lies_input_w", {"InvalidArgument", "node 'victim' (Conv): kernel_shape does not match W [4,8,3]"}},
      {"conv_3d_dilation_past_input_input_w", {"InvalidArgument", "node 'victim' (Conv): the kernel (extent 11) does not fit the padded input (3) on spatial axis 1"}},
      {"conv_3d_pads_overflow_input_w", {"InvalidArgument", "node 'victim' (Conv): attribute 'pads' (9223372036854775807, 9223372036854775807) on spatial axis 0 makes the padded input longer than any tensor"}},
      {"conv_3d_kernel_shape_lies_input_w", {"InvalidArgument", "node 'victim' (Conv): kernel_shape does not match W [2,4,3,3,3]"}},
      {"rnn_w_disagrees_with_hidden_size", {"InvalidArgument", "node 'victim' (RNN): W has shape [1,5,3], expected [1,4,3]"}},
      {"rnn_r_disagrees_with_hidden_size", {"InvalidArgument", "node 'victim' (RNN): R has shape [1,4,5], expected [1,4,4]"}},
      {"rnn_bidirectional_with_one_direction", {"InvalidArgument", "node 'victim' (RNN): W has shape [1,4,3], expected [2,4,3]"}},
      {"rnn_sequence_lens_past_seq_length", {"OutOfRange", "node 'victim' (RNN): sequence_lens[0] = 8 is outside [0, 5]"}},
      {"rnn_sequence_lens_negative", {"OutOfRange", "node 'victim' (RNN): sequence_lens[0] = -1 is outside [0, 5]"}},
      {"rnn_initial_h_wrong_shape", {"InvalidArgument", "node 'victim' (RNN): initial_h has shape [1,3,4], expected [1,2,4]"}},
      {"rnn_activations_unknown", {"InvalidArgument", "node 'victim' (RNN): activations must list 1 functions per direction, got 3"}},
      {"rnn_clip_negative", {"InvalidArgument", "node 'victim' (RNN): clip must be positive, got -1.000000"}},
      {"gru_w_disagrees_with_hidden_size", {"InvalidArgument", "node 'victim' (GRU): W has shape [1,15,3], expected [1,12,3]"}},
      {"gru_r_disagrees_with_hidden_size", {"InvalidArgument", "node 'victim' (GRU): R has shape [1,12,5], expected [1,12,4]"}},
      {"gru_bidirectional_with_one_direction", {"InvalidArgument", "node 'victim' (GRU): W has shape [1,12,3], expected [2,12,3]"}},
      {"gru_sequence_lens_past_seq_length", {"OutOfRange", "node 'victim' (GRU): sequence_lens[0] = 8 is outside [0, 5]"}},
      {"gru_sequence_lens_negative", {"OutOfRange", "node 'victim' (GRU): sequence_lens[0] = -1 is outside [0, 5]"}},
      {"gru_initial_h_wrong_shape", {"InvalidArgument", "node 'victim' (GRU): initial_h has shape [1,3,4], expected [1,2,4]"}},
      {"gru_activations_unknown", {"InvalidArgument", "node 'victim' (GRU): activations must list 2 functions per direction, got 3"}},
      {"gru_clip_negative", {"InvalidArgument", "node 'victim' (GRU): clip must be positive, got -1.000000"}},
      {"lstm_w_disagrees_with_hidden_size", {"InvalidArgument", "node 'victim' (LSTM): W has shape [1,20,3], expected [1,16,3]"}},
      {"lstm_r_disagrees_with_hidden_size", {"InvalidArgument", "node 'victim' (LSTM): R has shape [1,16,5], expected [1,16,4]"}},
      {"lstm_bidirectional_with_one_direction", {"InvalidArgument", "node 'victim' (LSTM): W has shape [1,16,3], expected [2,16,3]"}},
      {"lstm_sequence_lens_past_seq_length", {"OutOfRange", "node 'victim' (LSTM): sequence_lens[0] = 8 is outside [0, 5]"}},
      {"lstm_sequence_lens_negative", {"OutOfRange", "node 'victim' (LSTM): sequence_lens[0] = -1 is outside [0, 5]"}},
      {"lstm_initial_h_wrong_shape", {"InvalidArgument", "node 'victim' (LSTM): initial_h has shape [1,3,4], expected [1,2,4]"}},
      {"lstm_activations_unknown", {"InvalidArgument", "node 'victim' (LSTM): unknown activation function 'Frobnicate'"}},
      {"lstm_clip_negative", {"InvalidArgument", "node 'victim' (LSTM): clip must be positive, got -1.000000"}},
      {"rnn_w_disagrees_with_hidden_size_input_w", {"InvalidArgument", "node 'victim' (RNN): W has shape [1,5,3], expected [1,4,3]"}},
      {"rnn_r_disagrees_with_hidden_size_input_w", {"InvalidArgument", "node 'victim' (RNN): R has shape [1,4,5], expected [1,4,4]"}},
      {"rnn_bidirectional_with_one_direction_input_w", {"InvalidArgument", "node 'victim' (RNN): W has shape [1,4,3], expected [2,4,3]"}},
      {"rnn_sequence_lens_past_seq_length_input_w", {"OutOfRange", "node 'victim' (RNN): sequence_lens[0] = 8 is outside [0, 5]"}},
      {"rnn_sequence_lens_negative_input_w", {"OutOfRange", "node 'victim' (RNN): sequence_lens[0] = -1 is outside [0, 5]"}},
      {"rnn_initial_h_wrong_shape_input_w", {"InvalidArgument", "node 'victim' (RNN): initial_h has shape [1,3,4], expected [1,2,4]"}},
      {"rnn_activations_unknown_input_w", {"InvalidArgument", "node 'victim' (RNN): activations must list 1 functions per direction, got 3"}},
      {"rnn_clip_negative_input_w", {"InvalidArgument", "node 'victim' (RNN): clip must be positive, got -1.000000"}},
      {"gru_w_disagrees_with_hidden_size_input_w", {"InvalidArgument", "node 'victim' (GRU): W has shape [1,15,3], expected [1,12,3]"}},
      {"gru_r_disagrees_with_hidden_size_input_w", {"InvalidArgument", "node 'victim' (GRU): R has shape [1,12,5], expected [1,12,4]"}},
      {"gru_bidirectional_with_one_direction_input_w", {"InvalidArgument", "node 'victim' (GRU): W has shape [1,12,3], expected [2,12,3]"}},
      {"gru_sequence_lens_past_seq_length_input_w", {"OutOfRange", "node 'victim' (GRU): sequence_lens[0] = 8 is outside [0, 5]"}},
      {"gru_sequence_lens_negative_input_w", {"OutOfRange", "node 'victim' (GRU): sequence_lens[0] = -1 is outside [0, 5]"}},
      {"gru_initial_h_wrong_shape_input_w", {"InvalidArgument", "node 'victim' (GRU): initial_h has shape [1,3,4], expected [1,2,4]"}},
      {"gru_activations_unknown_input_w", {"InvalidArgument", "node 'victim' (GRU): activations must list 2 functions per direction, got 3"}},
      {"gru_clip_negative_input_w", {"InvalidArgument", "node 'victim' (GRU): clip must be positive, got -1.000000"}},
      {"lstm_w_disagrees_with_hidden_size_input_w", {"InvalidArgument", "node 'victim' (LSTM): W has shape [1,20,3], expected [1,16,3]"}},
      {"lstm_r_disagrees_with_hidden_size_input_w", {"InvalidArgument", "node 'victim' (LSTM): R has shape [1,16,5], expected [1,16,4]"}},
      {"lstm_bidirectional_with_one_direction_input_w", {"InvalidArgument", "node 'victim' (LSTM): W has shape [1,16,3], expected [2,16,3]"}},
      {"lstm_sequence_lens_past_seq_length_input_w", {"OutOfRange", "node 'victim' (LSTM): sequence_lens[0] = 8 is outside [0, 5]"}},
      {"lstm_sequence_lens_negative_input_w", {"OutOfRange", "node 'victim' (LSTM): sequence_lens[0] = -1 is outside [0, 5]"}},
      {"lstm_initial_h_wrong_shape_input_w", {"InvalidArgument", "node 'victim' (LSTM): initial_h has shape [1,3,4], expected [1,2,4]"}},
      {"lstm_activations_unknown_input_w", {"InvalidArgument", "node 'victim' (LSTM): unknown activation function 'Frobnicate'"}},
      {"lstm_clip_negative_input_w", {"InvalidArgument", "node 'victim' (LSTM): clip must be positive, got -1.000000"}},
      {"dynamic_quantize_lstm_w_disagrees_with_hidden_size", {"InvalidArgument", "node 'victim' (DynamicQuantizeLSTM): DynamicQuantizeLSTM: W has shape [1,3,20], expected [1,3,16] ([num_directions, input_size, 4 * hidden_size])"}},
      {"dynamic_quantize_lstm_w_in_onnx_layout", {"InvalidArgument", "node 'victim' (DynamicQuantizeLSTM): DynamicQuantizeLSTM: W has shape [1,16,3], expected [1,3,16] ([num_directions, input_size, 4 * hidden_size])"}},
      {"dynamic_quantize_lstm_w_scale_wrong_count", {"InvalidArgument", "node 'victim' (DynamicQuantizeLSTM): DynamicQuantizeLSTM: W_scale has shape [3], expected [1] (per direction) or [1,16] (per column)"}},
      {"dynamic_quantize_lstm_w_disagrees_with_hidden_size_input_w", {"InvalidArgument", "node 'victim' (DynamicQuantizeLSTM): DynamicQuantizeLSTM: W has shape [1,3,20], expected [1,3,16] ([num_directions, input_size, 4 * hidden_size])"}},
      {"dynamic_quantize_lstm_w_in_onnx_layout_input_w", {"InvalidArgument", "node 'victim' (DynamicQuantizeLSTM): DynamicQuantizeLSTM: W has shape [1,16,3], expected [1,3,16] ([num_directions, input_size, 4 * hidden_size])"}},
      {"dynamic_quantize_lstm_w_scale_wrong_count_input_w", {"InvalidArgument", "node 'victim' (DynamicQuantizeLSTM): DynamicQuantizeLSTM: W_scale has shape [3], expected [1] (per direction) or [1,16] (per column)"}},
      {"blocked_split_sizes_wrap_int64", {"InvalidArgument", "node 'victim' (Split): split sizes [16,4611686018427387904,4611686018427387904,4611686018427387904,4611686018427387920] sum past INT64_MAX, not the"}},
      {"blocked_split_sizes_do_not_sum", {"InvalidArgument", "node 'victim' (Split): split sizes [16,32] sum to 48, not the axis size 32"}},
      {"blocked_split_sizes_from_graph_input", {"InvalidArgument", "node 'victim' (Split): split sizes [16,8] sum to 24, not the axis size 32"}},
      {"blocked_split_num_outputs_lies", {"InvalidArgument", "node 'victim' (Split): attribute 'num_outputs' is 4 but the node has 2 outputs"}},
      {"fused_conv_unknown_activation", {"InvalidArgument", "node 'victim' (FusedConv): unknown fused activation 'Frobnicate'"}},
      {"fused_conv_z_fewer_channels", {"InvalidArgument", "node 'ToBlocked(z)' (ToBlocked): ToBlocked: input 'X' [1,15,6,6] must have the 16 channels its blocked reader's weights expect"}},
      {"fused_conv_z_wrong_size", {"InvalidArgument", "node 'victim' (BlockedConv): BlockedConv: residual 'Z' must be float32 of the output's shape [1,1,6,6,16], got float32 [1,1,5,6,16]"}},
      {"fused_conv_z_int", {"InvalidArgument", "node 'ToBlocked(z)' (ToBlocked): ToBlocked: input 'X' must be float"}},
      {"blocked_conv_x_fewer_channels", {"InvalidArgument", "node 'ToBlocked(x)' (ToBlocked): ToBlocked: input 'X' [1,15,6,6] must have the 16 channels its blocked reader's weights expect"}},
      {"reducemax_axis_out_of_range", {"InvalidArgument", "node 'victim' (ReduceMax): axis 2 is out of range for rank 2"}},
      {"reducemax_axis_int64_min", {"InvalidArgument", "node 'victim' (ReduceMax): axis -9223372036854775808 is out of range for rank 2"}},
      {"reducemax_axis_repeated", {"InvalidArgument", "node 'victim' (ReduceMax): axis -1 appears twice in axes"}},
      {"reducemax_scalar_axis", {"InvalidArgument", "node 'victim' (ReduceMax): axis 0 is out of range for rank 0"}},
      {"reducemin_axis_out_of_range", {"InvalidArgument", "node 'victim' (ReduceMin): axis 2 is out of range for rank 2"}},
      {"reducemin_axis_int64_min", {"InvalidArgument", "node 'victim' (ReduceMin): axis -9223372036854775808 is out of range for rank 2"}},
      {"reducemin_axis_repeated", {"InvalidArgument", "node 'victim' (ReduceMin): axis -1 appears twice in axes"}},
      {"reducemin_scalar_axis", {"InvalidArgument", "node 'victim' (ReduceMin): axis 0 is out of range for rank 0"}},
      {"lp_normalization_p3", {"InvalidArgument", "node 'victim' (LpNormalization): attribute 'p' must be 1 or 2, got 3"}},
      {"lp_normalization_p0", {"InvalidArgument", "node 'victim' (LpNormalization): attribute 'p' must be 1 or 2, got 0"}},
      {"lp_normalization_axis_out_of_range", {"InvalidArgument", "node 'victim' (LpNormalization): axis 2 is out of range for rank 2"}},
      {"lp_normalization_scalar", {"InvalidArgument", "node 'victim' (LpNormalization): input must have rank >= 1"}},
      {"mvn_axis_out_of_range", {"InvalidArgument", "node 'victim' (MeanVarianceNormalization): axis 4 is out of range for rank 4"}},
      {"mvn_default_axes_on_rank_2", {"InvalidArgument", "node 'victim' (MeanVarianceNormalization): axis 2 is out of range for rank 2"}},
  };
}

// A model adding a sparse initializer "w" (one value at index 0) of dims `dims` to x.
std::string SparseModel(std::vector<int64_t> dims) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y", DataType::kFloat, {2});
  onnx::SparseTensorProto* sp = m.proto().mutable_graph()->add_sparse_initializer();
  for (int64_t d : dims) sp->add_dims(d);
  onnx::TensorProto* values = sp->mutable_values();
  values->set_name("w");
  values->set_data_type(onnx::TensorProto::FLOAT);
  values->add_dims(1);
  values->add_float_data(1.0f);
  onnx::TensorProto* indices = sp->mutable_indices();
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(1);
  indices->add_int64_data(0);
  return m.Serialize();
}

std::vector<Case> AllCases() {
  std::vector<Case> c;
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();

  // --- Damaged files.
  c.push_back(Simple("empty_file", [] { return std::string(); }));
  // A sparse initializer's dims are the file's word: negative, past int64, past the tensor limit.
  c.push_back(Simple("sparse_initializer_negative_dims", [] { return SparseModel({-4}); }));
  c.push_back(Simple("sparse_initializer_dims_overflow", [] { return SparseModel({int64_t{1} << 40, int64_t{1} << 40}); }));
  c.push_back(Simple("sparse_initializer_past_the_limit", [] { return SparseModel({int64_t{1} << 40}); }));
  c.push_back(Simple("not_protobuf", [] { return std::string("this is not an onnx model\n\xff\xff\xff", 29); }));
  for (int cut : {1, 2, 3, 5, 8}) {
    c.push_back(Simple("truncated_" + std::to_string(cut) + "_of_9", [cut] {
      std::string m = ValidModel();
      return m.substr(0, m.size() * cut / 9);
    }));
  }
  c.push_back(Simple("truncated_last_byte", [] {
    std::string m = ValidModel();
    return m.substr(0, m.size() - 1);
  }));
  c.push_back(Simple("op_type_flipped", [] {
    std::string m = ValidModel();
    m[m.find("MatMul") + 3] ^= 0x01;  // "MatLul"
    return m;
  }));
  c.push_back(Simple("huge_length_prefix", [] {
    std::string m = ValidModel();
    // graph field (7, length-delimited) with a length of ~2^62
    return std::string("\x3a\xff\xff\xff\xff\xff\xff\xff\xff\x3f", 10) + m;
  }));
  c.push_back(Simple("protobuf_recursion_300_levels", [] { return NestedIf(300); }));

  // --- Rule-breaking graphs.
  c.push_back(Simple("duplicate_output_name", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Node("Relu", {"x"}, {"y"});
    m.Node("Neg", {"x"}, {"y"}, "dup");
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("node_output_shadows_input", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Node("Relu", {"x"}, {"x"});
    m.Output("x", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("undefined_input", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Node("Add", {"x", "nowhere"}, {"y"});
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("cycle", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Node("Add", {"x", "b"}, {"a"});
    m.Node("Relu", {"a"}, {"b"});
    m.Output("b", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("self_loop", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Node("Add", {"x", "a"}, {"a"});
    m.Output("a", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("output_never_produced", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Node("Relu", {"x"}, {"y"});
    m.Output("ghost", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("unknown_op", [] { return OneNode(17, "NoSuchOp", {{"x", DataType::kFloat}}, 1); }));
  c.push_back(Simple("empty_op_type", [] { return OneNode(17, "", {{"x", DataType::kFloat}}, 1); }));
  // Inputs of a rank the op accepts, so that the attribute is the only thing wrong.
  c.push_back(Simple(
      "attribute_wrong_type",
      [] {
        return OneNode(17, "Transpose", {{"x", DataType::kFloat}}, 1,
                       [](onnx::NodeProto& n) { SetAttr(n, "perm", std::string("0,1")); });
      },
      {{"x", F32s({2, 2}, {1, 2, 3, 4})}}));
  c.push_back(Simple(
      "attribute_type_field_lies",
      [] {
        return OneNode(17, "Concat", {{"x", DataType::kFloat}}, 1, [](onnx::NodeProto& n) {
          auto* a = n.add_attribute();
          a->set_name("axis");
          a->set_type(onnx::AttributeProto::INT);  // but only a float is set
          a->set_f(1.5f);
        });
      },
      {{"x", F32s({3}, {1, 2, 3})}}));
  c.push_back(Simple("missing_required_attribute", [] {
    return OneNode(17, "Cast", {{"x", DataType::kFloat}}, 1);  // no 'to'
  }));
  c.push_back(Simple(
      "transpose_perm_out_of_range",
      [] {
        return OneNode(17, "Transpose", {{"x", DataType::kFloat}}, 1,
                       [](onnx::NodeProto& n) { SetAttr(n, "perm", std::vector<int64_t>{0, 7}); });
      },
      {{"x", F32s({2, 2}, {1, 2, 3, 4})}}));
  c.push_back(Simple("too_many_inputs", [] {
    return OneNode(17, "Relu", {{"x", DataType::kFloat}, {"x2", DataType::kFloat}, {"x3", DataType::kFloat}}, 1);
  }));
  c.push_back(Simple("opset_zero", [] { return OneNode(0, "Relu", {{"x", DataType::kFloat}}, 1); }));
  c.push_back(Simple("opset_from_the_future", [] { return OneNode(100000, "Relu", {{"x", DataType::kFloat}}, 1); }));
  c.push_back(Simple("opset_negative", [] { return OneNode(-3, "Relu", {{"x", DataType::kFloat}}, 1); }));
  c.push_back(Simple("unknown_domain", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Node("Relu", {"x"}, {"y"}).set_domain("com.evil");
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("duplicate_opset_import", [] {
    ModelBuilder m(17);
    auto* imp = m.proto().add_opset_import();
    imp->set_domain("");
    imp->set_version(9);
    m.Input("x", DataType::kFloat, {1});
    m.Node("Relu", {"x"}, {"y"});
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("ir_version_from_the_future", [] {
    ModelBuilder m(17, 999);
    m.Input("x", DataType::kFloat, {1});
    m.Node("Relu", {"x"}, {"y"});
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("graph_input_type_undefined", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kUndefined, {1});
    m.Node("Relu", {"x"}, {"y"});
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("graph_input_type_999", [] {
    ModelBuilder m(17);
    m.Input("x", static_cast<DataType>(999), {1});
    m.Node("Relu", {"x"}, {"y"});
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("graph_input_negative_dim", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(
        0)->set_dim_value(-5);
    m.Node("Relu", {"x"}, {"y"});
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  c.push_back(Simple("graph_input_absurd_dims", [] {  // --fill would need 2^80 elements
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {int64_t{1} << 40, int64_t{1} << 40});
    m.Node("Relu", {"x"}, {"y"});
    m.Output("y", DataType::kFloat, {}, false);
    return m.Serialize();
  }));
  c.push_back(Simple("function_recursion", [] {
    ModelBuilder m(17);
    auto* imp = m.proto().add_opset_import();
    imp->set_domain("local");
    imp->set_version(1);
    auto* f = m.proto().add_functions();
    f->set_name("F");
    f->set_domain("local");
    f->add_input("a");
    f->add_output("b");
    auto* fi = f->add_opset_import();
    fi->set_domain("local");
    fi->set_version(1);
    auto* n = f->add_node();
    n->set_op_type("F");
    n->set_domain("local");
    n->add_input("a");
    n->add_output("b");
    m.Input("x", DataType::kFloat, {1});
    m.Node("F", {"x"}, {"y"}).set_domain("local");
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));

  // --- Lying tensors (initializers).
  c.push_back(Simple("dims_larger_than_raw_data", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(1);
      t.add_dims(1000);
      t.set_raw_data(std::string(8, '\0'));
    });
  }));
  c.push_back(Simple("dims_larger_than_float_data", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(1);
      t.add_dims(7);
      t.add_float_data(1);
    });
  }));
  c.push_back(Simple("negative_dim", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(1);
      t.add_dims(-4);
      t.set_raw_data(std::string(16, '\0'));
    });
  }));
  c.push_back(Simple("dims_product_overflows", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(1);
      t.add_dims(int64_t{1} << 32);
      t.add_dims(int64_t{1} << 32);
      t.add_dims(0x7fffffff);
      t.set_raw_data(std::string(4, '\0'));
    });
  }));
  c.push_back(Simple("dims_product_wraps_to_small", [] {  // 2^32 * 2^32 = 2^64 wraps to 0
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(1);
      t.add_dims(int64_t{1} << 32);
      t.add_dims(int64_t{1} << 32);
    });
  }));
  c.push_back(Simple("int64_max_dim", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(7);
      t.add_dims(std::numeric_limits<int64_t>::max());
      t.set_raw_data(std::string(8, '\0'));
    });
  }));
  c.push_back(Simple("data_type_999", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(999);
      t.add_dims(1);
      t.set_raw_data(std::string(4, '\0'));
    });
  }));
  c.push_back(Simple("data_type_negative", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(-1);
      t.add_dims(1);
      t.set_raw_data(std::string(4, '\0'));
    });
  }));
  c.push_back(Simple("data_type_undefined", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(0);
      t.add_dims(1);
      t.set_raw_data(std::string(4, '\0'));
    });
  }));
  c.push_back(Simple("raw_data_odd_bytes_for_float", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(1);
      t.add_dims(2);
      t.set_raw_data(std::string(7, '\0'));
    });
  }));
  c.push_back(Simple("int4_packed_too_short", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(22);
      t.add_dims(9);
      t.set_raw_data(std::string(4, '\0'));  // 9 int4 need 5 bytes
    });
  }));
  c.push_back(Simple("string_tensor_count_lies", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(8);
      t.add_dims(5);
      t.add_string_data("a");
    });
  }));
  c.push_back(Simple("segment_field", [] {
    return LyingInitializer([](onnx::TensorProto& t) {
      t.set_data_type(1);
      t.add_dims(1);
      t.mutable_segment()->set_begin(0);
      t.mutable_segment()->set_end(1 << 30);
      t.set_raw_data(std::string(4, '\0'));
    });
  }));
  c.push_back(Case{"lying_input_file", [](const std::string& dir) {
                     onnx::TensorProto t;
                     t.set_name("x");
                     t.set_data_type(1);
                     t.add_dims(int64_t{1} << 40);
                     t.set_raw_data(std::string(4, '\0'));
                     WriteBytes(dir + "/x.pb", t.SerializeAsString());
                     ModelBuilder m(17);
                     m.Input("x", DataType::kFloat, {-1});
                     m.Node("Relu", {"x"}, {"y"});
                     m.Output("y", DataType::kFloat, {-1});
                     WriteBytes(dir + "/model.onnx", m.Serialize());
                     return dir + "/model.onnx --input x=" + dir + "/x.pb";
                   }});
  c.push_back(Case{"input_file_wrong_type", [](const std::string& dir) {
                     (void)WriteValueFile(dir + "/x.pb", Value(I64({1, 2, 3})), "x");
                     ModelBuilder m(17);
                     m.Input("x", DataType::kFloat, {3});
                     m.Node("Relu", {"x"}, {"y"});
                     m.Output("y", DataType::kFloat, {3});
                     WriteBytes(dir + "/model.onnx", m.Serialize());
                     return dir + "/model.onnx --input x=" + dir + "/x.pb";
                   }});

  // --- Escaping external data.
  c.push_back(External("external_dotdot", "../secret.bin", 0, 16));
  c.push_back(External("external_dotdot_inside", "sub/../../secret.bin", 0, 16));
  c.push_back(External("external_absolute", TmpRoot() + "/secret.bin", 0, 16));
  c.push_back(External("external_etc_passwd", "/etc/passwd", 0, 16));
  c.push_back(External("external_symlink_out", "link.bin", 0, 16, /*make_secret_symlink=*/true));
  c.push_back(External("external_offset_past_end", "weights.bin", 4096, 16));
  c.push_back(External("external_length_past_end", "weights.bin", 0, 1 << 20));
  c.push_back(External("external_offset_plus_length_overflows", "weights.bin", kMax - 4, 16));
  c.push_back(External("external_negative_offset", "weights.bin", -1, -1));  // replaced below
  c.back().make = [](const std::string& dir) {
    WriteBytes(dir + "/weights.bin", std::string(16, '\0'));
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {4});
    auto* t = m.proto().mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(1);
    t->add_dims(4);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"location", "weights.bin"}, {"offset", "-8"}, {"length", "16"}}) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    m.Node("Add", {"x", "w"}, {"y"});
    m.Output("y", DataType::kFloat, {4});
    return ModelArgs(dir, m.Serialize());
  };
  c.push_back(External("external_missing_file", "nope.bin", 0, 16));
  c.push_back(External("external_directory", ".", 0, 16));
  c.push_back(External("external_dev_zero", "/dev/zero", 0, 16));
  c.push_back(External("external_empty_location", "", 0, 16));
  c.push_back(External("external_short_for_dims", "weights.bin", 8, 8));  // 4 floats need 16 bytes

  // --- Out-of-range indices and shapes fed to kernels at run time.
  const auto F = DataType::kFloat;
  const auto L = DataType::kInt64;
  c.push_back(Simple("gather_index_too_big", [=] { return OneNode(13, "Gather", {{"d", F}, {"i", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"i", I64({5})}}));
  c.push_back(Simple("gather_index_too_negative", [=] { return OneNode(13, "Gather", {{"d", F}, {"i", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"i", I64({-4})}}));
  c.push_back(Simple("gather_index_int64_min", [=] { return OneNode(13, "Gather", {{"d", F}, {"i", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"i", I64({kMin})}}));
  c.push_back(Simple("gather_axis_out_of_range",
                     [=] {
                       return OneNode(13, "Gather", {{"d", F}, {"i", L}}, 1,
                                      [](onnx::NodeProto& n) { SetAttr(n, "axis", int64_t{5}); });
                     },
                     {{"d", F32s({3}, {1, 2, 3})}, {"i", I64({0})}}));
  c.push_back(Simple("gather_elements_index", [=] { return OneNode(13, "GatherElements", {{"d", F}, {"i", L}}, 1); },
                     {{"d", F32s({2, 2}, {1, 2, 3, 4})}, {"i", I64s({2, 2}, {0, 1, 9, 0})}}));
  c.push_back(Simple("gather_elements_rank_mismatch",
                     [=] { return OneNode(13, "GatherElements", {{"d", F}, {"i", L}}, 1); },
                     {{"d", F32s({2, 2}, {1, 2, 3, 4})}, {"i", I64({0})}}));
  c.push_back(Simple("gather_nd_index", [=] { return OneNode(13, "GatherND", {{"d", F}, {"i", L}}, 1); },
                     {{"d", F32s({2, 2}, {1, 2, 3, 4})}, {"i", I64s({1, 2}, {1, 7})}}));
  c.push_back(Simple("gather_nd_index_too_long", [=] { return OneNode(13, "GatherND", {{"d", F}, {"i", L}}, 1); },
                     {{"d", F32s({2, 2}, {1, 2, 3, 4})}, {"i", I64s({1, 3}, {0, 0, 0})}}));
  c.push_back(Simple("scatter_nd_index",
                     [=] { return OneNode(16, "ScatterND", {{"d", F}, {"i", L}, {"u", F}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"i", I64s({1, 1}, {9})}, {"u", F32s({1}, {5})}}));
  c.push_back(Simple("scatter_nd_updates_shape",
                     [=] { return OneNode(16, "ScatterND", {{"d", F}, {"i", L}, {"u", F}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"i", I64s({2, 1}, {0, 1})}, {"u", F32s({1}, {5})}}));
  c.push_back(Simple("scatter_elements_index",
                     [=] { return OneNode(16, "ScatterElements", {{"d", F}, {"i", L}, {"u", F}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"i", I64({-9})}, {"u", F32s({1}, {5})}}));
  c.push_back(Simple("onehot_negative_depth",
                     [=] { return OneNode(11, "OneHot", {{"i", L}, {"depth", L}, {"v", F}}, 1); },
                     {{"i", I64({1})}, {"depth", I64({-3})}, {"v", F32s({2}, {0, 1})}}));
  c.push_back(Simple("onehot_huge_depth",
                     [=] { return OneNode(11, "OneHot", {{"i", L}, {"depth", L}, {"v", F}}, 1); },
                     {{"i", I64({1, 2, 3})}, {"depth", I64({int64_t{1} << 40})}, {"v", F32s({2}, {0, 1})}}));
  c.push_back(Simple("slice_step_zero",
                     [=] { return OneNode(13, "Slice", {{"d", F}, {"s", L}, {"e", L}, {"a", L}, {"st", L}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({0})}, {"e", I64({4})}, {"a", I64({0})}, {"st", I64({0})}}));
  c.push_back(Simple("slice_axis_out_of_range",
                     [=] { return OneNode(13, "Slice", {{"d", F}, {"s", L}, {"e", L}, {"a", L}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({0})}, {"e", I64({4})}, {"a", I64({3})}}));
  c.push_back(Simple("slice_starts_ends_lengths_differ",
                     [=] { return OneNode(13, "Slice", {{"d", F}, {"s", L}, {"e", L}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({0, 1})}, {"e", I64({4})}}));
  c.push_back(Simple("pad_negative_beyond_dim", [=] { return OneNode(13, "Pad", {{"d", F}, {"p", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"p", I64({-5, -5})}}));
  c.push_back(Simple("pad_huge", [=] { return OneNode(13, "Pad", {{"d", F}, {"p", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"p", I64({int64_t{1} << 40, 0})}}));
  c.push_back(Simple("pad_int64_max", [=] { return OneNode(13, "Pad", {{"d", F}, {"p", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"p", I64({kMax, kMax})}}));
  c.push_back(Simple("pad_wrong_length", [=] { return OneNode(13, "Pad", {{"d", F}, {"p", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"p", I64({1, 1, 1})}}));
  c.push_back(Simple("expand_huge", [=] { return OneNode(13, "Expand", {{"d", F}, {"s", L}}, 1); },
                     {{"d", F32s({1}, {1})}, {"s", I64({1000000, 1000000})}}));
  c.push_back(Simple("expand_overflow", [=] { return OneNode(13, "Expand", {{"d", F}, {"s", L}}, 1); },
                     {{"d", F32s({1}, {1})}, {"s", I64({int64_t{1} << 40, int64_t{1} << 40})}}));
  c.push_back(Simple("expand_negative", [=] { return OneNode(13, "Expand", {{"d", F}, {"s", L}}, 1); },
                     {{"d", F32s({1}, {1})}, {"s", I64({-2})}}));
  c.push_back(Simple("expand_incompatible", [=] { return OneNode(13, "Expand", {{"d", F}, {"s", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"s", I64({4})}}));
  c.push_back(Simple("tile_negative", [=] { return OneNode(13, "Tile", {{"d", F}, {"r", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"r", I64({-1})}}));
  c.push_back(Simple("tile_huge", [=] { return OneNode(13, "Tile", {{"d", F}, {"r", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"r", I64({int64_t{1} << 62})}}));
  c.push_back(Simple("tile_wrong_length", [=] { return OneNode(13, "Tile", {{"d", F}, {"r", L}}, 1); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"r", I64({1, 2})}}));
  c.push_back(Simple("reshape_two_minus_one", [=] { return OneNode(14, "Reshape", {{"d", F}, {"s", L}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({-1, -1})}}));
  c.push_back(Simple("reshape_count_mismatch", [=] { return OneNode(14, "Reshape", {{"d", F}, {"s", L}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({3, 3})}}));
  c.push_back(Simple("reshape_overflow", [=] { return OneNode(14, "Reshape", {{"d", F}, {"s", L}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({int64_t{1} << 32, int64_t{1} << 32, 4})}}));
  c.push_back(Simple("reshape_negative", [=] { return OneNode(14, "Reshape", {{"d", F}, {"s", L}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({-4, -1})}}));
  c.push_back(Simple("reshape_zero_copies_missing_dim",
                     [=] { return OneNode(14, "Reshape", {{"d", F}, {"s", L}}, 1); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({2, 0, 2})}}));
  c.push_back(Simple("range_step_zero", [=] { return OneNode(11, "Range", {{"a", L}, {"b", L}, {"s", L}}, 1, nullptr, L); },
                     {{"a", I64s({}, {0})}, {"b", I64s({}, {10})}, {"s", I64s({}, {0})}}));
  c.push_back(Simple("range_tiny_step", [=] { return OneNode(11, "Range", {{"a", F}, {"b", F}, {"s", F}}, 1); },
                     {{"a", F32s({}, {0})}, {"b", F32s({}, {1e6f})}, {"s", F32s({}, {1e-9f})}}));
  c.push_back(Simple("range_int64_extremes",
                     [=] { return OneNode(11, "Range", {{"a", L}, {"b", L}, {"s", L}}, 1, nullptr, L); },
                     {{"a", I64s({}, {kMin})}, {"b", I64s({}, {kMax})}, {"s", I64s({}, {1})}}));
  c.push_back(Simple("range_nan_step", [=] { return OneNode(11, "Range", {{"a", F}, {"b", F}, {"s", F}}, 1); },
                     {{"a", F32s({}, {0})}, {"b", F32s({}, {10})}, {"s", F32s({}, {std::nanf("")})}}));
  c.push_back(Simple("range_infinite_limit", [=] { return OneNode(11, "Range", {{"a", F}, {"b", F}, {"s", F}}, 1); },
                     {{"a", F32s({}, {0})}, {"b", F32s({}, {std::numeric_limits<float>::infinity()})}, {"s", F32s({}, {1})}}));
  c.push_back(Simple("constant_of_shape_huge", [=] { return OneNode(9, "ConstantOfShape", {{"s", L}}, 1); },
                     {{"s", I64({1000000, 1000000})}}));
  c.push_back(Simple("constant_of_shape_negative", [=] { return OneNode(9, "ConstantOfShape", {{"s", L}}, 1); },
                     {{"s", I64({-1})}}));
  c.push_back(Simple("constant_of_shape_huge_folded", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Initializer("s", I64({1000000, 1000000}));
    m.Node("ConstantOfShape", {"s"}, {"big"});
    m.Node("Add", {"x", "big"}, {"y"});
    m.Output("y", DataType::kFloat, {}, false);
    return m.Serialize();
  }));
  // TopK's outputs: the values (float here) and their int64 indices.
  c.push_back(Simple("topk_k_too_big", [=] { return OneNode(11, "TopK", {{"d", F}, {"k", L}}, 2, nullptr, F, {F, L}); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"k", I64({10})}}));
  c.push_back(Simple("topk_k_negative", [=] { return OneNode(11, "TopK", {{"d", F}, {"k", L}}, 2, nullptr, F, {F, L}); },
                     {{"d", F32s({3}, {1, 2, 3})}, {"k", I64({-1})}}));
  c.push_back(Simple("split_sizes_do_not_sum", [=] { return OneNode(13, "Split", {{"d", F}, {"s", L}}, 2); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({3, 3})}}));
  c.push_back(Simple("split_negative_size", [=] { return OneNode(13, "Split", {{"d", F}, {"s", L}}, 2); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({6, -2})}}));
  c.push_back(Simple("split_count_mismatch", [=] { return OneNode(13, "Split", {{"d", F}, {"s", L}}, 2); },
                     {{"d", F32s({4}, {1, 2, 3, 4})}, {"s", I64({1, 1, 2})}}));
  c.push_back(Simple("resize_huge_scales",
                     [=] { return OneNode(13, "Resize", {{"d", F}, {"", F}, {"sc", F}}, 1); },
                     {{"d", F32s({1, 1, 2, 2}, {1, 2, 3, 4})}, {"sc", F32s({4}, {1, 1, 1e9f, 1e9f})}}));
  c.push_back(Simple("resize_negative_scales",
                     [=] { return OneNode(13, "Resize", {{"d", F}, {"", F}, {"sc", F}}, 1); },
                     {{"d", F32s({1, 1, 2, 2}, {1, 2, 3, 4})}, {"sc", F32s({4}, {1, 1, -2, -2})}}));
  c.push_back(Simple("resize_huge_sizes",
                     [=] { return OneNode(13, "Resize", {{"d", F}, {"", F}, {"", F}, {"sz", L}}, 1); },
                     {{"d", F32s({1, 1, 2, 2}, {1, 2, 3, 4})}, {"sz", I64({1, 1, int64_t{1} << 31, int64_t{1} << 31})}}));
  c.push_back(Simple("resize_scales_wrong_length",
                     [=] { return OneNode(13, "Resize", {{"d", F}, {"", F}, {"sc", F}}, 1); },
                     {{"d", F32s({1, 1, 2, 2}, {1, 2, 3, 4})}, {"sc", F32s({2}, {2, 2})}}));
  c.push_back(Simple("nms_shape_mismatch",
                     [=] { return OneNode(11, "NonMaxSuppression", {{"b", F}, {"s", F}}, 1, nullptr, L); },
                     {{"b", F32s({1, 3, 4}, std::vector<float>(12, 0.5f))}, {"s", F32s({1, 1, 5}, std::vector<float>(5, 0.5f))}}));
  c.push_back(Simple("nms_boxes_not_4",
                     [=] { return OneNode(11, "NonMaxSuppression", {{"b", F}, {"s", F}}, 1, nullptr, L); },
                     {{"b", F32s({1, 2, 3}, std::vector<float>(6, 0.5f))}, {"s", F32s({1, 1, 2}, std::vector<float>(2, 0.5f))}}));
  c.push_back(Simple("split_to_sequence_scalar", [=] { return OneNode(11, "SplitToSequence", {{"d", F}}, 1); },
                     {{"d", F32s({}, {1})}}));
  c.push_back(Simple("gather_scalar_data", [=] { return OneNode(13, "Gather", {{"d", F}, {"i", L}}, 1); },
                     {{"d", F32s({}, {1})}, {"i", I64({0})}}));
  c.push_back(Simple("concat_scalars", [=] { return OneNode(13, "Concat", {{"a", F}, {"b", F}}, 1,
                                                            [](onnx::NodeProto& n) { SetAttr(n, "axis", int64_t{0}); }); },
                     {{"a", F32s({}, {1})}, {"b", F32s({}, {2})}}));
  c.push_back(Simple("depth_to_space_bad_blocksize",
                     [=] {
                       return OneNode(13, "DepthToSpace", {{"d", F}}, 1,
                                      [](onnx::NodeProto& n) { SetAttr(n, "blocksize", int64_t{0}); });
                     },
                     {{"d", F32s({1, 4, 1, 1}, {1, 2, 3, 4})}}));
  c.push_back(Simple("concat_rank_mismatch",
                     [=] {
                       return OneNode(13, "Concat", {{"a", F}, {"b", F}}, 1,
                                      [](onnx::NodeProto& n) { SetAttr(n, "axis", int64_t{0}); });
                     },
                     {{"a", F32s({2}, {1, 2})}, {"b", F32s({1, 2}, {1, 2})}}));
  c.push_back(Simple("matmul_inner_mismatch", [=] { return OneNode(13, "MatMul", {{"a", F}, {"b", F}}, 1); },
                     {{"a", F32s({2, 3}, std::vector<float>(6, 1))}, {"b", F32s({2, 3}, std::vector<float>(6, 1))}}));

  // --- Integer division.
  c.push_back(Simple("div_by_zero_int64", [=] { return OneNode(14, "Div", {{"a", L}, {"b", L}}, 1, nullptr, L); },
                     {{"a", I64({7})}, {"b", I64({0})}}));
  c.push_back(Simple("div_int64_min_by_minus_one",
                     [=] { return OneNode(14, "Div", {{"a", L}, {"b", L}}, 1, nullptr, L); },
                     {{"a", I64({kMin})}, {"b", I64({-1})}}));
  c.push_back(Simple("div_by_zero_int32", [] {
                       return OneNode(14, "Div", {{"a", DataType::kInt32}, {"b", DataType::kInt32}}, 1, nullptr,
                                      DataType::kInt32);
                     },
                     {{"a", Tensor::FromVector<int32_t>({1}, {7})}, {"b", Tensor::FromVector<int32_t>({1}, {0})}}));
  c.push_back(Simple("mod_by_zero_int64", [=] { return OneNode(13, "Mod", {{"a", L}, {"b", L}}, 1, nullptr, L); },
                     {{"a", I64({7})}, {"b", I64({0})}}));
  c.push_back(Simple("mod_fmod_by_zero_int64",
                     [=] {
                       return OneNode(13, "Mod", {{"a", L}, {"b", L}}, 1,
                                      [](onnx::NodeProto& n) { SetAttr(n, "fmod", int64_t{1}); }, L);
                     },
                     {{"a", I64({7})}, {"b", I64({0})}}));
  // INT64_MIN mod -1 is 0 (defined); exit 0 is fine, a trap is not.
  c.push_back(Simple("mod_int64_min_by_minus_one",
                     [=] { return OneNode(13, "Mod", {{"a", L}, {"b", L}}, 1, nullptr, L); },
                     {{"a", I64({kMin})}, {"b", I64({-1})}}));
  c.back().may_succeed = true;
  c.push_back(Simple("div_by_zero_folded_at_load", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kInt64, {1});
    m.Initializer("a", I64({1}));
    m.Initializer("z", I64({0}));
    m.Node("Div", {"a", "z"}, {"q"});
    m.Node("Add", {"x", "q"}, {"y"});
    m.Output("y", DataType::kInt64, {1});
    return m.Serialize();
  }));

  // --- Deep nesting.
  c.push_back(Simple("nested_if_past_depth_limit", [] { return NestedIf(80); }));
  c.push_back(Simple("loop_body_missing_outputs", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Initializer("n", I64s({}, {3}));
    m.Initializer("c", Tensor::FromVector<bool>({}, {true}));
    auto& loop = m.Node("Loop", {"n", "c", "x"}, {"y"});
    GraphBuilder body = SetGraphAttr(loop, "body");
    body.Input("i", DataType::kInt64, {});
    body.Input("cond", DataType::kBool, {});
    body.Input("v", DataType::kFloat, {1});
    body.Node("Relu", {"v"}, {"v2"});
    body.Output("v2", DataType::kFloat, {1});  // the condition output is missing
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  // Found by fuzzing: an opset-8 Scan whose state is a scalar (no batch axis) sliced past its end.
  c.push_back(Simple("scan8_scalar_state", [] {
    ModelBuilder m(8, 3);
    m.Input("initial", DataType::kFloat, {}, /*rank_known=*/false);
    m.Input("x", DataType::kFloat, {1, 3, 2});
    auto& scan = m.Node("Scan", {"", "initial", "x"}, {"y", "z"});
    SetAttr(scan, "num_scan_inputs", int64_t{1});
    GraphBuilder body = SetGraphAttr(scan, "body");
    body.Input("sum_in", DataType::kFloat, {2});
    body.Input("next", DataType::kFloat, {2});
    body.Node("Add", {"sum_in", "next"}, {"sum_out"});
    body.Node("Identity", {"sum_out"}, {"scan_out"});
    body.Output("sum_out", DataType::kFloat, {2});
    body.Output("scan_out", DataType::kFloat, {2});
    m.Output("y", DataType::kFloat, {}, false);
    m.Output("z", DataType::kFloat, {}, false);
    return m.Serialize();
  }));
  c.push_back(Simple("scan8_state_batch_mismatch", [] {
    ModelBuilder m(8, 3);
    m.Input("initial", DataType::kFloat, {5, 2});
    m.Input("x", DataType::kFloat, {1, 3, 2});
    auto& scan = m.Node("Scan", {"", "initial", "x"}, {"y", "z"});
    SetAttr(scan, "num_scan_inputs", int64_t{1});
    GraphBuilder body = SetGraphAttr(scan, "body");
    body.Input("sum_in", DataType::kFloat, {2});
    body.Input("next", DataType::kFloat, {2});
    body.Node("Add", {"sum_in", "next"}, {"sum_out"});
    body.Node("Identity", {"sum_out"}, {"scan_out"});
    body.Output("sum_out", DataType::kFloat, {2});
    body.Output("scan_out", DataType::kFloat, {2});
    m.Output("y", DataType::kFloat, {}, false);
    m.Output("z", DataType::kFloat, {}, false);
    return m.Serialize();
  }));
  c.push_back(Simple("if_condition_not_bool", [] {
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {1});
    m.Initializer("c", Tensor::FromVector<float>({2}, {1, 0}));
    auto& node = m.Node("If", {"c"}, {"y"});
    for (const char* branch : {"then_branch", "else_branch"}) {
      GraphBuilder b = SetGraphAttr(node, branch);
      b.Node("Identity", {"x"}, {"r"});
      b.Output("r", DataType::kFloat, {1});
    }
    m.Output("y", DataType::kFloat, {1});
    return m.Serialize();
  }));
  // --- Einsum on the batched GEMM (ContractOnGemm) and its direct loop.
  auto einsum = [](const std::string& eq) {
    return [eq](onnx::NodeProto& n) { SetAttr(n, "equation", eq); };
  };
  const Tensor a23 = Wave({2, 3}), b34 = Wave({3, 4}, 1);
  // An output label twice made the GEMM read A as [M*M, K] past its end.
  c.push_back(NodeCase("einsum_repeated_output_label", 13, "Einsum", {{"a", a23}, {"b", b34}}, 1, einsum("ij,jk->iik")));
  c.push_back(NodeCase("einsum_diagonal_sizes_differ", 13, "Einsum", {{"a", a23}}, 1, einsum("ii->i")));
  c.push_back(NodeCase("einsum_diagonal_of_one_and_three", 13, "Einsum", {{"a", Wave({1, 3})}}, 1, einsum("ii->i")));
  c.push_back(NodeCase("einsum_label_sizes_disagree", 13, "Einsum", {{"a", a23}, {"b", Wave({4, 5})}}, 1,
                       einsum("ij,jk->ik")));
  c.push_back(NodeCase("einsum_ellipsis_dims_disagree", 13, "Einsum", {{"a", Wave({2, 2, 3})}, {"b", Wave({3, 3, 4})}}, 1,
                       einsum("...ij,...jk->...ik")));
  c.push_back(NodeCase("einsum_output_label_not_in_inputs", 13, "Einsum", {{"a", a23}}, 1, einsum("ij->k")));
  c.push_back(NodeCase("einsum_bad_character", 13, "Einsum", {{"a", a23}}, 1, einsum("i$->i")));
  c.push_back(NodeCase("einsum_operand_count", 13, "Einsum", {{"a", a23}}, 1, einsum("ij,jk->ik")));
  // An empty operand whose other dims multiply past 2^63: the label sizes' products (and its strides) overflowed.
  c.push_back(Case{"einsum_empty_operand_huge_dims", [](const std::string& dir) {
                     onnx::TensorProto t;
                     t.set_name("a");
                     t.set_data_type(static_cast<int>(DataType::kFloat));
                     for (int64_t d : {int64_t{0}, int64_t{1} << 40, int64_t{1} << 40}) t.add_dims(d);
                     t.set_raw_data("");
                     WriteBytes(dir + "/a.pb", t.SerializeAsString());
                     const std::string model = dir + "/model.onnx";
                     WriteBytes(model, OneNode(13, "Einsum", {{"a", DataType::kFloat}}, 1,
                                               [](onnx::NodeProto& n) { SetAttr(n, "equation", std::string("cab->")); }));
                     return model + " --input a=" + dir + "/a.pb";
                   }});
  // 2^40 steps of the direct loop over two 4 MB operands: refused, not run for hours.
  c.push_back(NodeCase("einsum_direct_loop_too_long", 13, "Einsum",
                       {{"a", F32s(Shape(10, 4), std::vector<float>(1 << 20, 1.0f))},
                        {"b", F32s(Shape(10, 4), std::vector<float>(1 << 20, 1.0f))}},
                       1, einsum("abcdefghij,klmnopqrst->")));
  // Defined answers (checked against ONNX Runtime by hand): 0-size dims, broadcast ellipses, and
  // integer products that wrap (two's complement, not a signed overflow).
  c.push_back(NodeCase("einsum_zero_size_dims", 13, "Einsum", {{"a", Wave({0, 2, 3})}, {"b", Wave({1, 3, 4})}}, 1,
                       einsum("...ij,...jk->...ik")));
  c.back().may_succeed = true;
  c.push_back(NodeCase("einsum_nothing_summed_over_zero", 13, "Einsum", {{"a", Wave({2, 0})}, {"b", Wave({0, 4})}}, 1,
                       einsum("ij,jk->ik")));
  c.back().may_succeed = true;
  c.push_back(NodeCase("einsum_int64_products_wrap", 13, "Einsum", {{"a", I64({kMax, kMax})}, {"b", I64({2, 2})}}, 1,
                       einsum("i,i->"), "", DataType::kInt64));
  c.back().may_succeed = true;

  // --- ConvTranspose (ScatterPlanes, 1-D and 2-D), weights fed at run time and constant (packed).
  auto conv_attrs = [](std::vector<std::pair<std::string, std::vector<int64_t>>> ints) {
    return [ints](onnx::NodeProto& n) {
      for (const auto& [k, v] : ints) {
        if (k == "group") {
          SetAttr(n, k, v[0]);
        } else {
          SetAttr(n, k, v);
        }
      }
    };
  };
  const int64_t k62 = int64_t{1} << 62;
  // --- Pools (the SIMD rows, the generic loops, the 8-bit max pool and QLinearAveragePool): windows
  // of 2^40 taps over pads as long have defined answers (their taps are counted, not walked), and
  // extents past INT64_MAX are refused.
  {
    const int64_t t40 = int64_t{1} << 40;
    const auto huge = conv_attrs({{"kernel_shape", {t40}}, {"strides", {t40}}, {"pads", {t40 - 1, t40}}});
    for (const char* op : {"MaxPool", "AveragePool"}) {
      const std::string name = std::string(op) == "MaxPool" ? "max" : "average";
      c.push_back(NodeCase("pool_" + name + "_window_of_2_40_taps", 22, op, {{"x", Wave({1, 1, 3})}}, 1, huge));
      c.back().may_succeed = true;
      c.push_back(NodeCase("pool_" + name + "_2d_windows_of_2_80_taps", 22, op, {{"x", Wave({1, 1, 3, 3})}}, 1,
                           conv_attrs({{"kernel_shape", {t40, t40}}, {"strides", {t40, t40}},
                                       {"pads", {t40 - 1, t40 - 1, t40, t40}}})));
      c.back().may_succeed = true;
      c.push_back(NodeCase("pool_" + name + "_dilations_past_int64_max", 22, op, {{"x", Wave({1, 1, 2})}}, 1,
                           conv_attrs({{"kernel_shape", {3}}, {"dilations", {k62}}})));
      c.push_back(NodeCase("pool_" + name + "_pads_int64_max", 22, op, {{"x", Wave({1, 1, 2})}}, 1,
                           conv_attrs({{"kernel_shape", {2}}, {"pads", {kMax, 1}}})));
    }
    c.push_back(NodeCase("pool_max_uint8_window_of_2_40_taps", 22, "MaxPool", {{"x", Tensor::FromVector<uint8_t>({1, 1, 3}, {1, 5, 2})}}, 1,
                         huge, "", DataType::kUint8));
    c.back().may_succeed = true;
  }
  for (bool constant : {false, true}) {
    const std::string s = constant ? "_constant_w" : "";
    const Tensor x = Wave({1, 2, 3, 3}), w = Wave({2, 3, 3, 3}, 1);
    auto convt = [&](const std::string& name, const Tensor& xv, const Tensor& wv, auto attrs) {
      c.push_back(NodeCase("conv_transpose_" + name + s, 17, "ConvTranspose", {{"x", xv}, {"w", wv, constant}}, 1, attrs));
    };
    convt("huge_strides", x, w, conv_attrs({{"strides", {k62, k62}}}));
    convt("huge_dilations", x, w, conv_attrs({{"dilations", {k62, 1}}}));
    convt("output_padding_int64_max", x, w, conv_attrs({{"strides", {2, 2}}, {"output_padding", {kMax, 1}}}));
    convt("pads_int64_max", x, w, conv_attrs({{"pads", {kMax, 0, kMax, 0}}}));
    convt("huge_output_shape", x, w, conv_attrs({{"output_shape", {int64_t{1} << 31, int64_t{1} << 31}}}));
    convt("negative_output_shape", x, w, conv_attrs({{"output_shape", {-3, 4}}}));
    convt("dilation_zero", x, w, conv_attrs({{"dilations", {0, 1}}}));
    convt("group_not_dividing", Wave({1, 3, 3, 3}), Wave({3, 3, 3, 3}), conv_attrs({{"group", {2}}}));
    convt("weight_lies_about_channels", x, Wave({3, 3, 3, 3}), conv_attrs({}));
    convt("kernel_shape_lies", x, w, conv_attrs({{"kernel_shape", {2, 2}}}));
    // Pads cut the output to one pixel while the unfolded product (col) would hold 2^32 floats.
    convt("col_past_the_tensor_limit", Wave({1, 1, 1 << 16}), Wave({1, 1, 1 << 16}),
          conv_attrs({{"pads", {(1 << 16) - 1, (1 << 16) - 1}}}));
    convt("1d_huge_output_shape", Wave({1, 2, 5}), Wave({2, 3, 3}), conv_attrs({{"output_shape", {int64_t{1} << 40}}}));
    convt("1d_strides_and_pads_overflow", Wave({1, 2, 5}), Wave({2, 3, 3}),
          conv_attrs({{"strides", {int64_t{1} << 61}}, {"pads", {k62, k62}}}));
    convt("output_padding_past_stride", x, w, conv_attrs({{"strides", {2, 2}}, {"output_padding", {2, 2}}}));
    convt("zero_input_channels", Wave({1, 0, 3, 3}), Wave({0, 3, 3, 3}), conv_attrs({}));
    c.back().may_succeed = true;
    convt("1d_zero_length", Wave({1, 2, 0}), Wave({2, 3, 3}), conv_attrs({}));
    c.back().may_succeed = true;
  }

  // --- Conv over 1-D and 3-D on PixelGather (constant W of 16 or more (channel, tap) columns) and
  // on the unfolding (W fed at run time).
  for (bool constant : {true, false}) {
    const std::string s = constant ? "" : "_input_w";
    auto conv = [&](const std::string& name, const Tensor& xv, const Tensor& wv, auto attrs) {
      c.push_back(NodeCase("conv_" + name + s, 17, "Conv", {{"x", xv}, {"w", wv, constant}}, 1, attrs));
    };
    const Tensor x1 = Wave({1, 8, 4}), w1 = Wave({4, 8, 3}, 1);
    const Tensor x3 = Wave({1, 4, 3, 3, 3}), w3 = Wave({2, 4, 3, 3, 3}, 1);
    conv("1d_dilation_past_input", x1, w1, conv_attrs({{"dilations", {10}}}));
    conv("1d_dilation_overflows", x1, w1, conv_attrs({{"dilations", {k62}}}));
    conv("1d_pads_overflow", x1, w1, conv_attrs({{"pads", {kMax, kMax}}}));
    conv("1d_stride_zero", x1, w1, conv_attrs({{"strides", {0}}}));
    conv("1d_kernel_shape_lies", x1, w1, conv_attrs({{"kernel_shape", {2}}}));
    conv("3d_dilation_past_input", x3, w3, conv_attrs({{"dilations", {1, 5, 1}}}));
    conv("3d_pads_overflow", x3, w3, conv_attrs({{"pads", std::vector<int64_t>(6, kMax)}}));
    conv("3d_kernel_shape_lies", x3, w3, conv_attrs({{"kernel_shape", {3, 3, 2}}}));
    conv("same_upper_int64_max_stride", x1, w1, [](onnx::NodeProto& n) {
      SetAttr(n, "strides", std::vector<int64_t>{std::numeric_limits<int64_t>::max()});
      SetAttr(n, "auto_pad", std::string("SAME_UPPER"));
    });
    c.back().may_succeed = true;
    // Pads far past the input with strides that step over them: a few output pixels, and a padded
    // copy that was terabytes (PixelGather's) until it was left to the unfolding.
    conv("1d_huge_pads_and_stride", x1, w1, conv_attrs({{"strides", {int64_t{1} << 31}}, {"pads", {1 << 30, 1 << 30}}}));
    c.back().may_succeed = true;
    conv("3d_huge_pads_and_stride", x3, w3, conv_attrs({{"strides", {4000, 4000, 4000}}, {"pads", std::vector<int64_t>(6, 1000)}}));
    c.back().may_succeed = true;
    // A kernel with an empty axis sums nothing: the bias (zeros here). The blocked convolution
    // (constant W of 16 output channels) divided by its taps instead (SIGFPE, found by a
    // structural fuzzer on YOLOv8n); depthwise too.
    conv("2d_empty_kernel_axis", Wave({1, 16, 6, 6}), Wave({16, 16, 0, 1}, 1), conv_attrs({}));
    c.back().may_succeed = true;
    conv("2d_depthwise_empty_kernel_axis", Wave({1, 16, 6, 6}), Wave({16, 1, 3, 0}, 1), conv_attrs({{"group", {16}}}));
    c.back().may_succeed = true;
    // An empty last axis padded out to a window divided by its length (SIGFPE) in the padded copy.
    conv("3d_empty_axis_padded", Wave({1, 4, 3, 3, 0}), Wave({2, 4, 3, 3, 1}, 1),
         conv_attrs({{"pads", {1, 1, 1, 1, 1, 1}}}));
    c.back().may_succeed = true;
    // A stride of INT64_MAX (one output column) overflowed the unfolding's ceil division.
    conv("2d_int64_max_stride", Wave({1, 32, 3, 3}), Wave({8, 32, 3, 3}, 1),
         conv_attrs({{"strides", {kMax, kMax}}, {"pads", {1, 1, 1, 1}}}));
    c.back().may_succeed = true;
    conv("1d_batch_zero", Wave({0, 8, 4}), w1, conv_attrs({}));
    c.back().may_succeed = true;
  }

  // --- RNN / GRU / LSTM on packed constant weights (PackRows) and on weights fed at run time.
  for (bool constant : {true, false}) {
    const std::string s = constant ? "" : "_input_w";
    const int64_t h = 4, in = 3, t = 5, b = 2;
    for (const auto& [op, gates] : std::vector<std::pair<std::string, int64_t>>{{"RNN", 1}, {"GRU", 3}, {"LSTM", 4}}) {
      const int outs = op == "LSTM" ? 3 : 2;
      auto rnn = [&, op = op](const std::string& name, Tensor w, Tensor r, std::vector<Operand> extra,
                              std::function<void(onnx::NodeProto&)> more = nullptr) {
        std::vector<Operand> ops = {{"x", Wave({t, b, in})}, {"w", w, constant}, {"r", r, constant}};
        ops.insert(ops.end(), extra.begin(), extra.end());
        std::string lower = op;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
        c.push_back(NodeCase(lower + "_" + name + s, 14, op, ops, outs, [h, more](onnx::NodeProto& n) {
          SetAttr(n, "hidden_size", h);
          if (more) more(n);
        }));
      };
      const Tensor w = Wave({1, gates * h, in}, 1), r = Wave({1, gates * h, h}, 2);
      rnn("w_disagrees_with_hidden_size", Wave({1, gates * 5, in}), r, {});
      rnn("r_disagrees_with_hidden_size", w, Wave({1, gates * h, h + 1}), {});
      rnn("bidirectional_with_one_direction", w, r, {}, [](onnx::NodeProto& n) {
        SetAttr(n, "direction", std::string("bidirectional"));
      });
      rnn("sequence_lens_past_seq_length", w, r,
          {{"", Tensor()}, {"seq", Tensor::FromVector<int32_t>({2}, {t + 3, 2})}});
      rnn("sequence_lens_negative", w, r, {{"", Tensor()}, {"seq", Tensor::FromVector<int32_t>({2}, {-1, 2})}});
      rnn("initial_h_wrong_shape", w, r, {{"", Tensor()}, {"", Tensor()}, {"h0", Wave({1, b + 1, h})}});
      rnn("activations_unknown", w, r, {}, [](onnx::NodeProto& n) {
        auto* a = n.add_attribute();
        a->set_name("activations");
        a->set_type(onnx::AttributeProto::STRINGS);
        for (int i = 0; i < 3; ++i) a->add_strings("Frobnicate");
      });
      rnn("clip_negative", w, r, {}, [](onnx::NodeProto& n) { SetAttr(n, "clip", -1.0f); });
    }
  }
  // com.microsoft DynamicQuantizeLSTM: W [dirs, input, 4h] and R [dirs, h, 4h] in 8 bits.
  for (bool constant : {true, false}) {
    const std::string s = constant ? "" : "_input_w";
    auto i8 = [](const Shape& shape) {
      std::vector<int8_t> v(static_cast<size_t>(ElementCount(shape)));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
      return Tensor::FromVector<int8_t>(shape, v);
    };
    auto dq = [&](const std::string& name, const Tensor& w, const Tensor& r, const Tensor& w_scale) {
      c.push_back(NodeCase("dynamic_quantize_lstm_" + name + s, 14, "DynamicQuantizeLSTM",
                           {{"x", Wave({5, 2, 3})}, {"w", w, constant}, {"r", r, constant}, {"", Tensor()}, {"", Tensor()},
                            {"", Tensor()}, {"", Tensor()}, {"", Tensor()}, {"ws", w_scale, constant},
                            {"wz", Tensor::FromVector<int8_t>({1}, {0}), constant},
                            {"rs", F32s({1}, {0.02f}), constant}, {"rz", Tensor::FromVector<int8_t>({1}, {0}), constant}},
                           3, [](onnx::NodeProto& n) { SetAttr(n, "hidden_size", int64_t{4}); }, "com.microsoft"));
    };
    dq("w_disagrees_with_hidden_size", i8({1, 3, 20}), i8({1, 4, 16}), F32s({1}, {0.01f}));
    dq("w_in_onnx_layout", i8({1, 16, 3}), i8({1, 16, 4}), F32s({1}, {0.01f}));
    dq("w_scale_wrong_count", i8({1, 3, 16}), i8({1, 4, 16}), F32s({3}, {0.01f, 0.02f, 0.03f}));
  }

  // --- Split over channels after a blocked Conv (the blocked layout splits whole 16-channel blocks).
  auto split_after_conv = [](int opset, int outputs, std::function<void(ModelBuilder&, onnx::NodeProto&)> setup) {
    return [=] {
      return BlockedConvThen(opset, 32, [&](ModelBuilder& m) {
        std::vector<std::string> outs;
        for (int i = 0; i < outputs; ++i) outs.push_back("y" + std::to_string(i));
        auto& split = m.Node("Split", {"c"}, outs, "victim");
        SetAttr(split, "axis", int64_t{1});
        setup(m, split);
        for (const auto& o : outs) m.Output(o, DataType::kFloat, {}, false);
      });
    };
  };
  auto split_sizes = [](std::vector<int64_t> sizes) {
    return [sizes](ModelBuilder& m, onnx::NodeProto& n) {
      m.Initializer("sizes", I64(sizes));
      n.add_input("sizes");
    };
  };
  // Block sizes near 2^62 whose sum wraps around to the 32 channels (a signed overflow at load).
  c.push_back(Simple("blocked_split_sizes_wrap_int64",
                     split_after_conv(13, 5, split_sizes({16, k62, k62, k62, k62 + 16}))));
  c.push_back(Simple("blocked_split_sizes_do_not_sum", split_after_conv(13, 2, split_sizes({16, 32}))));
  c.push_back(Simple("blocked_split_zero_piece", split_after_conv(13, 2, split_sizes({0, 32}))));
  c.back().may_succeed = true;
  c.push_back(Simple("blocked_split_sizes_from_graph_input",
                     split_after_conv(13, 2, [](ModelBuilder& m, onnx::NodeProto& n) {
                       m.Input("sizes", DataType::kInt64, {2});
                       n.add_input("sizes");
                     }),
                     {{"sizes", I64({16, 8})}}));
  c.push_back(Simple("blocked_split_num_outputs_uneven",
                     split_after_conv(18, 3, [](ModelBuilder&, onnx::NodeProto& n) { SetAttr(n, "num_outputs", int64_t{3}); })));
  c.back().may_succeed = true;
  c.push_back(Simple("blocked_split_num_outputs_lies",
                     split_after_conv(18, 2, [](ModelBuilder&, onnx::NodeProto& n) { SetAttr(n, "num_outputs", int64_t{4}); })));

  // --- com.microsoft FusedConv as ONNX Runtime saves it (activation_params), and its residual Z.
  auto fused_conv = [](std::function<void(onnx::NodeProto&)> attrs, std::vector<Operand> z = {}) {
    std::vector<Operand> ops = {{"x", Wave({1, 8, 6, 6})}, {"w", Wave({16, 8, 3, 3}, 1), true}, {"b", Wave({16}, 2), true}};
    ops.insert(ops.end(), z.begin(), z.end());
    return std::make_pair(ops, [attrs](onnx::NodeProto& n) {
      SetAttr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
      attrs(n);
    });
  };
  auto activation = [](const std::string& name, std::vector<float> params) {
    return [name, params](onnx::NodeProto& n) {
      SetAttr(n, "activation", name);
      auto* a = n.add_attribute();
      a->set_name("activation_params");
      a->set_type(onnx::AttributeProto::FLOATS);
      for (float p : params) a->add_floats(p);
    };
  };
  const float kNan = std::nanf("");
  for (const auto& [name, attrs, z, may_succeed] :
       std::vector<std::tuple<std::string, std::function<void(onnx::NodeProto&)>, std::vector<Operand>, bool>>{
           {"fused_conv_unknown_activation", activation("Frobnicate", {}), {}, false},
           {"fused_conv_params_too_few", activation("Clip", {-0.5f}), {}, true},
           {"fused_conv_params_too_many", activation("LeakyRelu", {0.1f, 0.2f, 0.3f}), {}, true},
           {"fused_conv_clip_nan_params", activation("Clip", {kNan, kNan}), {}, true},
           {"fused_conv_leaky_relu_nan_alpha", activation("LeakyRelu", {kNan}), {}, true},
           // 15 channels for 16: the blocked copy of Z rounded both up to one block.
           {"fused_conv_z_fewer_channels", activation("Relu", {}), {{"z", Wave({1, 15, 6, 6}, 3)}}, false},
           {"fused_conv_z_wrong_size", activation("Relu", {}), {{"z", Wave({1, 16, 5, 6}, 3), true}}, false},
           {"fused_conv_z_int", activation("Relu", {}), {{"z", Tensor::FromVector<int32_t>({1}, {1})}}, false},
       }) {
    const auto [ops, node_attrs] = fused_conv(attrs, z);
    c.push_back(NodeCase(name, 17, "FusedConv", ops, 1, node_attrs, "com.microsoft"));
    c.back().may_succeed = may_succeed;
  }
  // X of 15 channels into a blocked Conv whose weights take 16.
  c.push_back(Simple("blocked_conv_x_fewer_channels", [] {
    return BlockedConvThen(17, 32, [](ModelBuilder& m) { m.Output("c", DataType::kFloat, {}, false); }, 15);
  }));

  // --- ReduceMax / ReduceMin / MeanVarianceNormalization / LpNormalization on the row kernels.
  auto axes_input = [](std::vector<int64_t> axes) { return Operand{"axes", I64(axes), true}; };
  for (const std::string op : {"ReduceMax", "ReduceMin"}) {
    std::string lower = op;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
    c.push_back(NodeCase(lower + "_axis_out_of_range", 18, op, {{"x", Wave({3, 4})}, axes_input({2})}, 1));
    c.push_back(NodeCase(lower + "_axis_int64_min", 18, op, {{"x", Wave({3, 4})}, axes_input({kMin})}, 1));
    c.push_back(NodeCase(lower + "_axis_repeated", 18, op, {{"x", Wave({3, 4})}, axes_input({1, -1})}, 1));
    c.push_back(NodeCase(lower + "_scalar_axis", 18, op, {{"x", F32s({}, {2})}, axes_input({0})}, 1));
    c.push_back(NodeCase(lower + "_over_empty_axis", 18, op, {{"x", Wave({3, 0})}, axes_input({1})}, 1));
    c.back().may_succeed = true;
    Tensor nans = Wave({4, 37});
    nans.mutable_data<float>()[5] = kNan;
    c.push_back(NodeCase(lower + "_nan_rows", 18, op, {{"x", nans}, axes_input({1})}, 1));
    c.back().may_succeed = true;
  }
  auto lp = [](int64_t p, int64_t axis) {
    return [p, axis](onnx::NodeProto& n) {
      SetAttr(n, "p", p);
      SetAttr(n, "axis", axis);
    };
  };
  c.push_back(NodeCase("lp_normalization_p3", 13, "LpNormalization", {{"x", Wave({4, 33})}}, 1, lp(3, 1)));
  c.push_back(NodeCase("lp_normalization_p0", 13, "LpNormalization", {{"x", Wave({4, 33})}}, 1, lp(0, 1)));
  c.push_back(NodeCase("lp_normalization_axis_out_of_range", 13, "LpNormalization", {{"x", Wave({4, 33})}}, 1, lp(2, 2)));
  c.push_back(NodeCase("lp_normalization_scalar", 13, "LpNormalization", {{"x", F32s({}, {3})}}, 1, lp(2, 0)));
  c.push_back(NodeCase("lp_normalization_empty_rows", 13, "LpNormalization", {{"x", Wave({3, 0})}}, 1, lp(2, 1)));
  c.back().may_succeed = true;
  auto mvn_axes = [](std::vector<int64_t> axes) { return [axes](onnx::NodeProto& n) { SetAttr(n, "axes", axes); }; };
  c.push_back(NodeCase("mvn_axis_out_of_range", 13, "MeanVarianceNormalization", {{"x", Wave({2, 3, 4, 5})}}, 1,
                       mvn_axes({0, 4})));
  c.push_back(NodeCase("mvn_default_axes_on_rank_2", 13, "MeanVarianceNormalization", {{"x", Wave({3, 4})}}, 1));
  c.push_back(NodeCase("mvn_empty_axis", 13, "MeanVarianceNormalization", {{"x", Wave({2, 3, 0, 5})}}, 1));
  c.back().may_succeed = true;
  c.push_back(NodeCase("mvn_repeated_axes", 13, "MeanVarianceNormalization", {{"x", Wave({2, 3, 4, 5})}}, 1,
                       mvn_axes({0, 0, 2})));
  c.back().may_succeed = true;
  const auto reasons = Reasons();
  for (Case& one : c) {
    auto it = reasons.find(one.name);
    if (it != reasons.end()) std::tie(one.code, one.reason) = it->second;
  }
  return c;
}

class Hostile : public testing::TestWithParam<Case> {};

TEST_P(Hostile, RefusedWithOneLine) {
  const Case& hostile = GetParam();
  const std::string dir = TmpRoot() + "/" + hostile.name;
  mkdir(dir.c_str(), 0755);
  const std::string args = hostile.make(dir);
  const std::string out = dir + "/stdout.txt", err = dir + "/stderr.txt";
  const std::string command = "timeout -s KILL " + std::to_string(kTimeLimitSeconds) + " tools/run_model " + args +
                              " --threads 2 >" + out + " 2>" + err;
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << hostile.name << ": killed by a signal";
  const int code = WEXITSTATUS(status);
  const std::string stderr_text = ReadBytes(err);
  ASSERT_NE(code, 137) << hostile.name << ": timed out after " << kTimeLimitSeconds << " s";
  if (hostile.may_succeed && code == 0) return;
  EXPECT_EQ(code, 2) << hostile.name << ": " << stderr_text << ReadBytes(out);
  EXPECT_FALSE(stderr_text.empty());
  EXPECT_EQ(stderr_text.find('\n'), stderr_text.size() - 1) << "not one line: " << stderr_text;
  std::printf("%-40s exit %d: %s", hostile.name.c_str(), code, stderr_text.c_str());
  ASSERT_FALSE(hostile.reason.empty()) << hostile.name << " states no reason to be refused for (Reasons())";
  EXPECT_NE(stderr_text.find(hostile.code.empty() ? "run_model: input" : hostile.code + ": "), std::string::npos)
      << hostile.name << " was refused with another code than " << hostile.code << ": " << stderr_text;
  EXPECT_NE(stderr_text.find(hostile.reason), std::string::npos)
      << hostile.name << " was refused for another reason than '" << hostile.reason << "': " << stderr_text;
}

// Random bit flips of a valid model: anything but a crash or a hang is acceptable.
TEST(HostileFlips, NeverCrash) {
  const std::string base = ValidModel();
  const std::string dir = TmpRoot() + "/flips";
  mkdir(dir.c_str(), 0755);
  uint64_t state = 88172645463325252ull;
  std::string list;
  for (int i = 0; i < 24; ++i) {
    std::string m = base;
    for (int k = 0; k < 3; ++k) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      m[state % m.size()] ^= static_cast<char>(1u << (state >> 40) % 8);
    }
    const std::string path = dir + "/flip_" + std::to_string(i) + ".onnx";
    WriteBytes(path, m);
    list += " " + path;
  }
  // One shell loop: each flipped file runs in its own run_model.
  const std::string command = "for f in" + list + "; do timeout -s KILL " + std::to_string(kTimeLimitSeconds) +
                              " tools/run_model $f --fill >/dev/null 2>" + dir +
                              "/err.txt; c=$?; if [ $c -ne 0 ] && [ $c -ne 2 ]; then echo \"$f exit $c\"; exit 1; fi; done";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

INSTANTIATE_TEST_SUITE_P(All, Hostile, testing::ValuesIn(AllCases()),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace onnxflow
