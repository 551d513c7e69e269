// The transformer fusions: graph/attention_fusion.cc makes the written-out attention of an export
// one FusedAttention node, for each scale, mask and K form it accepts; graph/fusion.cc puts the FFN's
// GELU (written out, or ONNX Runtime's BiasGelu) into its product's epilogue. Each computes what
// the subgraph computed, and anything that differs from the pattern stays as written.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using tools::SetAttr;

Tensor Random(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(DataType::kFloat, shape);
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.mutable_data<float>()[i] = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return t;
}

// The op types one optimized run executed, sorted, after checking that its outputs match the
// unoptimized run's.
std::vector<std::string> OpsWithSameOutputs(const std::string& bytes, const std::vector<NamedValue>& inputs) {
  SessionOptions plain;
  plain.optimize = false;
  auto a = Session::LoadFromBytes(bytes, plain);
  auto b = Session::LoadFromBytes(bytes);
  if (!a.ok() || !b.ok()) {
    ADD_FAILURE() << a.status().ToString() << " " << b.status().ToString();
    return {};
  }
  RunProfile profile;
  RunOptions options;
  options.profile = &profile;
  auto out_a = a->Run(inputs);
  auto out_b = b->Run(inputs, options);
  if (!out_a.ok() || !out_b.ok()) {
    ADD_FAILURE() << out_a.status().ToString() << " " << out_b.status().ToString();
    return {};
  }
  EXPECT_EQ(out_a->size(), out_b->size());
  for (size_t i = 0; i < std::min(out_a->size(), out_b->size()); ++i) {
    const Comparison c = CompareValues((*out_a)[i].value, (*out_b)[i].value, 1e-4, 1e-5);
    EXPECT_TRUE(c.match) << (*out_a)[i].name << ": " << c.mismatch;
  }
  std::vector<std::string> ops;
  for (const NodeTiming& t : profile.nodes) ops.push_back(t.op_type);
  std::sort(ops.begin(), ops.end());
  return ops;
}

enum class Scale { kNone, kDiv, kMulLeft, kMulRight, kOnQuery };
enum class KForm { kPermuted, kTwoTransposes };

struct Case {
  int64_t batch = 2, q_len = 5, kv_len = 5, heads = 3, head_size = 4;
  Scale scale = Scale::kDiv;
  KForm k_form = KForm::kPermuted;
  Shape mask;               // empty: no mask
  bool mask_first = false;  // Add(mask, scores)
  bool transpose_back = true;
  bool from_projection = false;  // q, k, v reshaped from 3-D (B, S, N * D) inputs
  int softmax_axis = -1;
  int softmax_opset = 17;
  bool scores_output = false;  // the scores are also a graph output
  int64_t hidden_prefix = 0;   // the mask hides the first keys with -inf instead of -10000s
  Shape bias;                  // a per-head position bias added before the mask (T5, Swin); empty: none
};

std::string Build(const Case& c, std::vector<NamedValue>* inputs) {
  tools::ModelBuilder m(c.softmax_opset);
  const int64_t b = c.batch, n = c.heads, d = c.head_size;
  auto head_input = [&](const std::string& name, int64_t len, uint32_t seed) {
    if (c.from_projection) {
      m.Input(name + "_3d", DataType::kFloat, {b, len, n * d});
      inputs->push_back({name + "_3d", Random({b, len, n * d}, seed)});
      m.Node("Reshape", {name + "_3d", "heads_shape"}, {name});
    } else {
      m.Input(name, DataType::kFloat, {b, len, n, d});
      inputs->push_back({name, Random({b, len, n, d}, seed)});
    }
  };
  if (c.from_projection) m.Initializer("heads_shape", Tensor::FromVector<int64_t>({4}, {0, 0, n, d}));
  head_input("q", c.q_len, 1);
  head_input("k", c.kv_len, 2);
  head_input("v", c.kv_len, 3);
  SetAttr(m.Node("Transpose", {"q"}, {"qt"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  SetAttr(m.Node("Transpose", {"v"}, {"vt"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  if (c.k_form == KForm::kPermuted) {
    SetAttr(m.Node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
  } else {
    SetAttr(m.Node("Transpose", {"k"}, {"kh"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    SetAttr(m.Node("Transpose", {"kh"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  }
  const float root = std::sqrt(static_cast<float>(d));
  m.Initializer("root", Tensor::FromVector<float>({}, {root}));
  m.Initializer("inv_root", Tensor::FromVector<float>({1}, {1.0f / root}));
  std::string q = "qt";
  if (c.scale == Scale::kOnQuery) {
    m.Node("Mul", {"qt", "inv_root"}, {"qs"});
    q = "qs";
  }
  m.Node("MatMul", {q, "kt"}, {"scores"});
  std::string s = "scores";
  if (c.scale == Scale::kDiv) m.Node("Div", {s, "root"}, {"scaled"});
  if (c.scale == Scale::kMulLeft) m.Node("Mul", {"inv_root", s}, {"scaled"});
  if (c.scale == Scale::kMulRight) m.Node("Mul", {s, "inv_root"}, {"scaled"});
  if (c.scale != Scale::kNone && c.scale != Scale::kOnQuery) s = "scaled";
  if (!c.bias.empty()) {
    m.Input("bias", DataType::kFloat, c.bias);
    inputs->push_back({"bias", Random(c.bias, 5, -2.0f, 2.0f)});
    m.Node("Add", {s, "bias"}, {"biased"});
    s = "biased";
  }
  if (!c.mask.empty()) {
    m.Input("mask", DataType::kFloat, c.mask);
    // Zeros and -10000s, as an export's (1 - mask) * -10000 gives.
    Tensor mask = Random(c.mask, 4, 0.0f, 1.0f);
    for (int64_t i = 0; i < mask.size(); ++i) {
      float& x = mask.mutable_data<float>()[i];
      x = x < 0.3f ? -10000.0f : 0.0f;
      if (i % c.mask.back() < c.hidden_prefix) x = -INFINITY;
    }
    inputs->push_back({"mask", mask});
    m.Node("Add", c.mask_first ? std::vector<std::string>{"mask", s} : std::vector<std::string>{s, "mask"}, {"masked"});
    s = "masked";
  }
  auto& softmax = m.Node("Softmax", {s}, {"probs"});
  if (c.softmax_axis != -100) SetAttr(softmax, "axis", int64_t{c.softmax_axis});
  m.Node("MatMul", {"probs", "vt"}, {"ctx"});
  if (c.transpose_back) {
    SetAttr(m.Node("Transpose", {"ctx"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    m.Output("y", DataType::kFloat, {b, c.q_len, n, d});
  } else {
    m.Output("ctx", DataType::kFloat, {b, n, c.q_len, d});
  }
  if (c.scores_output) m.Output("scores", DataType::kFloat, {b, n, c.q_len, c.kv_len});
  return m.Serialize();
}

TEST(AttentionFusion, EveryScaleMaskAndKeyFormFuses) {
  const std::vector<Scale> scales = {Scale::kNone, Scale::kDiv, Scale::kMulLeft, Scale::kMulRight, Scale::kOnQuery};
  const std::vector<Shape> masks = {{}, {2, 1, 1, 7}, {7}, {1, 1, 3, 7}, {2, 3, 3, 7}, {3, 7}, {2, 1, 3, 1}};
  int cases = 0;
  for (Scale scale : scales) {
    for (const Shape& mask : masks) {
      for (KForm k_form : {KForm::kPermuted, KForm::kTwoTransposes}) {
        Case c;
        c.q_len = 3;
        c.kv_len = 7;
        c.scale = scale;
        c.mask = mask;
        c.mask_first = cases % 2 == 1;
        c.k_form = k_form;
        c.transpose_back = cases % 3 != 0;
        SCOPED_TRACE("case " + std::to_string(cases) + " scale " + std::to_string(static_cast<int>(scale)) + " mask " +
                     std::to_string(mask.size()) + "-D, k form " + std::to_string(static_cast<int>(k_form)));
        std::vector<NamedValue> inputs;
        const std::string bytes = Build(c, &inputs);
        EXPECT_EQ(OpsWithSameOutputs(bytes, inputs), std::vector<std::string>{"FusedAttention"});
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 70);
}

// T5's and Swin's attention: unscaled or scaled scores plus a per-head position bias, then the
// mask: the kernel adds the two terms' sum (an Add node of (1 or B, N, S, T) per layer).
TEST(AttentionFusion, PositionBiasThenMaskFuses) {
  for (const auto& [scale, mask, bias] : std::vector<std::tuple<Scale, Shape, Shape>>{
           {Scale::kNone, {2, 1, 1, 7}, {1, 3, 3, 7}},
           {Scale::kDiv, {}, {1, 3, 3, 7}},
           {Scale::kNone, {2, 1, 3, 7}, {2, 3, 3, 7}},
           {Scale::kMulRight, {7}, {3, 3, 7}}}) {
    Case c;
    c.q_len = 3;
    c.kv_len = 7;
    c.scale = scale;
    c.mask = mask;
    c.bias = bias;
    c.mask_first = mask.size() == 1;
    std::vector<NamedValue> inputs;
    const std::string bytes = Build(c, &inputs);
    const std::vector<std::string> want =
        mask.empty() ? std::vector<std::string>{"FusedAttention"} : std::vector<std::string>{"Add", "FusedAttention"};
    EXPECT_EQ(OpsWithSameOutputs(bytes, inputs), want) << "mask " << mask.size() << "-D, bias " << bias.size() << "-D";
  }
}

// BERT's shape (one batch, 12 heads of 64, 128 tokens) from 3-D projections, at the opset-11
// Softmax (axis 3 coerces to the same rows), and a query block longer than one task's rows.
TEST(AttentionFusion, ProjectionsAndLongSequencesFuse) {
  for (const auto& [len, heads, opset] : std::vector<std::tuple<int64_t, int64_t, int>>{{128, 12, 17}, {300, 2, 11}}) {
    Case c;
    c.batch = 1;
    c.q_len = c.kv_len = len;
    c.heads = heads;
    c.head_size = 64;
    c.mask = {1, 1, 1, len};
    c.from_projection = true;
    c.softmax_opset = opset;
    c.softmax_axis = 3;
    SCOPED_TRACE(len);
    std::vector<NamedValue> inputs;
    const std::string bytes = Build(c, &inputs);
    EXPECT_EQ(OpsWithSameOutputs(bytes, inputs), (std::vector<std::string>{"FusedAttention", "Reshape", "Reshape", "Reshape"}));
  }
}

// Past 1024 keys the kernel goes 512 keys at a time (online softmax): three chunks, the first
// wholly hidden by -inf for some rows' keys, still give the unfused result.
TEST(AttentionFusion, LongKeySequencesMatch) {
  for (int64_t hidden : {int64_t{0}, int64_t{600}}) {
    Case c;
    c.batch = 1;
    c.q_len = 70;
    c.kv_len = 1300;
    c.heads = 2;
    c.head_size = 16;
    c.mask = {1, 1, 1, 1300};
    c.hidden_prefix = hidden;
    SCOPED_TRACE(hidden);
    std::vector<NamedValue> inputs;
    const std::string bytes = Build(c, &inputs);
    EXPECT_EQ(OpsWithSameOutputs(bytes, inputs), std::vector<std::string>{"FusedAttention"});
  }
}

// What is not attention over the last axis, or whose scores something else reads, stays as
// written (and still computes the same).
TEST(AttentionFusion, NearMissesStayUnfused) {
  const std::vector<std::string> unfused = {"Add", "Div", "MatMul", "MatMul", "Softmax", "Transpose",
                                            "Transpose", "Transpose", "Transpose"};
  {
    Case c;  // softmax over the query axis
    c.softmax_axis = 2;
    c.mask = {2, 1, 1, 5};
    std::vector<NamedValue> inputs;
    EXPECT_EQ(OpsWithSameOutputs(Build(c, &inputs), inputs), unfused);
  }
  {
    Case c;  // Softmax-11's default axis 1 is not the keys
    c.softmax_opset = 11;
    c.softmax_axis = -100;
    c.mask = {2, 1, 1, 5};
    std::vector<NamedValue> inputs;
    EXPECT_EQ(OpsWithSameOutputs(Build(c, &inputs), inputs), unfused);
  }
  {
    Case c;  // the scores are a graph output too
    c.scores_output = true;
    c.mask = {2, 1, 1, 5};
    std::vector<NamedValue> inputs;
    EXPECT_EQ(OpsWithSameOutputs(Build(c, &inputs), inputs), unfused);
  }
  {
    // Q heads also read by another node: the Transpose cannot go.
    Case c;
    c.mask = {2, 1, 1, 5};
    std::vector<NamedValue> inputs;
    std::string bytes = Build(c, &inputs);
    onnx::ModelProto model;
    ASSERT_TRUE(model.ParseFromString(bytes));
    auto* relu = model.mutable_graph()->add_node();
    relu->set_op_type("Relu");
    relu->add_input("qt");
    relu->add_output("q_relu");
    auto* out = model.mutable_graph()->add_output();
    *out = model.graph().output(0);
    out->set_name("q_relu");
    out->mutable_type()->mutable_tensor_type()->clear_shape();
    std::vector<std::string> ops = unfused;
    ops.push_back("Relu");
    std::sort(ops.begin(), ops.end());
    EXPECT_EQ(OpsWithSameOutputs(model.SerializeAsString(), inputs), ops);
  }
}

enum class GeluForm { kHalfLast, kHalfFirst, kMulBySqrtHalf };

// y = GELU(x W + b) as PyTorch writes GELU out; `extra_reader` also reads x W + b elsewhere,
// `half` is the constant of the final scaling (0.5 in a GELU).
std::string GeluModel(GeluForm form, bool swapped, bool extra_reader, float half, std::vector<NamedValue>* inputs) {
  tools::ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2, 3, 8});
  inputs->push_back({"x", Random({2, 3, 8}, 5)});
  m.Initializer("w", Random({8, 16}, 6));
  m.Initializer("b", Random({16}, 7));
  m.Initializer("sqrt2", Tensor::FromVector<float>({}, {1.4142135f}));
  m.Initializer("sqrt_half", Tensor::FromVector<float>({}, {0.70710678f}));
  m.Initializer("one", Tensor::FromVector<float>({}, {1.0f}));
  m.Initializer("half", Tensor::FromVector<float>({}, {half}));
  m.Node("MatMul", {"x", "w"}, {"p"});
  m.Node("Add", {"p", "b"}, {"h"});
  if (form == GeluForm::kMulBySqrtHalf) {
    m.Node("Mul", swapped ? std::vector<std::string>{"sqrt_half", "h"} : std::vector<std::string>{"h", "sqrt_half"}, {"d"});
  } else {
    m.Node("Div", {"h", "sqrt2"}, {"d"});
  }
  m.Node("Erf", {"d"}, {"e"});
  m.Node("Add", swapped ? std::vector<std::string>{"one", "e"} : std::vector<std::string>{"e", "one"}, {"a"});
  if (form == GeluForm::kHalfFirst) {
    m.Node("Mul", swapped ? std::vector<std::string>{"half", "h"} : std::vector<std::string>{"h", "half"}, {"hh"});
    m.Node("Mul", swapped ? std::vector<std::string>{"a", "hh"} : std::vector<std::string>{"hh", "a"}, {"y"});
  } else {
    m.Node("Mul", swapped ? std::vector<std::string>{"a", "h"} : std::vector<std::string>{"h", "a"}, {"ha"});
    m.Node("Mul", swapped ? std::vector<std::string>{"half", "ha"} : std::vector<std::string>{"ha", "half"}, {"y"});
  }
  m.Output("y", DataType::kFloat, {2, 3, 16});
  if (extra_reader) {
    m.Node("Relu", {"h"}, {"r"});
    m.Output("r", DataType::kFloat, {2, 3, 16});
  }
  return m.Serialize();
}

// ---- the residual connection: LayerNormalization(Add(a, b)) -> AddLayerNormalization ----

struct ResidualCase {
  Shape a = {2, 3, 8}, b = {2, 3, 8};
  bool sum_read = false;     // a pre-norm model's residual stream reads the sum too
  bool with_bias = true;
  int64_t axis = -1;
  bool mean_output = false;  // the LayerNormalization's Mean output is a graph output
};

std::string ResidualModel(const ResidualCase& c, std::vector<NamedValue>* inputs) {
  tools::ModelBuilder m(17);
  m.Input("a", DataType::kFloat, c.a);
  m.Input("b", DataType::kFloat, c.b);
  m.Initializer("gamma", Random({8}, 21, 0.5f, 1.5f));
  m.Initializer("beta", Random({8}, 22));
  m.Node("Add", {"a", "b"}, {"s"});
  std::vector<std::string> ln_in = {"s", "gamma"};
  if (c.with_bias) ln_in.push_back("beta");
  std::vector<std::string> ln_out = {"y"};
  if (c.mean_output) ln_out.push_back("mean");
  auto& ln = m.Node("LayerNormalization", ln_in, ln_out);
  SetAttr(ln, "axis", c.axis);
  SetAttr(ln, "epsilon", 1e-3f);
  m.Output("y", DataType::kFloat, {}, /*rank_known=*/false);
  if (c.mean_output) m.Output("mean", DataType::kFloat, {}, /*rank_known=*/false);
  if (c.sum_read) {
    m.Node("Relu", {"s"}, {"r"});
    m.Output("r", DataType::kFloat, {}, /*rank_known=*/false);
  }
  inputs->push_back({"a", Random(c.a, 23, -3.0f, 3.0f)});
  inputs->push_back({"b", Random(c.b, 24, -3.0f, 3.0f)});
  return m.Serialize();
}

// Equal shapes, either operand broadcast (the kernel's general path), with and without beta, and
// the sum also read elsewhere: one AddLayerNormalization computing what the two ops did.
TEST(ResidualNormFusion, AddThenLayerNormIsOneNode) {
  for (const auto& [a, b] : std::vector<std::pair<Shape, Shape>>{
           {{2, 3, 8}, {2, 3, 8}}, {{2, 3, 8}, {3, 8}}, {{1, 3, 8}, {2, 3, 8}}, {{2, 3, 1}, {8}}, {{8}, {8}}}) {
    for (bool sum_read : {false, true}) {
      for (bool with_bias : {false, true}) {
        SCOPED_TRACE(std::to_string(a.size()) + "-d + " + std::to_string(b.size()) + "-d" +
                     (sum_read ? " sum read" : "") + (with_bias ? " beta" : ""));
        ResidualCase c;
        c.a = a;
        c.b = b;
        c.sum_read = sum_read;
        c.with_bias = with_bias;
        std::vector<NamedValue> inputs;
        std::vector<std::string> expected = {"AddLayerNormalization"};
        if (sum_read) expected.push_back("Relu");
        EXPECT_EQ(OpsWithSameOutputs(ResidualModel(c, &inputs), inputs), expected);
      }
    }
  }
}

// Another axis, or the Mean output in use: the two ops stay.
TEST(ResidualNormFusion, NearMissesStay) {
  for (int variant = 0; variant < 2; ++variant) {
    ResidualCase c;
    if (variant == 0) c.axis = 1;
    if (variant == 1) c.mean_output = true;
    std::vector<NamedValue> inputs;
    EXPECT_EQ(OpsWithSameOutputs(ResidualModel(c, &inputs), inputs),
              (std::vector<std::string>{"Add", "LayerNormalization"}))
        << variant;
  }
}

// ---- RMS normalization written out (LLaMA's RMSNorm) -> SimplifiedLayerNormalization ----

enum class RmsForm { kDivPow, kReciprocalMulSquare, kReciprocalFirst };

struct RmsCase {
  RmsForm form = RmsForm::kDivPow;
  bool residual = false;    // the normalized value is Add(a, b), the residual stream
  bool x_read = false;      // x also read elsewhere
  int64_t mean_axis = -1;
  int64_t weight_size = 8;  // 1: a scalar weight, which broadcasts, stays
};

std::string RmsModel(const RmsCase& c, std::vector<NamedValue>* inputs) {
  tools::ModelBuilder m(17);
  m.Input("a", DataType::kFloat, {2, 3, 8});
  m.Input("b", DataType::kFloat, {2, 3, 8});
  m.Initializer("weight", Random({c.weight_size}, 31, 0.5f, 1.5f));
  m.Initializer("two", Tensor::Scalar<float>(2.0f));
  m.Initializer("eps", Tensor::Scalar<float>(1e-5f));
  std::string x = "a";
  if (c.residual) {
    m.Node("Add", {"a", "b"}, {"x"});
    x = "x";
  }
  if (c.form == RmsForm::kDivPow) {
    m.Node("Pow", {x, "two"}, {"sq"});
  } else {
    m.Node("Mul", {x, x}, {"sq"});
  }
  SetAttr(m.Node("ReduceMean", {"sq"}, {"ms"}), "axes", std::vector<int64_t>{c.mean_axis});
  m.Node("Add", {"ms", "eps"}, {"ve"});
  m.Node("Sqrt", {"ve"}, {"rs"});
  if (c.form == RmsForm::kDivPow) {
    m.Node("Div", {x, "rs"}, {"n"});
  } else {
    m.Node("Reciprocal", {"rs"}, {"inv"});
    m.Node("Mul", c.form == RmsForm::kReciprocalFirst ? std::vector<std::string>{"inv", x} : std::vector<std::string>{x, "inv"}, {"n"});
  }
  m.Node("Mul", {"weight", "n"}, {"y"});
  m.Output("y", DataType::kFloat, {}, /*rank_known=*/false);
  if (c.x_read) {
    m.Node("Relu", {x}, {"r"});
    m.Output("r", DataType::kFloat, {}, /*rank_known=*/false);
  }
  inputs->push_back({"a", Random({2, 3, 8}, 33, -3.0f, 3.0f)});
  inputs->push_back({"b", Random({2, 3, 8}, 34, -3.0f, 3.0f)});
  return m.Serialize();
}

// Each written-out form is one SimplifiedLayerNormalization; after a residual Add, one
// AddLayerNormalization (the RMS form of SkipLayerNormalization), the stream still readable.
TEST(RmsNormFusion, WrittenOutRmsNormIsOneNode) {
  for (RmsForm form : {RmsForm::kDivPow, RmsForm::kReciprocalMulSquare, RmsForm::kReciprocalFirst}) {
    for (bool residual : {false, true}) {
      for (bool x_read : {false, true}) {
        SCOPED_TRACE(std::to_string(static_cast<int>(form)) + (residual ? " residual" : "") + (x_read ? " x read" : ""));
        RmsCase c;
        c.form = form;
        c.residual = residual;
        c.x_read = x_read;
        std::vector<NamedValue> inputs;
        std::vector<std::string> expected = {residual ? "AddLayerNormalization" : "SimplifiedLayerNormalization"};
        if (x_read) expected.push_back("Relu");
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(OpsWithSameOutputs(RmsModel(c, &inputs), inputs), expected);
      }
    }
  }
}

// The mean over another axis, or a scalar weight: no SimplifiedLayerNormalization.
TEST(RmsNormFusion, NearMissesStay) {
  for (int variant = 0; variant < 2; ++variant) {
    RmsCase c;
    if (variant == 0) c.mean_axis = 1;
    if (variant == 1) c.weight_size = 1;
    std::vector<NamedValue> inputs;
    const auto ops = OpsWithSameOutputs(RmsModel(c, &inputs), inputs);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "SimplifiedLayerNormalization"), 0) << variant;
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "ReduceMean"), 1) << variant;
  }
}

// The written-out GELU after a linear layer is the layer's epilogue: one FusedMatMul.
TEST(GeluFusion, WrittenOutGeluJoinsTheProduct) {
  for (GeluForm form : {GeluForm::kHalfLast, GeluForm::kHalfFirst, GeluForm::kMulBySqrtHalf}) {
    for (bool swapped : {false, true}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(form)) + (swapped ? " swapped" : ""));
      std::vector<NamedValue> inputs;
      EXPECT_EQ(OpsWithSameOutputs(GeluModel(form, swapped, false, 0.5f, &inputs), inputs),
                std::vector<std::string>{"FusedMatMul"});
    }
  }
}

// Not a GELU (a scaling of 0.6), or the product also read elsewhere: the steps stay (as one
// ElementwiseChain) and the product keeps no activation.
TEST(GeluFusion, NearMissesStayAChain) {
  std::vector<NamedValue> inputs;
  EXPECT_EQ(OpsWithSameOutputs(GeluModel(GeluForm::kHalfLast, false, false, 0.6f, &inputs), inputs),
            (std::vector<std::string>{"ElementwiseChain", "FusedMatMul"}));
  inputs.clear();
  EXPECT_EQ(OpsWithSameOutputs(GeluModel(GeluForm::kHalfLast, false, true, 0.5f, &inputs), inputs),
            (std::vector<std::string>{"ElementwiseChain", "FusedMatMul", "Relu"}));
}

// ONNX Runtime's BiasGelu after a MatMul (its saved FFN) is one FusedMatMul with the bias and the
// Gelu epilogue; ONNX's own Gelu op (opset 20) keeps its kernel.
TEST(GeluFusion, BiasGeluJoinsTheProductButOnnxGeluStays) {
  {
    tools::ModelBuilder m(17);
    auto* ms = m.proto().add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
    m.Input("x", DataType::kFloat, {2, 3, 8});
    m.Initializer("w", Random({8, 16}, 6, -2.0f, 2.0f));
    m.Initializer("b", Random({16}, 7));
    m.Node("MatMul", {"x", "w"}, {"p"});
    m.Node("BiasGelu", {"p", "b"}, {"y"}).set_domain("com.microsoft");
    m.Output("y", DataType::kFloat, {2, 3, 16});
    const std::vector<NamedValue> inputs = {{"x", Random({2, 3, 8}, 5)}};
    EXPECT_EQ(OpsWithSameOutputs(m.Serialize(), inputs), std::vector<std::string>{"FusedMatMul"});
  }
  {
    tools::ModelBuilder m(20);
    m.Input("x", DataType::kFloat, {2, 3, 8});
    m.Initializer("w", Random({8, 16}, 6));
    m.Node("MatMul", {"x", "w"}, {"p"});
    m.Node("Gelu", {"p"}, {"y"});
    m.Output("y", DataType::kFloat, {2, 3, 16});
    const std::vector<NamedValue> inputs = {{"x", Random({2, 3, 8}, 5)}};
    EXPECT_EQ(OpsWithSameOutputs(m.Serialize(), inputs), (std::vector<std::string>{"Gelu", "MatMul"}));
  }
}

}  // namespace
}  // namespace onnxflow
