// QDQ fusion (graph/qdq_fusion.h): each DQ -> op -> Q group, built here, runs as its quantized op
// and gives the unfused run's 8-bit outputs within 1 unit.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

std::vector<std::string> ExecutedOps(const Session& session, const std::vector<NamedValue>& inputs) {
  RunProfile profile;
  RunOptions options;
  options.profile = &profile;
  EXPECT_TRUE(session.Run(inputs, options).ok());
  std::vector<std::string> ops;
  for (const NodeTiming& t : profile.nodes) ops.push_back(t.op_type);
  std::sort(ops.begin(), ops.end());
  return ops;
}

// x (float, [1, 4, 6, 6]) is quantized to uint8 (scale 0.02, zero 128) inside the model and
// dequantized as xd; `body` adds the nodes that read xd and write the 8-bit output "y".
void ExpectFused(const std::function<void(tools::ModelBuilder&)>& body, DataType y_type, const Shape& y_shape,
                 std::vector<std::string> fused_ops, const Shape& x_shape = {1, 4, 6, 6}) {
  tools::ModelBuilder m(17);
  m.Input("x", DataType::kFloat, x_shape);
  m.Initializer("xs", Tensor::Scalar<float>(0.02f));
  m.Initializer("xz", Tensor::Scalar<uint8_t>(128));
  m.Node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  m.Node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  body(m);
  m.Output("y", y_type, y_shape);
  const std::string bytes = m.Serialize();
  SessionOptions plain, fused;
  plain.optimize = false;
  auto a = Session::LoadFromBytes(bytes, plain);
  auto b = Session::LoadFromBytes(bytes, fused);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << " " << b.status().ToString();
  auto x = FillTensor(DataType::kFloat, x_shape);
  ASSERT_TRUE(x.ok());
  // FillTensor's pattern spans [-0.5, 0.5); stretch it over the quantized range.
  for (int64_t i = 0; i < x->size(); ++i) x->mutable_data<float>()[i] *= 4.5f;
  const std::vector<NamedValue> inputs = {{"x", *x}};
  auto out_a = a->Run(inputs);
  auto out_b = b->Run(inputs);
  ASSERT_TRUE(out_a.ok() && out_b.ok()) << out_a.status().ToString() << " " << out_b.status().ToString();
  const Tensor& ya = (*out_a)[0].value.tensor();
  const Tensor& yb = (*out_b)[0].value.tensor();
  ASSERT_EQ(ya.dtype(), y_type);
  ASSERT_EQ(yb.dtype(), y_type);
  ASSERT_EQ(ya.shape(), yb.shape());
  int worst = 0, off = 0;
  for (int64_t i = 0; i < ya.size(); ++i) {
    const int va = y_type == DataType::kInt8 ? ya.data<int8_t>()[i] : ya.data<uint8_t>()[i];
    const int vb = y_type == DataType::kInt8 ? yb.data<int8_t>()[i] : yb.data<uint8_t>()[i];
    worst = std::max(worst, std::abs(va - vb));
    off += va != vb;
  }
  EXPECT_LE(worst, 1) << off << " of " << ya.size() << " differ";
  fused_ops.push_back("QuantizeLinear");  // of the float input
  std::sort(fused_ops.begin(), fused_ops.end());
  EXPECT_EQ(ExecutedOps(*b, inputs), fused_ops);
}

void Q(tools::ModelBuilder& m, const std::string& in, const std::string& out, float scale, int zero,
       DataType type = DataType::kUint8) {
  const std::string s = out + "_s", z = out + "_z";
  m.Initializer(s, Tensor::Scalar<float>(scale));
  m.Initializer(z, type == DataType::kInt8 ? Tensor::Scalar<int8_t>(static_cast<int8_t>(zero))
                                           : Tensor::Scalar<uint8_t>(static_cast<uint8_t>(zero)));
  m.Node("QuantizeLinear", {in, s, z}, {out});
}

TEST(QdqFusion, ConvWithPerChannelInt8WeightsAndBias) {
  ExpectFused(
      [](tools::ModelBuilder& m) {
        Tensor w(DataType::kInt8, {3, 4, 3, 3});
        for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 37) % 255 - 127);
        m.Initializer("w", w);
        m.Initializer("ws", Tensor::FromVector<float>({3}, {0.002f, 0.003f, 0.001f}));
        m.Initializer("wz", Tensor::FromVector<int8_t>({3}, {0, 0, 0}));
        m.Initializer("bias", Tensor::FromVector<float>({3}, {0.1f, -0.2f, 0.05f}));
        auto& dq = m.Node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"});
        tools::SetAttr(dq, "axis", int64_t{0});
        auto& conv = m.Node("Conv", {"xd", "wd", "bias"}, {"c"});
        tools::SetAttr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
        Q(m, "c", "y", 0.03f, 120);
      },
      // The convolution runs channels-last (graph/quant_layout.cc), a Transpose either side.
      DataType::kUint8, {1, 3, 6, 6}, {"QLinearConvNhwc", "Transpose", "Transpose"});
}

// What a quantizer leaves in float between two quantized convolutions (DQ -> LeakyRelu -> Q, a
// residual Add of two dequantized values, x * HardSigmoid(x)) runs channels-last with them
// (graph/quant_layout.cc): one Transpose into the region and one out, not a pair per convolution.
TEST(QdqFusion, FloatOpsBetweenQuantizedConvsJoinTheirLayout) {
  ExpectFused(
      [](tools::ModelBuilder& m) {
        auto conv = [&](const std::string& in, const std::string& name) {
          Tensor w(DataType::kInt8, {4, 4, 3, 3});
          for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 37 + name.size()) % 255 - 127);
          m.Initializer(name + "_w", w);
          m.Initializer(name + "_ws", Tensor::Scalar<float>(0.002f));
          m.Initializer(name + "_wz", Tensor::Scalar<int8_t>(0));
          m.Node("DequantizeLinear", {name + "_w", name + "_ws", name + "_wz"}, {name + "_wd"});
          auto& c = m.Node("Conv", {in, name + "_wd"}, {name + "_c"});
          tools::SetAttr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
          Q(m, name + "_c", name + "_q", 0.03f, 120);
          m.Initializer(name + "_qs", Tensor::Scalar<float>(0.03f));
          m.Initializer(name + "_qz", Tensor::Scalar<uint8_t>(120));
          m.Node("DequantizeLinear", {name + "_q", name + "_qs", name + "_qz"}, {name + "_d"});
        };
        conv("xd", "a");
        conv("xd", "a2");
        auto& leaky = m.Node("LeakyRelu", {"a_d"}, {"l"});
        tools::SetAttr(leaky, "alpha", 0.1f);
        m.Node("Add", {"l", "a2_d"}, {"s"});  // both operands in the region
        m.Node("HardSigmoid", {"s"}, {"h"});
        m.Node("Mul", {"s", "h"}, {"hs"});
        Q(m, "hs", "hq", 0.02f, 128);
        m.Initializer("hq_s2", Tensor::Scalar<float>(0.02f));
        m.Initializer("hq_z2", Tensor::Scalar<uint8_t>(128));
        m.Node("DequantizeLinear", {"hq", "hq_s2", "hq_z2"}, {"hd"});
        conv("hd", "b");
        m.Node("Relu", {"b_d"}, {"r"});
        Q(m, "r", "y", 0.03f, 100);
      },
      // Two Transposes: into the region (x's bytes) and out of it (y).
      DataType::kUint8, {1, 4, 6, 6},
      {"Add", "ByteLookup", "DequantizeLinear", "DequantizeLinear", "ElementwiseChain", "LeakyRelu", "Max",
       "QLinearConvNhwc", "QLinearConvNhwc", "QLinearConvNhwc", "QuantizeLinear", "Transpose", "Transpose"});
}

// Conv -> Relu -> Q with zero point 0 (uint8) or -128 (int8): the quantization clamps at zero,
// so the Relu goes and the group is one QLinearConv. With another zero point Q moves before the
// Relu, which becomes a Max with the zero point on the convolution's bytes.
TEST(QdqFusion, ConvReluWhereQuantizationClampsAtZero) {
  for (DataType type : {DataType::kUint8, DataType::kInt8}) {
    for (int clamps : {1, 0}) {
      const int zero = clamps ? (type == DataType::kInt8 ? -128 : 0) : 10;
      ExpectFused(
          [&](tools::ModelBuilder& m) {
            Tensor w(DataType::kInt8, {3, 4, 1, 1});
            for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 37) % 255 - 127);
            m.Initializer("w", w);
            m.Initializer("ws", Tensor::Scalar<float>(0.002f));
            m.Initializer("wz", Tensor::Scalar<int8_t>(0));
            m.Node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"});
            m.Node("Conv", {"xd", "wd"}, {"c"});
            m.Node("Relu", {"c"}, {"r"});
            Q(m, "r", "y", 0.01f, zero, type);
          },
          type, {1, 3, 6, 6},
          clamps ? std::vector<std::string>{"QLinearConvNhwc", "Transpose", "Transpose"}
                 : std::vector<std::string>{"Max", "QLinearConvNhwc", "Transpose", "Transpose"});
    }
  }
}

TEST(QdqFusion, MatMulWithConstantWeights) {
  ExpectFused(
      [](tools::ModelBuilder& m) {
        Tensor w(DataType::kInt8, {6, 5});
        for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 53) % 200 - 100);
        m.Initializer("w", w);
        m.Initializer("ws", Tensor::Scalar<float>(0.004f));
        m.Initializer("wz", Tensor::Scalar<int8_t>(0));
        m.Node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"});
        m.Node("MatMul", {"xd", "wd"}, {"c"});
        Q(m, "c", "y", 0.02f, 128);
      },
      DataType::kUint8, {1, 4, 6, 5}, {"QLinearMatMul"});
}

// A classifier head: DQ(x) -> Gemm (per-column int8 weights, transB, bias) -> Q is one QGemm.
TEST(QdqFusion, GemmWithPerColumnWeightsAndBias) {
  ExpectFused(
      [](tools::ModelBuilder& m) {
        Tensor w(DataType::kInt8, {3, 6});  // [N, K], transB
        for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 41) % 200 - 100);
        m.Initializer("w", w);
        m.Initializer("ws", Tensor::FromVector<float>({3}, {0.004f, 0.002f, 0.003f}));
        m.Initializer("wz", Tensor::FromVector<int8_t>({3}, {0, 0, 0}));
        m.Initializer("bias", Tensor::FromVector<float>({3}, {0.1f, -0.3f, 0.02f}));
        tools::SetAttr(m.Node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"}), "axis", int64_t{0});
        tools::SetAttr(m.Node("Gemm", {"xd", "wd", "bias"}, {"c"}), "transB", int64_t{1});
        Q(m, "c", "y", 0.02f, 128);
      },
      DataType::kUint8, {4, 3}, {"QGemm"}, {4, 6});
}

// Two per-tensor DQ inputs (the second one requantized from x with other parameters).
void SecondInput(tools::ModelBuilder& m) {
  Q(m, "x", "x2q", 0.03f, 100);
  m.Initializer("x2s", Tensor::Scalar<float>(0.03f));
  m.Initializer("x2z", Tensor::Scalar<uint8_t>(100));
  m.Node("DequantizeLinear", {"x2q", "x2s", "x2z"}, {"x2d"});
}

TEST(QdqFusion, AddMulConcat) {
  for (const std::string op : {"Add", "Mul", "Concat"}) {
    SCOPED_TRACE(op);
    ExpectFused(
        [&](tools::ModelBuilder& m) {
          SecondInput(m);
          auto& n = m.Node(op, {"xd", "x2d"}, {"c"});
          if (op == "Concat") tools::SetAttr(n, "axis", int64_t{1});
          Q(m, "c", "y", op == "Mul" ? 0.08f : 0.04f, 128);
        },
        DataType::kUint8, op == "Concat" ? Shape{1, 8, 6, 6} : Shape{1, 4, 6, 6},
        {"QuantizeLinear", "QLinear" + op});
  }
}

TEST(QdqFusion, PoolsAndUnaryOps) {
  for (const std::string op : {"GlobalAveragePool", "AveragePool", "Sigmoid", "LeakyRelu"}) {
    SCOPED_TRACE(op);
    Shape shape = {1, 4, 6, 6};
    if (op == "GlobalAveragePool") shape = {1, 4, 1, 1};
    if (op == "AveragePool") shape = {1, 4, 3, 3};
    ExpectFused(
        [&](tools::ModelBuilder& m) {
          auto& n = m.Node(op, {"xd"}, {"c"});
          if (op == "AveragePool") {
            tools::SetAttr(n, "kernel_shape", std::vector<int64_t>{3, 3});
            tools::SetAttr(n, "strides", std::vector<int64_t>{2, 2});
            tools::SetAttr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
          }
          if (op == "LeakyRelu") tools::SetAttr(n, "alpha", 0.1f);
          Q(m, "c", "y", op == "Sigmoid" ? 1.f / 256 : 0.01f, op == "Sigmoid" ? 0 : 128);
        },
        DataType::kUint8, shape, {"QLinear" + op});
  }
}

TEST(QdqFusion, PassThroughOpsRunOnTheBytes) {
  // Same scale and zero point on both sides: MaxPool, Relu (as Max with the zero point),
  // Transpose and Reshape run on the uint8 values, exactly.
  for (const std::string op : {"MaxPool", "Relu", "Transpose", "Reshape"}) {
    SCOPED_TRACE(op);
    Shape shape = {1, 4, 6, 6};
    if (op == "MaxPool") shape = {1, 4, 3, 3};
    if (op == "Transpose") shape = {1, 6, 6, 4};
    if (op == "Reshape") shape = {4, 36};
    ExpectFused(
        [&](tools::ModelBuilder& m) {
          std::vector<std::string> in = {"xd"};
          if (op == "Reshape") {
            m.Initializer("shape", Tensor::FromVector<int64_t>({2}, {4, 36}));
            in.push_back("shape");
          }
          auto& n = m.Node(op, in, {"c"});
          if (op == "MaxPool") {
            tools::SetAttr(n, "kernel_shape", std::vector<int64_t>{2, 2});
            tools::SetAttr(n, "strides", std::vector<int64_t>{2, 2});
          }
          if (op == "Transpose") tools::SetAttr(n, "perm", std::vector<int64_t>{0, 2, 3, 1});
          Q(m, "c", "y", 0.02f, 128);
        },
        DataType::kUint8, shape, {op == "Relu" ? "Max" : op});
  }
}

// ReLU6 as a quantizer that quantizes every float input writes it: the Clip's bounds are Constant
// nodes behind Q -> DQ (or int8 constants behind DQ). They fold first, so DQ -> Clip -> Q is one
// ByteLookup, not three float passes; a Conv's int8 weights given as a Constant node stay int8.
TEST(QdqFusion, ClipWithQuantizedBoundsAndConstantNodeWeights) {
  for (const bool bounds_quantized_here : {true, false}) {
    SCOPED_TRACE(bounds_quantized_here ? "Constant -> Q -> DQ bounds" : "DQ of int8 bounds");
    ExpectFused(
        [&](tools::ModelBuilder& m) {
          Tensor w(DataType::kInt8, {4, 4, 1, 1});
          for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 53) % 255 - 127);
          tools::SetAttr(m.Node("Constant", {}, {"w"}), "value", w);
          m.Initializer("ws", Tensor::Scalar<float>(0.004f));
          m.Initializer("wz", Tensor::Scalar<int8_t>(0));
          m.Node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"});
          m.Node("Conv", {"xd", "wd"}, {"c"});
          Q(m, "c", "cq", 0.05f, 100);
          m.Node("DequantizeLinear", {"cq", "cq_s", "cq_z"}, {"cd"});
          for (const auto& [name, bound] : {std::pair<std::string, float>{"lo", 0.f}, {"hi", 6.f}}) {
            m.Initializer(name + "s", Tensor::Scalar<float>(0.05f));
            m.Initializer(name + "z", Tensor::Scalar<uint8_t>(0));
            if (bounds_quantized_here) {
              tools::SetAttr(m.Node("Constant", {}, {name}), "value", Tensor::Scalar<float>(bound));
              m.Node("QuantizeLinear", {name, name + "s", name + "z"}, {name + "q"});
            } else {
              m.Initializer(name + "q", Tensor::Scalar<uint8_t>(static_cast<uint8_t>(bound / 0.05f)));
            }
            m.Node("DequantizeLinear", {name + "q", name + "s", name + "z"}, {name + "d"});
          }
          m.Node("Clip", {"cd", "lod", "hid"}, {"r"});
          Q(m, "r", "y", 0.03f, 0);
        },
        DataType::kUint8, {1, 4, 6, 6}, {"ByteLookup", "QLinearConvNhwc", "Transpose", "Transpose"});
  }
}

TEST(QdqFusion, DifferentParametersRequantizeThroughATable) {
  // A Relu whose Q has other parameters than its DQ: Q moves before it (the Relu is a Max with
  // Q's zero point on bytes) and DQ -> Q is a 256-entry table; the values are the float path's.
  tools::ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 4});
  m.Initializer("s", Tensor::Scalar<float>(0.02f));
  m.Initializer("z", Tensor::Scalar<uint8_t>(128));
  m.Initializer("s2", Tensor::Scalar<float>(0.01f));
  m.Node("QuantizeLinear", {"x", "s", "z"}, {"xq"});
  m.Node("DequantizeLinear", {"xq", "s", "z"}, {"xd"});
  m.Node("Relu", {"xd"}, {"r"});
  m.Node("QuantizeLinear", {"r", "s2", "z"}, {"y"});
  m.Output("y", DataType::kUint8, {1, 4});
  auto s = Session::LoadFromBytes(m.Serialize(), SessionOptions{});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto x = Tensor::FromVector<float>({1, 4}, {-1, 0.1f, 0.5f, 1});
  EXPECT_EQ(ExecutedOps(*s, {{"x", x}}),
            (std::vector<std::string>{"ByteLookup", "Max", "QuantizeLinear"}));
  auto out = s->Run({{"x", x}});
  ASSERT_TRUE(out.ok());
  const uint8_t* y = (*out)[0].value.tensor().data<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(y, y + 4), (std::vector<uint8_t>{128, 138, 178, 228}));
}

}  // namespace
}  // namespace onnxflow
