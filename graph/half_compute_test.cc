// float16 graphs compute in float (graph/half_compute.h): which nodes move to float, where the
// Casts go, and that the results are the 16-bit model's.
#include "graph/half_compute.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <limits>
#include <vector>

#include "graph/model.h"
#include "include/onnxflow/session.h"
#include "ops/framework/numeric.h"
#include "ops/register_all.h"
#include "tools/model_builder.h"

namespace onnxflow::graph {
namespace {

using tools::ModelBuilder;
using tools::SetAttr;

Tensor Half(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  std::vector<Float16> h;
  for (float v : values) h.push_back(Float16{FloatToHalf(v)});
  return Tensor::FromVector<Float16>(shape, h);
}

std::vector<float> Ramp(int n, float scale) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(scale * static_cast<float>((i * 7) % 11 - 5));
  return v;
}

// x (float) -> Cast to half -> Conv (half weights) -> Relu -> Hardmax (no float form here: stays
// half) -> Add of a half constant, and Relu times that constant as a graph output in half, plus a
// Cast back to float: the shape fp16 converters write.
ModelBuilder HalfModel() {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 2, 4, 4});
  m.Initializer("w", Half({4, 2, 3, 3}, Ramp(72, 0.125f)));
  m.Initializer("b", Half({4}, {0.5f, -0.25f, 1.0f, 0.0f}));
  m.Initializer("k", Half({1, 4, 1, 1}, {1.0f, 2.0f, 3.0f, 4.0f}));
  auto& to_half = m.Node("Cast", {"x"}, {"xh"}, "to_half");
  SetAttr(to_half, "to", static_cast<int64_t>(onnx::TensorProto::FLOAT16));
  auto& conv = m.Node("Conv", {"xh", "w", "b"}, {"c"}, "conv");
  SetAttr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"r"}, "relu");
  m.Node("Hardmax", {"r"}, {"h"}, "hardmax");
  m.Node("Add", {"h", "k"}, {"sum"}, "add");
  m.Node("Mul", {"r", "k"}, {"y16"}, "mul");
  auto& to_float = m.Node("Cast", {"sum"}, {"y"}, "to_float");
  SetAttr(to_float, "to", static_cast<int64_t>(onnx::TensorProto::FLOAT));
  m.Output("y", DataType::kFloat, {1, 4, 4, 4});
  m.Output("y16", DataType::kFloat16, {1, 4, 4, 4});
  return m;
}

std::vector<std::string> Ops(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.push_back((n.domain.empty() ? "" : n.domain + ".") + n.op_type());
  return ops;
}

// The model loaded without the load passes, then this pass alone.
std::unique_ptr<Model> ThisPassOnly(const std::string& bytes) {
  SessionOptions options;
  options.optimize = false;
  auto model = LoadModelBytes(bytes, "", options, GlobalKernelRegistry());
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return nullptr;
  const Status status = ComputeHalfInFloat((*model)->graph.get(), 17);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return std::move(model).value();
}

TEST(HalfComputeTest, FloatOpsMoveToFloatWithCastsAtTheBorders) {
  auto model = ThisPassOnly(HalfModel().Serialize());
  ASSERT_NE(model, nullptr);
  Graph& g = *model->graph;
  // Cast x to float (was: to half), Conv, Relu, then Relu's result rounded to half for Hardmax,
  // Hardmax in half, its result widened for Add, Add, Mul, Mul's result narrowed for the graph
  // output y16, and the final Cast (now float to float).
  EXPECT_EQ(Ops(g), (std::vector<std::string>{"Cast", "Conv", "Relu", "Cast", "Hardmax", "Cast", "Add", "Mul",
                                              "Cast", "Cast"}));
  // The half constants that only float nodes read are widened and their originals released, but
  // for Conv's weights, which stay 16-bit; the graph's outputs keep their names and declared types.
  EXPECT_EQ(g.constants.at("w").dtype(), DataType::kFloat16);
  EXPECT_EQ(g.constants.count("w/float"), 0u);
  EXPECT_EQ(g.constants.at("b/float").dtype(), DataType::kFloat);
  EXPECT_EQ(g.constants.at("b").dtype(), DataType::kUndefined);
  EXPECT_EQ(g.constants.at("k/float").dtype(), DataType::kFloat);
  EXPECT_EQ(g.nodes.At(1).proto->input(1), "w");
  EXPECT_EQ(g.nodes.At(8).proto->output(0), "y16");
  EXPECT_EQ(g.nodes.At(8).proto->input(0), "y16/float");
  EXPECT_EQ(g.nodes.At(3).proto->output(0), "r");
  EXPECT_EQ(g.nodes.At(4).proto->input(0), "r");
  for (int i : {0, 9}) {
    EXPECT_EQ(g.nodes.At(i).proto->attribute(0).i(), onnx::TensorProto::FLOAT) << i;
  }
}

TEST(HalfComputeTest, OptimizedHalfModelGetsTheFloatFusions) {
  auto model = LoadModelBytes(HalfModel().Serialize(), "", SessionOptions(), GlobalKernelRegistry());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  bool fused_conv = false;
  for (const Node& n : (*model)->graph->nodes) {
    EXPECT_NE(n.op_type(), "Relu") << "Conv + Relu fuse in float";
    fused_conv |= n.domain == "com.onnxflow";
  }
  EXPECT_TRUE(fused_conv);
}

TEST(HalfComputeTest, ResultsMatchTheHalfModelComputedOpByOp) {
  std::vector<float> x = Ramp(32, 0.3f);
  auto run = [&](bool optimize) {
    SessionOptions options;
    options.optimize = optimize;
    auto session = Session::LoadFromBytes(HalfModel().Serialize(), options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    auto out = session->Run({{"x", Value(Tensor::FromVector<float>({1, 2, 4, 4}, x))}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return std::move(out).value();
  };
  const auto half = run(false), in_float = run(true);
  ASSERT_EQ(half.size(), 2u);
  ASSERT_EQ(in_float.size(), 2u);
  const Tensor& y0 = half[0].value.tensor();
  const Tensor& y1 = in_float[0].value.tensor();
  ASSERT_EQ(y1.dtype(), DataType::kFloat);
  for (int64_t i = 0; i < y0.size(); ++i) EXPECT_EQ(y0.data<float>()[i], y1.data<float>()[i]) << i;
  const Tensor& h0 = half[1].value.tensor();
  const Tensor& h1 = in_float[1].value.tensor();
  ASSERT_EQ(h1.dtype(), DataType::kFloat16);
  for (int64_t i = 0; i < h0.size(); ++i) {
    const float a = HalfToFloat(h0.data<Float16>()[i].bits), b = HalfToFloat(h1.data<Float16>()[i].bits);
    // One rounding to half in place of two: within one unit in the last place of half.
    EXPECT_LE(std::fabs(a - b), std::fabs(a) * 0x1p-10f + 1e-6f) << i;
  }
}

// MatMul and Gemm keep 16-bit weight matrices in 16 bits (ops/math/constant_b.h); a weight that
// another float node also reads is widened for it.
TEST(HalfComputeTest, ProductWeightsStayHalf) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat16, {3, 3});
  m.Initializer("w", Half({3, 3}, Ramp(9, 0.5f)));
  m.Initializer("v", Half({3, 3}, Ramp(9, 0.25f)));
  m.Node("MatMul", {"x", "w"}, {"a"});
  m.Node("Gemm", {"a", "v"}, {"g"});
  m.Node("Add", {"g", "v"}, {"y"});
  m.Output("y", DataType::kFloat16, {3, 3});
  auto model = ThisPassOnly(m.Serialize());
  ASSERT_NE(model, nullptr);
  Graph& g = *model->graph;
  EXPECT_EQ(Ops(g), (std::vector<std::string>{"Cast", "MatMul", "Gemm", "Add", "Cast"}));
  EXPECT_EQ(g.nodes.At(1).proto->input(1), "w");
  EXPECT_EQ(g.constants.at("w").dtype(), DataType::kFloat16);
  EXPECT_EQ(g.constants.count("w/float"), 0u);
  EXPECT_EQ(g.nodes.At(2).proto->input(1), "v/float");
  EXPECT_EQ(g.nodes.At(3).proto->input(1), "v/float");
  auto session = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<float> x = {1, -2, 0.5f, 3, 0.25f, -1, 2, 0, -0.5f};
  auto out = session->Run({{"x", Value(Half({3, 3}, x))}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // y = (x w) v + v, in float over the half values (exact here: few bits in every product).
  const std::vector<float> w = Ramp(9, 0.5f), v = Ramp(9, 0.25f);
  const Tensor& y = (*out)[0].value.tensor();
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      float sum = v[i * 3 + j];
      for (int q = 0; q < 3; ++q) {
        float a = 0;
        for (int r = 0; r < 3; ++r) a += x[i * 3 + r] * w[r * 3 + q];
        sum += a * v[q * 3 + j];
      }
      EXPECT_EQ(HalfToFloat(y.data<Float16>()[i * 3 + j].bits), HalfToFloat(FloatToHalf(sum))) << i << "," << j;
    }
  }
}

// The form ONNX Runtime saves a float16 model in: float convolutions and products, each half
// weight behind a Cast to float. The products read the half weights themselves (no float copy is
// made of them), a Cast whose output something else reads too stays, and the results are the
// saved model's.
TEST(HalfComputeTest, WeightsCastToFloatAsOnnxRuntimeSavesThemStayHalf) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 2, 4, 4});
  m.Initializer("w", Half({4, 2, 3, 3}, Ramp(72, 0.125f)));
  m.Initializer("v", Half({16, 3}, Ramp(48, 0.25f)));
  m.Initializer("u", Half({3}, {1.0f, 2.0f, 3.0f}));
  for (const char* name : {"w", "v", "u"}) {
    SetAttr(m.Node("Cast", {name}, {std::string(name) + "_f"}), "to", static_cast<int64_t>(onnx::TensorProto::FLOAT));
  }
  SetAttr(m.Node("Conv", {"x", "w_f"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.Initializer("shape", Tensor::FromVector<int64_t>({2}, {4, 16}));
  m.Node("Reshape", {"c", "shape"}, {"flat"});
  m.Node("MatMul", {"flat", "v_f"}, {"mm"}, "matmul");
  m.Node("Add", {"mm", "u_f"}, {"y"});  // u is read as an addend: its Cast stays
  m.Output("y", DataType::kFloat, {4, 3});
  auto model = ThisPassOnly(m.Serialize());
  ASSERT_NE(model, nullptr);
  Graph& g = *model->graph;
  EXPECT_EQ(Ops(g), (std::vector<std::string>{"Cast", "Conv", "Reshape", "MatMul", "Add"}));
  EXPECT_EQ(g.nodes.At(1).proto->input(1), "w");
  EXPECT_EQ(g.nodes.At(3).proto->input(1), "v");
  EXPECT_EQ(g.constants.count("w/float") + g.constants.count("v/float"), 0u) << "no float copy of the weights";

  std::vector<float> x = Ramp(32, 0.5f);
  auto run = [&](bool optimize) {
    SessionOptions options;
    options.optimize = optimize;
    auto session = Session::LoadFromBytes(m.Serialize(), options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    auto out = session->Run({{"x", Tensor::FromVector<float>({1, 2, 4, 4}, x)}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& y = (*out)[0].value.tensor();
    return std::vector<float>(y.data<float>(), y.data<float>() + y.size());
  };
  const std::vector<float> as_written = run(false), optimized = run(true);
  ASSERT_EQ(as_written.size(), 12u);
  for (size_t i = 0; i < as_written.size(); ++i) EXPECT_NEAR(optimized[i], as_written[i], 1e-4f * (1 + std::fabs(as_written[i]))) << i;
}

// A 16-bit LSTM runs in float: its weights become float constants, which the kernel packs once at
// load (ops/rnn/packed_rows.h); in 16 bits it widened and multiplied them unpacked every run.
TEST(HalfComputeTest, RecurrentOpsRunInFloat) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat16, {2, 1, 3});
  m.Initializer("w", Half({1, 16, 3}, Ramp(48, 0.01f)));
  m.Initializer("r", Half({1, 16, 4}, Ramp(64, 0.02f)));
  SetAttr(m.Node("LSTM", {"x", "w", "r"}, {"y", "y_h"}), "hidden_size", int64_t{4});
  m.Output("y_h", DataType::kFloat16, {1, 1, 4});
  auto model = ThisPassOnly(m.Serialize());
  ASSERT_NE(model, nullptr);
  Graph& g = *model->graph;
  EXPECT_EQ(Ops(g), (std::vector<std::string>{"Cast", "LSTM", "Cast"}));
  const onnx::NodeProto& lstm = *g.nodes.At(1).proto;
  EXPECT_EQ(g.constants.at(lstm.input(1)).dtype(), DataType::kFloat);
  EXPECT_EQ(g.constants.at(lstm.input(2)).dtype(), DataType::kFloat);
}

// A 16-bit Clip without a bound clips at the type's largest value, as the spec's default
// (numeric_limits::max) and ONNX Runtime's float16 Clip do: +inf becomes 65504, not inf. Opset 11+
// (bounds as inputs, min given and max absent) and opset 6 (attributes, both absent).
TEST(HalfComputeTest, ClipWithoutABoundClipsAtTheTypesLargest) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int opset : {17, 6}) {
    ModelBuilder m(opset);
    m.Input("x", DataType::kFloat16, {4});
    if (opset >= 11) {
      m.Initializer("lo", Half({}, {-1.0f}));
      m.Node("Clip", {"x", "lo"}, {"c"});
    } else {
      m.Node("Clip", {"x"}, {"c"});
    }
    m.Node("Relu", {"c"}, {"y"});  // a float neighbour, so the Clip runs in the float region
    m.Output("y", DataType::kFloat16, {4});
    auto session = Session::LoadFromBytes(m.Serialize());
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto out = session->Run({{"x", Value(Half({4}, {inf, -inf, 2.0f, -3.0f}))}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& y = (*out)[0].value.tensor();
    std::vector<float> got(4);
    for (int i = 0; i < 4; ++i) got[i] = HalfToFloat(y.data<Float16>()[i].bits);
    const float lo = opset >= 11 ? -1.0f : -65504.0f;
    EXPECT_EQ(got, (std::vector<float>{65504.0f, std::max(lo, 0.0f), 2.0f, std::max(std::max(-3.0f, lo), 0.0f)}))
        << "opset " << opset;
  }
}

// An embedding table (a Gather's data of 64 K values or more) stays 16-bit: the Gather runs in
// half and a Cast widens the rows it picked; a small table is widened with the other constants.
TEST(HalfComputeTest, EmbeddingTablesStayHalf) {
  constexpr int64_t kRows = 1024, kWidth = 64;
  std::vector<float> table(kRows * kWidth);
  for (int64_t i = 0; i < kRows * kWidth; ++i) table[i] = static_cast<float>((i * 13) % 97) / 8 - 6;
  ModelBuilder m(17);
  m.Input("ids", DataType::kInt64, {3});
  m.Initializer("table", Half({kRows, kWidth}, table));
  m.Initializer("small", Half({4, kWidth}, std::vector<float>(table.begin(), table.begin() + 4 * kWidth)));
  m.Initializer("two", Tensor::FromVector<int64_t>({1}, {2}));
  m.Node("Gather", {"table", "ids"}, {"rows"}, "embed");
  m.Node("Gather", {"small", "two"}, {"pos"}, "position");
  m.Node("Add", {"rows", "pos"}, {"y"});
  m.Output("y", DataType::kFloat16, {3, kWidth});
  auto model = ThisPassOnly(m.Serialize());
  ASSERT_NE(model, nullptr);
  Graph& g = *model->graph;
  EXPECT_EQ(Ops(g), (std::vector<std::string>{"Gather", "Cast", "Gather", "Add", "Cast"}));
  EXPECT_EQ(g.nodes.At(0).proto->input(0), "table");
  EXPECT_EQ(g.constants.at("table").dtype(), DataType::kFloat16);
  EXPECT_EQ(g.constants.count("table/float"), 0u);
  EXPECT_EQ(g.nodes.At(2).proto->input(0), "small/float");
  auto session = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::vector<int64_t> ids = {5, 1023, 0};
  auto out = session->Run({{"ids", Value(Tensor::FromVector<int64_t>({3}, ids))}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].value.tensor();
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < kWidth; ++c) {
      const float row = HalfToFloat(FloatToHalf(table[ids[r] * kWidth + c]));
      const float pos = HalfToFloat(FloatToHalf(table[2 * kWidth + c]));
      EXPECT_EQ(HalfToFloat(y.data<Float16>()[r * kWidth + c].bits), HalfToFloat(FloatToHalf(row + pos))) << r << "," << c;
    }
  }
}

// A half CNN's convolution weights stay 16-bit through the load: BatchNormalization folds into
// them in 16 bits (as ONNX Runtime folds it), a Reshape of constants into a classifier's weights
// folds in 16 bits, and the blocked convolutions and Gemm keep them so (their kernels widen them
// in registers). The results are the half model's computed op by op, to half's precision.
TEST(HalfComputeTest, ConvWeightsStayHalfThroughTheFolds) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 16, 6, 6});
  m.Initializer("w1", Half({32, 16, 3, 3}, Ramp(32 * 16 * 9, 0.02f)));
  m.Initializer("scale", Half({32}, Ramp(32, 0.1f)));
  m.Initializer("shift", Half({32}, Ramp(32, 0.05f)));
  m.Initializer("mean", Half({32}, Ramp(32, 0.01f)));
  m.Initializer("var", Half({32}, std::vector<float>(32, 2.0f)));
  m.Initializer("w2", Half({32, 32, 1, 1}, Ramp(32 * 32, 0.03f)));
  m.Initializer("fc", Half({1, 1, 10, 32}, Ramp(320, 0.04f)));
  m.Initializer("fc_shape", Tensor::FromVector<int64_t>({2}, {10, 32}));
  auto& to_half = m.Node("Cast", {"x"}, {"xh"});
  SetAttr(to_half, "to", static_cast<int64_t>(onnx::TensorProto::FLOAT16));
  auto& conv = m.Node("Conv", {"xh", "w1"}, {"c1"});
  SetAttr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.Node("BatchNormalization", {"c1", "scale", "shift", "mean", "var"}, {"n1"});
  m.Node("Relu", {"n1"}, {"r1"});
  m.Node("Conv", {"r1", "w2"}, {"c2"});
  m.Node("GlobalAveragePool", {"c2"}, {"p"});
  m.Node("Flatten", {"p"}, {"f"});
  m.Node("Reshape", {"fc", "fc_shape"}, {"fc2"});
  auto& gemm = m.Node("Gemm", {"f", "fc2"}, {"yh"});
  SetAttr(gemm, "transB", int64_t{1});
  auto& to_float = m.Node("Cast", {"yh"}, {"y"});
  SetAttr(to_float, "to", static_cast<int64_t>(onnx::TensorProto::FLOAT));
  m.Output("y", DataType::kFloat, {1, 10});

  auto model = LoadModelBytes(m.Serialize(), "", SessionOptions(), GlobalKernelRegistry());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Graph& g = *(*model)->graph;
  int half_weights = 0;
  for (const Node& n : g.nodes) {
    const bool product = n.op_type() == "BlockedConv" || n.op_type() == "Gemm";
    if (!product) continue;
    auto w = g.constants.find(n.proto->input(1));
    ASSERT_NE(w, g.constants.end()) << n.op_type();
    EXPECT_EQ(w->second.dtype(), DataType::kFloat16) << n.op_type() << " " << n.proto->input(1);
    ++half_weights;
  }
  EXPECT_EQ(half_weights, 3);

  std::vector<float> x = Ramp(16 * 36, 0.2f);
  auto run = [&](bool optimize) {
    SessionOptions options;
    options.optimize = optimize;
    auto session = Session::LoadFromBytes(m.Serialize(), options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    auto out = session->Run({{"x", Value(Tensor::FromVector<float>({1, 16, 6, 6}, x))}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return std::move(out).value();
  };
  const auto op_by_op = run(false), optimized = run(true);
  const Tensor& y0 = op_by_op[0].value.tensor();
  const Tensor& y1 = optimized[0].value.tensor();
  ASSERT_EQ(y1.size(), 10);
  for (int64_t i = 0; i < y1.size(); ++i) {
    const float a = y0.data<float>()[i], b = y1.data<float>()[i];
    EXPECT_LE(std::fabs(a - b), std::fabs(a) * 0x1p-7f + 1e-3f) << i;
  }
}

// A q4f16 model's MatMulNBits runs on the float twins (its 4-bit B untouched, its half scales
// widened once), with the result of the node computing in half on its own.
TEST(HalfComputeTest, FourBitProductsRunInFloat) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat16, {2, 32});
  std::vector<uint8_t> b(3 * 16);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 37);
  m.Initializer("b", Tensor::FromVector<uint8_t>({3, 1, 16}, b));
  m.Initializer("scales", Half({3}, {0.5f, 0.25f, 0.125f}));
  auto& mm = m.Node("MatMulNBits", {"x", "b", "scales"}, {"y"}, "mm");
  mm.set_domain("com.microsoft");
  SetAttr(mm, "K", int64_t{32});
  SetAttr(mm, "N", int64_t{3});
  SetAttr(mm, "block_size", int64_t{32});
  m.Output("y", DataType::kFloat16, {2, 3});
  auto* ms = m.proto().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto model = ThisPassOnly(m.Serialize());
  ASSERT_NE(model, nullptr);
  Graph& g = *model->graph;
  EXPECT_EQ(Ops(g), (std::vector<std::string>{"Cast", "com.microsoft.MatMulNBits", "Cast"}));
  EXPECT_EQ(g.nodes.At(1).proto->input(1), "b");
  EXPECT_EQ(g.constants.at(g.nodes.At(1).proto->input(2)).dtype(), DataType::kFloat);

  const std::vector<float> x = Ramp(64, 0.25f);
  auto run = [&](bool optimize) {
    SessionOptions opts;
    opts.optimize = optimize;
    auto session = Session::LoadFromBytes(m.Serialize(), opts);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    auto out = session->Run({{"x", Value(Half({2, 32}, x))}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return std::move(out).value();
  };
  const auto in_half = run(false), in_float = run(true);
  const Tensor& y0 = in_half[0].value.tensor();
  const Tensor& y1 = in_float[0].value.tensor();
  ASSERT_EQ(y1.dtype(), DataType::kFloat16);
  ASSERT_EQ(y1.size(), 6);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(HalfToFloat(y0.data<Float16>()[i].bits), HalfToFloat(y1.data<Float16>()[i].bits)) << i;
  }
}

// ONNX Runtime's SimplifiedLayerNormalization in the default domain (opset 13, no schema here, no
// value_info): its output's type is inferred, so the float region runs through it to the Relu.
TEST(HalfComputeTest, DefaultDomainContribNormStaysInTheRegion) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat16, {2, 4});
  m.Initializer("g", Half({4}, {1, 1, 1, 1}));
  m.Node("SimplifiedLayerNormalization", {"x", "g"}, {"n"}, "sln");
  m.Node("Relu", {"n"}, {"y"}, "relu");
  m.Output("y", DataType::kFloat16, {2, 4});
  auto model = ThisPassOnly(m.Serialize());
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(Ops(*model->graph), (std::vector<std::string>{"Cast", "SimplifiedLayerNormalization", "Relu", "Cast"}));
}

TEST(HalfComputeTest, FloatModelsAreLeftAlone) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y", DataType::kFloat, {2});
  auto model = ThisPassOnly(m.Serialize());
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(Ops(*model->graph), std::vector<std::string>{"Relu"});
}

}  // namespace
}  // namespace onnxflow::graph
