// LiftConv1dTo2d (graph/conv1d_as_2d.h): which 1-D convolutions become 2-D ones of height 1 and
// which stay, the region between them, the layout passes taking the lifted forms, and outputs
// against the unoptimized run (the plain 1-D kernels) for float, float16, QLinearConv, QDQ and
// ConvInteger models.
#include "graph/conv1d_as_2d.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/blocked_layout.h"
#include "graph/graph_test.h"
#include "graph/quant_layout.h"
#include "include/onnxflow/session.h"
#include "ops/framework/domains.h"
#include "ops/framework/numeric.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;
using Names = std::vector<std::string>;
using Ints = std::vector<int64_t>;


template <class T>
Tensor Bytes(const std::vector<int64_t>& shape, int seed, int lo, int hi) {
  std::vector<T> v(static_cast<size_t>(ElementCount(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(lo + static_cast<int>((i * 53 + seed * 7) % (hi - lo + 1)));
  return Tensor::FromVector<T>(shape, v);
}

Tensor Halves(const std::vector<int64_t>& shape, int seed) {
  const Tensor f = Floats(shape, seed);
  std::vector<Float16> h(static_cast<size_t>(f.size()));
  for (size_t i = 0; i < h.size(); ++i) h[i].bits = FloatToHalf(f.data<float>()[i]);
  return Tensor::FromVector<Float16>(shape, h);
}

const std::string kInternal = std::string(kOnnxflowDomain) + ".";

Ints IntsOf(const Node& n, const char* name) {
  for (const auto& a : n.proto->attribute()) {
    if (a.name() == name) return Ints(a.ints().begin(), a.ints().end());
  }
  return {};
}

class Conv1dAs2dTest : public GraphTest {
 protected:
  Status Lift() { return LiftConv1dTo2d(&graph()); }

  // Both sessions (passes off: the plain 1-D kernels; on: the lifted region) on `inputs`; the
  // outputs' largest absolute difference, and the outputs' largest magnitude.
  void Compare(const std::vector<NamedValue>& inputs, double* diff, double* scale) {
    const std::string bytes = model.Serialize();
    SessionOptions plain, optimized;
    plain.optimize = false;
    auto a = Session::LoadFromBytes(bytes, plain);
    auto b = Session::LoadFromBytes(bytes, optimized);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << " " << b.status().ToString();
    auto out_a = a->Run(inputs);
    auto out_b = b->Run(inputs);
    ASSERT_TRUE(out_a.ok() && out_b.ok()) << out_a.status().ToString() << " " << out_b.status().ToString();
    *diff = 0;
    *scale = 0;
    for (size_t i = 0; i < out_a->size(); ++i) {
      const Tensor& x = (*out_a)[i].value.tensor();
      const Tensor& y = (*out_b)[i].value.tensor();
      ASSERT_EQ(x.shape(), y.shape());
      ASSERT_EQ(x.dtype(), y.dtype());
      for (int64_t k = 0; k < x.size(); ++k) {
        double u = 0, v = 0;
        if (x.dtype() == DataType::kFloat) {
          u = x.data<float>()[k];
          v = y.data<float>()[k];
        } else if (x.dtype() == DataType::kUint8) {
          u = x.data<uint8_t>()[k];
          v = y.data<uint8_t>()[k];
        } else if (x.dtype() == DataType::kFloat16) {
          u = HalfToFloat(x.data<Float16>()[k].bits);
          v = HalfToFloat(y.data<Float16>()[k].bits);
        } else {
          FAIL() << "unexpected output type";
        }
        *diff = std::max(*diff, std::abs(u - v));
        *scale = std::max(*scale, std::abs(u));
      }
    }
  }

  // x [1, 16, 40] -> Conv(16 -> 32, k 3, pad 1) -> Relu -> Conv(32 -> 32, k 3, s 2) -> y [1, 32, 19].
  void TwoConvs() {
    model.Input("x", DataType::kFloat, {1, 16, 40});
    model.Initializer("w1", Floats({32, 16, 3}, 1));
    model.Initializer("b1", Floats({32}, 2));
    auto& c1 = model.Node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
    SetAttr(c1, "kernel_shape", Ints{3});
    SetAttr(c1, "pads", Ints{1, 1});
    model.Node("Relu", {"c1"}, {"r"});
    model.Initializer("w2", Floats({32, 32, 3}, 3));
    SetAttr(model.Node("Conv", {"r", "w2"}, {"y"}, "conv2"), "strides", Ints{2});
    model.Output("y", DataType::kFloat, {1, 32, 19});
  }
};

// A chain of 1-D convolutions is one lifted region: one Unsqueeze in, one Squeeze out, the
// attributes of height 1, the weights [M, C, 1, k] sharing W's bytes; the blocked layout then
// takes both convolutions with no reorder between them.
TEST_F(Conv1dAs2dTest, FloatChainIsOneRegion) {
  TwoConvs();
  const Tensor w1 = graph().constants.at("w1");
  ASSERT_TRUE(Lift().ok());
  EXPECT_EQ(Ops(), (Names{"Unsqueeze", "Conv", "Relu", "Conv", "Squeeze"}));
  for (const Node& n : graph().nodes) {
    if (n.proto->name() != "conv1") continue;
    EXPECT_EQ(IntsOf(n, "kernel_shape"), (Ints{1, 3}));
    EXPECT_EQ(IntsOf(n, "pads"), (Ints{0, 1, 0, 1}));
    const Tensor& w = graph().constants.at(n.proto->input(1));
    EXPECT_EQ(w.shape(), (Shape{32, 16, 1, 3}));
    EXPECT_TRUE(w.SharesStorageWith(w1));
  }
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Unsqueeze", kInternal + "ToBlocked", kInternal + "BlockedConv", "Relu",
                          kInternal + "BlockedConv", kInternal + "FromBlocked", "Squeeze"}));
  double diff, scale;
  Compare({{"x", Floats({1, 16, 40}, 4)}}, &diff, &scale);
  EXPECT_LE(diff, 1e-5 * std::max(1.0, scale));  // float sums over 96 terms in another order
}

// What the region carries between convolutions: GLU's Split over channels, Sigmoid and Mul, a
// depthwise convolution (group = channels), BatchNormalization, a per-channel Mul by a [C, 1]
// constant (given the 4-D shape [1, C, 1, 1]) and a scalar Add; an exit where a plain reader
// (the Transpose) needs the 3-D value.
TEST_F(Conv1dAs2dTest, RegionThroughChannelOps) {
  model.Input("x", DataType::kFloat, {1, 16, 30});
  model.Initializer("pw", Floats({32, 16, 1}, 1));
  model.Node("Conv", {"x", "pw"}, {"p"}, "pointwise");
  model.Initializer("split", Tensor::FromVector<int64_t>({2}, {16, 16}));
  SetAttr(model.Node("Split", {"p", "split"}, {"a", "g"}), "axis", int64_t{-2});
  model.Node("Sigmoid", {"g"}, {"sg"});
  model.Node("Mul", {"a", "sg"}, {"glu"});
  model.Initializer("dw", Floats({16, 1, 7}, 2));
  auto& dw = model.Node("Conv", {"glu", "dw"}, {"d"}, "depthwise");
  SetAttr(dw, "group", int64_t{16});
  SetAttr(dw, "pads", Ints{3, 3});
  for (const char* p : {"s", "b", "m"}) model.Initializer(p, Floats({16}, 5));
  Tensor var = Floats({16}, 6);
  for (int64_t i = 0; i < 16; ++i) var.mutable_data<float>()[i] += 1.5f;
  model.Initializer("v", var);
  model.Node("BatchNormalization", {"d", "s", "b", "m", "v"}, {"n"});
  model.Initializer("ch", Floats({16, 1}, 7));
  model.Node("Mul", {"n", "ch"}, {"nc"});
  model.Initializer("one", Tensor::Scalar<float>(1.0f));
  model.Node("Add", {"nc", "one"}, {"y"});
  SetAttr(model.Node("Transpose", {"y"}, {"t"}), "perm", Ints{0, 2, 1});
  model.Output("t", DataType::kFloat, {1, 30, 16});
  ASSERT_TRUE(Lift().ok());
  EXPECT_EQ(Ops(), (Names{"Unsqueeze", "Conv", "Split", "Sigmoid", "Mul", "Conv", "BatchNormalization", "Mul",
                          "Add", "Squeeze", "Transpose"}));
  for (const auto& a : Only("Split").proto->attribute()) {
    if (a.name() == "axis") {
      EXPECT_EQ(a.i(), 1);
    }
  }
  double diff, scale;
  Compare({{"x", Floats({1, 16, 30}, 3)}}, &diff, &scale);
  EXPECT_LE(diff, 1e-5 * std::max(1.0, scale));
}

// Left as they are: weights computed at run time, an input of unknown rank (the plain kernel
// refuses a wrong one with its own message), a kernel_shape that contradicts W (the plain kernel's
// refusal stays), and 2-D convolutions (not this pass's).
TEST_F(Conv1dAs2dTest, WhatStaysOneDimensional) {
  model.Input("x", DataType::kFloat, {1, 4, 12});
  model.Input("w_run", DataType::kFloat, {8, 4, 3});
  model.Node("Conv", {"x", "w_run"}, {"a"}, "runtime_weights");
  model.Input("u", DataType::kFloat, {}, /*rank_known=*/false);
  model.Initializer("w", Floats({8, 4, 3}, 1));
  model.Node("Conv", {"u", "w"}, {"b"}, "unknown_rank");
  model.Input("img", DataType::kFloat, {1, 4, 5, 5});
  model.Initializer("w4", Floats({8, 4, 3, 3}, 2));
  model.Node("Conv", {"img", "w4"}, {"c"}, "two_d");
  model.Output("a", DataType::kFloat, {1, 8, 10});
  model.Output("b", DataType::kFloat, {}, false);
  model.Output("c", DataType::kFloat, {1, 8, 3, 3});
  ASSERT_TRUE(Lift().ok());
  EXPECT_EQ(Ops(), (Names{"Conv", "Conv", "Conv"}));
  for (const Node& n : graph().nodes) EXPECT_TRUE(IntsOf(n, "kernel_shape").empty()) << n.proto->name();
}

// A 1-D Conv whose kernel_shape contradicts W is refused, with the plain kernel's message, with
// the passes as without them; so is a 4-D X fed to a 1-D Conv whose input rank the load cannot
// know.
TEST_F(Conv1dAs2dTest, RefusalsStayThePlainKernels) {
  model.Input("x", DataType::kFloat, {1, 4, 12});
  model.Initializer("w", Floats({16, 4, 3}, 1));
  SetAttr(model.Node("Conv", {"x", "w"}, {"y"}, "bad_kernel"), "kernel_shape", Ints{5});
  model.Output("y", DataType::kFloat, {}, false);
  const std::string bytes = model.Serialize();
  SessionOptions plain, optimized;
  plain.optimize = false;
  auto a = Session::LoadFromBytes(bytes, plain);
  auto b = Session::LoadFromBytes(bytes, optimized);
  std::string ma = a.ok() ? a->Run({{"x", Floats({1, 4, 12}, 2)}}).status().ToString() : a.status().ToString();
  std::string mb = b.ok() ? b->Run({{"x", Floats({1, 4, 12}, 2)}}).status().ToString() : b.status().ToString();
  EXPECT_NE(ma.find("bad_kernel"), std::string::npos) << ma;
  EXPECT_EQ(ma, mb);

  tools::ModelBuilder m2(17);
  m2.Input("u", DataType::kFloat, {}, false);
  m2.Initializer("w", Floats({16, 4, 3}, 1));
  m2.Node("Conv", {"u", "w"}, {"y"}, "conv");
  m2.Output("y", DataType::kFloat, {}, false);
  const std::string bytes2 = m2.Serialize();
  auto c = Session::LoadFromBytes(bytes2, plain);
  auto d = Session::LoadFromBytes(bytes2, optimized);
  ASSERT_TRUE(c.ok() && d.ok());
  const std::string mc = c->Run({{"u", Floats({1, 4, 1, 12}, 2)}}).status().ToString();
  const std::string md = d->Run({{"u", Floats({1, 4, 1, 12}, 2)}}).status().ToString();
  EXPECT_NE(mc.find("conv"), std::string::npos) << mc;
  EXPECT_EQ(mc, md);

  // Declared channels or a length the kernel does not fit: the plain kernel's refusal.
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 8, 12}, std::vector<int64_t>{1, 4, 2}}) {
    tools::ModelBuilder m3(17);
    m3.Input("x", DataType::kFloat, shape);
    m3.Initializer("w", Floats({16, 4, 3}, 1));
    m3.Node("Conv", {"x", "w"}, {"y"}, "conv");
    m3.Output("y", DataType::kFloat, {}, false);
    auto e = Session::LoadFromBytes(m3.Serialize(), plain);
    auto f = Session::LoadFromBytes(m3.Serialize(), optimized);
    ASSERT_TRUE(e.ok() && f.ok());
    const std::string me = e->Run({{"x", Floats(shape, 2)}}).status().ToString();
    const std::string mf = f->Run({{"x", Floats(shape, 2)}}).status().ToString();
    EXPECT_NE(me.find("(Conv)"), std::string::npos) << me;
    EXPECT_EQ(me, mf);
  }
}

// float16: the half model computes in float (graph/half_compute.cc) with its weights still half;
// the lifted weights keep them half. Tolerance: both runs round the same float results to half,
// the sums in another order may land on either side of a half rounding edge (1 ulp: 2^-10 of the
// magnitude).
TEST_F(Conv1dAs2dTest, HalfModel) {
  model.Input("x", DataType::kFloat16, {1, 16, 40});
  model.Initializer("w1", Halves({32, 16, 3}, 1));
  SetAttr(model.Node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", Ints{1, 1});
  model.Node("Relu", {"c1"}, {"r"});
  model.Initializer("w2", Halves({32, 32, 3}, 3));
  SetAttr(model.Node("Conv", {"r", "w2"}, {"y"}, "conv2"), "strides", Ints{2});
  model.Output("y", DataType::kFloat16, {1, 32, 19});
  double diff, scale;
  Compare({{"x", Halves({1, 16, 40}, 4)}}, &diff, &scale);
  EXPECT_GT(scale, 1.0);
  EXPECT_LE(diff, 2.0 * std::ldexp(scale, -10));
}

// QLinearConv (u8 activations, s8 per-channel weights), the STFT's shape at a small size: Cin 1,
// a long kernel, a stride. Lifted, it runs on the channels-last integer kernel; both kernels
// requantize the same int32 sums, so the bytes agree exactly.
TEST_F(Conv1dAs2dTest, QLinearConvOnChannelsLastKernel) {
  model.Input("x", DataType::kUint8, {1, 1, 1000});
  model.Initializer("xs", Tensor::Scalar<float>(0.01f));
  model.Initializer("xz", Tensor::Scalar<uint8_t>(128));
  model.Initializer("w", Bytes<int8_t>({40, 1, 64}, 1, -127, 127));
  Tensor ws = Floats({40}, 2);
  for (int64_t i = 0; i < 40; ++i) ws.mutable_data<float>()[i] = 1e-3f + 1e-3f * std::abs(ws.data<float>()[i]);
  model.Initializer("ws", ws);
  model.Initializer("wz", Tensor::FromVector<int8_t>({40}, std::vector<int8_t>(40, 0)));
  model.Initializer("ys", Tensor::Scalar<float>(0.05f));
  model.Initializer("yz", Tensor::Scalar<uint8_t>(128));
  SetAttr(model.Node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"y"}, "stft"), "strides",
          Ints{16});
  model.Output("y", DataType::kUint8, {1, 40, 59});
  ASSERT_TRUE(Lift().ok());
  EXPECT_EQ(Ops(), (Names{"Unsqueeze", "QLinearConv", "Squeeze"}));
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_NE(std::find(Ops().begin(), Ops().end(), kInternal + "QLinearConvNhwc"), Ops().end());
  double diff, scale;
  Compare({{"x", Bytes<uint8_t>({1, 1, 1000}, 3, 0, 255)}}, &diff, &scale);
  EXPECT_GT(scale, 0.0);
  EXPECT_EQ(diff, 0.0);
}

// A QDQ convolution (DQ(x), DQ(w per channel) -> Conv -> Q) becomes a QLinearConv first
// (graph/qdq_fusion.cc), then lifted. The float output is one quantum from the same bytes: equal.
TEST_F(Conv1dAs2dTest, QdqConv) {
  model.Input("x", DataType::kFloat, {1, 8, 50});
  model.Initializer("s", Tensor::Scalar<float>(0.02f));
  model.Initializer("z", Tensor::Scalar<uint8_t>(128));
  model.Node("QuantizeLinear", {"x", "s", "z"}, {"xq"});
  model.Node("DequantizeLinear", {"xq", "s", "z"}, {"xd"});
  model.Initializer("w", Bytes<int8_t>({16, 8, 5}, 1, -100, 100));
  Tensor ws = Floats({16}, 2);
  for (int64_t i = 0; i < 16; ++i) ws.mutable_data<float>()[i] = 2e-3f + 1e-3f * std::abs(ws.data<float>()[i]);
  model.Initializer("ws", ws);
  model.Initializer("wz", Tensor::FromVector<int8_t>({16}, std::vector<int8_t>(16, 0)));
  SetAttr(model.Node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"}), "axis", int64_t{0});
  SetAttr(model.Node("Conv", {"xd", "wd"}, {"c"}, "conv"), "pads", Ints{2, 2});
  model.Initializer("ys", Tensor::Scalar<float>(0.05f));
  model.Node("QuantizeLinear", {"c", "ys", "z"}, {"cq"});
  model.Node("DequantizeLinear", {"cq", "ys", "z"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 50});
  double diff, scale;
  Compare({{"x", Floats({1, 8, 50}, 3)}}, &diff, &scale);
  EXPECT_GT(scale, 0.0);
  EXPECT_EQ(diff, 0.0);
}

// ONNX Runtime's dynamic form: DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul [-> Add]
// (the tail fused to DequantizeAccumulator, graph/dynamic_quant_fusion.cc) twice, GELU-free so
// the float ops between are the same ops on both sides: the region holds DynamicQuantizeLinear,
// ConvInteger and the tail, and the outputs are equal to rounding of the same float ops.
TEST_F(Conv1dAs2dTest, ConvIntegerChain) {
  model.Input("x", DataType::kFloat, {1, 1, 400});
  std::string v = "x";
  for (int layer = 0; layer < 2; ++layer) {
    const std::string l = std::to_string(layer);
    const int64_t cin = layer == 0 ? 1 : 16;
    model.Node("DynamicQuantizeLinear", {v}, {"q" + l, "qs" + l, "qz" + l});
    model.Initializer("w" + l, Bytes<uint8_t>({16, cin, layer == 0 ? 10 : 3}, layer, 0, 255));
    model.Initializer("wz" + l, Tensor::Scalar<uint8_t>(127));
    SetAttr(model.Node("ConvInteger", {"q" + l, "w" + l, "qz" + l, "wz" + l}, {"acc" + l}, "conv" + l), "strides",
            Ints{layer == 0 ? 5 : 2});
    SetAttr(model.Node("Cast", {"acc" + l}, {"f" + l}), "to", int64_t{onnx::TensorProto::FLOAT});
    model.Initializer("sw" + l, Tensor::Scalar<float>(0.004f));
    model.Node("Mul", {"qs" + l, "sw" + l}, {"sc" + l});
    model.Node("Mul", {"f" + l, "sc" + l}, {"m" + l});
    model.Initializer("b" + l, Floats({16, 1}, 5 + layer));
    model.Node("Add", {"m" + l, "b" + l}, {"a" + l});
    model.Node("Relu", {"a" + l}, {"r" + l});
    v = "r" + l;
  }
  model.Output(v, DataType::kFloat, {1, 16, 38});
  ASSERT_TRUE(Lift().ok());
  const Names ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Unsqueeze"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Squeeze"), 1);
  for (const Node& n : graph().nodes) {
    if (n.op_type() == "ConvInteger") {
      EXPECT_EQ(IntsOf(n, "strides").size(), 2u) << n.proto->name();
    }
  }
  double diff, scale;
  Compare({{"x", Floats({1, 1, 400}, 3)}}, &diff, &scale);
  EXPECT_GT(scale, 0.0);
  EXPECT_LE(diff, 1e-6 * std::max(1.0, scale));
}

// A vocoder's upsampling stage (HiFi-GAN, MelGAN): Conv -> LeakyRelu -> ConvTranspose1d (stride
// 4, kernel 8, a bias) -> LeakyRelu -> dilated Conv with a residual Add. The ConvTranspose joins
// the region as its 2-D form of height 1, so the region goes on past it: the dilated Conv after
// the upsampling is a blocked one too (before, the ConvTranspose's output had no known rank and
// every convolution after the first upsampling ran on the plain 1-D kernel).
TEST_F(Conv1dAs2dTest, ConvTransposeKeepsTheRegion) {
  model.Input("x", DataType::kFloat, {1, 32, 20});
  model.Initializer("w1", Floats({32, 32, 7}, 1));
  SetAttr(model.Node("Conv", {"x", "w1"}, {"c1"}, "conv_pre"), "pads", Ints{3, 3});
  SetAttr(model.Node("LeakyRelu", {"c1"}, {"l1"}), "alpha", 0.1f);
  model.Initializer("wt", Floats({32, 16, 8}, 2));
  model.Initializer("bt", Floats({16}, 3));
  auto& up = model.Node("ConvTranspose", {"l1", "wt", "bt"}, {"u"}, "upsample");
  SetAttr(up, "kernel_shape", Ints{8});
  SetAttr(up, "strides", Ints{4});
  SetAttr(up, "pads", Ints{2, 2});
  SetAttr(model.Node("LeakyRelu", {"u"}, {"l2"}), "alpha", 0.1f);
  model.Initializer("w2", Floats({16, 16, 3}, 4));
  auto& dil = model.Node("Conv", {"l2", "w2"}, {"c2"}, "dilated");
  SetAttr(dil, "dilations", Ints{3});
  SetAttr(dil, "pads", Ints{3, 3});
  model.Node("Add", {"c2", "u"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 80});
  const Tensor wt = graph().constants.at("wt");
  ASSERT_TRUE(Lift().ok());
  EXPECT_EQ(Ops(), (Names{"Unsqueeze", "Conv", "LeakyRelu", "ConvTranspose", "LeakyRelu", "Conv", "Add", "Squeeze"}));
  const Node& t = Only("ConvTranspose");
  EXPECT_EQ(IntsOf(t, "kernel_shape"), (Ints{1, 8}));
  EXPECT_EQ(IntsOf(t, "strides"), (Ints{1, 4}));
  EXPECT_EQ(IntsOf(t, "pads"), (Ints{0, 2, 0, 2}));
  EXPECT_EQ(graph().constants.at(t.proto->input(1)).shape(), (Shape{32, 16, 1, 8}));
  EXPECT_TRUE(graph().constants.at(t.proto->input(1)).SharesStorageWith(wt));
  EXPECT_EQ(t.proto->input(2), "bt");  // the bias is a parameter: as it was
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const Names ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), kInternal + "BlockedConv"), 2);
  double diff, scale;
  Compare({{"x", Floats({1, 32, 20}, 5)}}, &diff, &scale);
  EXPECT_GT(scale, 1.0);
  EXPECT_LE(diff, 1e-5 * scale);  // float sums over 224 terms in another order
}

// The ConvTranspose attributes of other upsamplers: MelGAN's odd stride (output_padding 1), two
// groups with a dilation, and output_shape as the length alone or as [N, M, L]; each against the
// plain 1-D kernel.
class ConvTransposeAttributesTest : public Conv1dAs2dTest {
 protected:
  void Check(int64_t group, int64_t dilation, int64_t output_padding, const Ints& output_shape) {
    model.Input("x", DataType::kFloat, {1, 8, 12});
    model.Initializer("w0", Floats({8, 8, 3}, 1));
    SetAttr(model.Node("Conv", {"x", "w0"}, {"c"}, "conv"), "pads", Ints{1, 1});
    model.Initializer("w", Floats({8, 8 / group, 6}, 2));
    auto& t = model.Node("ConvTranspose", {"c", "w"}, {"y"}, "upsample");
    SetAttr(t, "strides", Ints{3});
    SetAttr(t, "pads", Ints{1, 2});
    SetAttr(t, "group", group);
    SetAttr(t, "dilations", Ints{dilation});
    if (output_padding != 0) SetAttr(t, "output_padding", Ints{output_padding});
    if (!output_shape.empty()) SetAttr(t, "output_shape", output_shape);
    model.Output("y", DataType::kFloat, {}, false);
    ASSERT_TRUE(Lift().ok());
    EXPECT_EQ(Ops(), (Names{"Unsqueeze", "Conv", "ConvTranspose", "Squeeze"}));
    if (!output_shape.empty()) {
      EXPECT_EQ(IntsOf(Only("ConvTranspose"), "output_shape").size(), output_shape.size() == 3 ? 4u : 2u);
    }
    double diff, scale;
    Compare({{"x", Floats({1, 8, 12}, 3)}}, &diff, &scale);
    EXPECT_GT(scale, 0.5);
    EXPECT_LE(diff, 1e-5 * scale);
  }
};

TEST_F(ConvTransposeAttributesTest, OddStride) { Check(1, 1, 1, {}); }
TEST_F(ConvTransposeAttributesTest, GroupsAndDilation) { Check(2, 2, 0, {}); }
TEST_F(ConvTransposeAttributesTest, OutputLength) { Check(1, 1, 0, {37}); }
TEST_F(ConvTransposeAttributesTest, OutputShape) { Check(1, 1, 0, {1, 8, 36}); }

// MelGAN's reflection padding (Pad, mode reflect, on the length axis) and 1-D pools between
// convolutions stay in the region: the pads given the 4-D form, the pools' windows height 1 (the
// blocked layout has both pools).
TEST_F(Conv1dAs2dTest, PadAndPoolsInTheRegion) {
  model.Input("x", DataType::kFloat, {1, 16, 40});
  model.Initializer("w1", Floats({16, 16, 3}, 1));
  SetAttr(model.Node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", Ints{1, 1});
  model.Initializer("pads", Tensor::FromVector<int64_t>({6}, {0, 0, 3, 0, 0, 3}));
  SetAttr(model.Node("Pad", {"c1", "pads"}, {"p"}, "reflect"), "mode", std::string("reflect"));
  model.Initializer("w2", Floats({16, 16, 7}, 2));
  model.Node("Conv", {"p", "w2"}, {"c2"}, "conv2");
  auto& mp = model.Node("MaxPool", {"c2"}, {"m"}, "max");
  SetAttr(mp, "kernel_shape", Ints{3});
  SetAttr(mp, "strides", Ints{2});
  SetAttr(mp, "pads", Ints{1, 1});
  auto& ap = model.Node("AveragePool", {"m"}, {"a"}, "avg");
  SetAttr(ap, "kernel_shape", Ints{2});
  SetAttr(ap, "strides", Ints{2});
  model.Initializer("w3", Floats({16, 16, 1}, 3));
  model.Node("Conv", {"a", "w3"}, {"y"}, "conv3");
  model.Output("y", DataType::kFloat, {1, 16, 10});
  ASSERT_TRUE(Lift().ok());
  EXPECT_EQ(Ops(), (Names{"Unsqueeze", "Conv", "Pad", "Conv", "MaxPool", "AveragePool", "Conv", "Squeeze"}));
  const Tensor& pads = graph().constants.at(Only("Pad").proto->input(1));
  EXPECT_EQ(std::vector<int64_t>(pads.data<int64_t>(), pads.data<int64_t>() + pads.size()),
            (Ints{0, 0, 0, 3, 0, 0, 0, 3}));
  EXPECT_EQ(IntsOf(Only("MaxPool"), "kernel_shape"), (Ints{1, 3}));
  EXPECT_EQ(IntsOf(Only("MaxPool"), "pads"), (Ints{0, 1, 0, 1}));
  EXPECT_EQ(IntsOf(Only("AveragePool"), "strides"), (Ints{1, 2}));
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const Names ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), kInternal + "BlockedMaxPool"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), kInternal + "BlockedAveragePool"), 1);
  double diff, scale;
  Compare({{"x", Floats({1, 16, 40}, 4)}}, &diff, &scale);
  EXPECT_GT(scale, 1.0);
  EXPECT_LE(diff, 1e-5 * scale);
}

// Near misses that end the region (a Squeeze before them) or stay 1-D: a Pad of the channel axis,
// a MaxPool whose Indices are read, a ConvTranspose whose weights come at run time, and one whose
// declared input's channels do not match W (the plain kernel's refusal stays).
TEST_F(Conv1dAs2dTest, WhatEndsTheRegion) {
  model.Input("x", DataType::kFloat, {1, 8, 20});
  model.Initializer("w", Floats({8, 8, 3}, 1));
  model.Node("Conv", {"x", "w"}, {"c"}, "conv");
  model.Initializer("pads", Tensor::FromVector<int64_t>({6}, {0, 1, 0, 0, 1, 0}));
  model.Node("Pad", {"c", "pads"}, {"p"}, "channels");
  auto& mp = model.Node("MaxPool", {"c"}, {"m", "idx"}, "with_indices");
  SetAttr(mp, "kernel_shape", Ints{2});
  model.Input("w_run", DataType::kFloat, {8, 4, 4});
  SetAttr(model.Node("ConvTranspose", {"c", "w_run"}, {"t"}, "runtime_weights"), "strides", Ints{2});
  model.Input("x16", DataType::kFloat, {1, 16, 20});
  model.Initializer("wt", Floats({8, 4, 4}, 2));
  model.Node("ConvTranspose", {"x16", "wt"}, {"bad"}, "wrong_channels");
  for (const char* out : {"p", "m", "t"}) model.Output(out, DataType::kFloat, {}, false);
  model.Output("idx", DataType::kInt64, {}, false);
  model.Output("bad", DataType::kFloat, {}, false);
  ASSERT_TRUE(Lift().ok());
  EXPECT_EQ(Ops(), (Names{"Unsqueeze", "Conv", "Squeeze", "Pad", "MaxPool", "ConvTranspose", "ConvTranspose"}));
  EXPECT_EQ(IntsOf(Only("MaxPool"), "kernel_shape"), (Ints{2}));
  for (const Node& n : graph().nodes) {
    if (n.op_type() == "ConvTranspose") {
      auto w = graph().constants.find(n.proto->input(1));  // none for w_run
      if (w != graph().constants.end()) EXPECT_EQ(w->second.rank(), 3);
    }
  }
}

// A QDQ vocoder's residual block as the QDQ fusion leaves it: QLinearConv -> com.microsoft
// QLinearLeakyRelu -> QLinearConv. The quantized LeakyRelu carries the lifted region (its output
// known 3-D, so the second convolution is lifted too, where it had stayed on the plain 1-D
// kernel), and the channels-last region through it: one Transpose in, one out. Same bytes.
TEST_F(Conv1dAs2dTest, QuantizedLeakyReluKeepsBothRegions) {
  auto* ms = model.proto().add_opset_import();
  ms->set_domain(kMsDomain);
  ms->set_version(1);
  model.Input("x", DataType::kUint8, {1, 16, 40});
  model.Initializer("s", Tensor::Scalar<float>(0.02f));
  model.Initializer("z", Tensor::Scalar<uint8_t>(128));
  Tensor ws = Floats({16}, 2);
  for (int64_t i = 0; i < 16; ++i) ws.mutable_data<float>()[i] = 1e-3f + 1e-3f * std::abs(ws.data<float>()[i]);
  model.Initializer("ws", ws);
  model.Initializer("wz", Tensor::FromVector<int8_t>({16}, std::vector<int8_t>(16, 0)));
  model.Initializer("w1", Bytes<int8_t>({16, 16, 3}, 1, -127, 127));
  model.Initializer("w2", Bytes<int8_t>({16, 16, 5}, 2, -127, 127));
  SetAttr(model.Node("QLinearConv", {"x", "s", "z", "w1", "ws", "wz", "s", "z"}, {"c1"}, "conv1"), "pads", Ints{1, 1});
  auto& lrelu = model.Node("QLinearLeakyRelu", {"c1", "s", "z", "s", "z"}, {"l"}, "lrelu");
  lrelu.set_domain(kMsDomain);
  SetAttr(lrelu, "alpha", 0.1f);
  auto& c2 = model.Node("QLinearConv", {"l", "s", "z", "w2", "ws", "wz", "s", "z"}, {"y"}, "conv2");
  SetAttr(c2, "pads", Ints{4, 4});
  SetAttr(c2, "dilations", Ints{2});
  model.Output("y", DataType::kUint8, {1, 16, 40});
  ASSERT_TRUE(Lift().ok());
  EXPECT_EQ(Ops(), (Names{"Unsqueeze", "QLinearConv", "com.microsoft.QLinearLeakyRelu", "QLinearConv", "Squeeze"}));
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  const Names ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), kInternal + "QLinearConvNhwc"), 2);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Transpose"), 2);
  double diff, scale;
  Compare({{"x", Bytes<uint8_t>({1, 16, 40}, 3, 0, 255)}}, &diff, &scale);
  EXPECT_GT(scale, 0.0);
  EXPECT_EQ(diff, 0.0);
}

}  // namespace
}  // namespace onnxflow::graph
