// The transformer fusions: graph/attention_fusion.cc makes the written-out attention of an export
// one FusedAttention node, for each scale, mask and K form it accepts; graph/fusion.cc puts the FFN's
// GELU (written out, or ONNX Runtime's BiasGelu) into its product's epilogue. Each computes what
// the subgraph computed, and anything that differs from the pattern stays as written.
#include <algorithm>
#include <cmath>
#include <limits>
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

// DistilBERT's masked_fill: Where(attention_mask == 0, lowest, scores) on q / sqrt(d) times K^T.
// The Where becomes an additive mask (lowest where hidden, 0 elsewhere) the kernel adds; a fill of
// -1 (no mask: it shifts the hidden keys' scores) stays as written.
std::string MaskedFillModel(float fill, std::vector<NamedValue>* inputs) {
  tools::ModelBuilder m(17);
  const int64_t b = 2, s = 5, n = 3, d = 4;
  for (const auto& [name, seed] : std::vector<std::pair<std::string, uint32_t>>{{"q", 1}, {"k", 2}, {"v", 3}}) {
    m.Input(name, DataType::kFloat, {b, s, n, d});
    inputs->push_back({name, Random({b, s, n, d}, seed)});
  }
  m.Input("attention_mask", DataType::kInt64, {b, s});
  inputs->push_back({"attention_mask", Tensor::FromVector<int64_t>({b, s}, {1, 1, 1, 0, 0, 1, 1, 1, 1, 1})});
  m.Initializer("zero", Tensor::Scalar<int64_t>(0));
  m.Initializer("mask_shape", Tensor::FromVector<int64_t>({4}, {b, 1, 1, s}));
  m.Initializer("root", Tensor::Scalar<float>(2.0f));
  m.Initializer("fill", Tensor::Scalar<float>(fill));
  m.Node("Equal", {"attention_mask", "zero"}, {"eq"});
  m.Node("Reshape", {"eq", "mask_shape"}, {"hidden"});
  SetAttr(m.Node("Transpose", {"q"}, {"qt"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.Node("Div", {"qt", "root"}, {"qs"});
  SetAttr(m.Node("Transpose", {"k"}, {"kh"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  SetAttr(m.Node("Transpose", {"kh"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  SetAttr(m.Node("Transpose", {"v"}, {"vt"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.Node("MatMul", {"qs", "kt"}, {"scores"});
  m.Node("Where", {"hidden", "fill", "scores"}, {"filled"});
  SetAttr(m.Node("Softmax", {"filled"}, {"probs"}), "axis", int64_t{-1});
  m.Node("MatMul", {"probs", "vt"}, {"ctx"});
  SetAttr(m.Node("Transpose", {"ctx"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.Output("y", DataType::kFloat, {b, s, n, d});
  return m.Serialize();
}

TEST(AttentionFusion, MaskedFillWhereFuses) {
  std::vector<NamedValue> inputs;
  EXPECT_EQ(OpsWithSameOutputs(MaskedFillModel(std::numeric_limits<float>::lowest(), &inputs), inputs),
            (std::vector<std::string>{"Equal", "FusedAttention", "Reshape", "Where"}));
  inputs.clear();
  const auto ops = OpsWithSameOutputs(MaskedFillModel(-1.0f, &inputs), inputs);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "FusedAttention"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 1);
}

// GPT-NeoX's and Phi's prefill: Q and K rotated after the split into heads, on the first half of the
// head only (Slice, Mul by a table, Concat with the rest), V split by the usual Transpose, scores Div
// by sqrt(d) then Where(causal, scores, lowest). With `as_ort_saves`, ONNX Runtime's transpose
// optimizer's form: K rotated before its Transpose (K^T = Transpose(k, [0, 2, 3, 1])) and V sliced
// from its heads.
std::string RotaryModel(bool as_ort_saves, std::vector<NamedValue>* inputs) {
  tools::ModelBuilder m(17);
  const int64_t b = 1, s = 6, n = 2, d = 8, rotary = 4;
  for (const auto& [name, seed] : std::vector<std::pair<std::string, uint32_t>>{{"q", 1}, {"k", 2}, {"v", 3}}) {
    m.Input(name, DataType::kFloat, {b, s, n, d});
    inputs->push_back({name, Random({b, s, n, d}, seed)});
  }
  Tensor causal(DataType::kBool, {1, 1, s, s});
  for (int64_t i = 0; i < s * s; ++i) causal.mutable_data<bool>()[i] = i % s <= i / s;
  m.Initializer("causal", causal);
  m.Initializer("table", Random({s, rotary}, 9));
  m.Initializer("table_bsnd", Random({s, 1, rotary}, 10));
  m.Initializer("root", Tensor::Scalar<float>(std::sqrt(static_cast<float>(d))));
  m.Initializer("lowest", Tensor::Scalar<float>(std::numeric_limits<float>::lowest()));
  for (const auto& [name, v] : std::vector<std::pair<std::string, int64_t>>{
           {"zero", 0}, {"rot", rotary}, {"end", d}, {"last", 3}}) {
    m.Initializer(name, Tensor::FromVector<int64_t>({1}, {v}));
  }
  auto rotate = [&](const std::string& x, const std::string& heads, const std::string& table) {
    m.Node("Slice", {heads, "zero", "rot", "last"}, {x + "_rot"});
    m.Node("Slice", {heads, "rot", "end", "last"}, {x + "_pass"});
    m.Node("Mul", {x + "_rot", table}, {x + "_turned"});
    SetAttr(m.Node("Concat", {x + "_turned", x + "_pass"}, {x + "r"}), "axis", int64_t{-1});
  };
  SetAttr(m.Node("Transpose", {"q"}, {"qh"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  rotate("q", "qh", "table");
  SetAttr(m.Node("Transpose", {"v"}, {"vt"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  std::string values = "vt";
  if (as_ort_saves) {
    rotate("k", "k", "table_bsnd");
    SetAttr(m.Node("Transpose", {"kr"}, {"kt"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
    m.Node("Slice", {"vt", "zero", "end", "last"}, {"vs"});
    values = "vs";
  } else {
    SetAttr(m.Node("Transpose", {"k"}, {"kh"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    rotate("k", "kh", "table");
    SetAttr(m.Node("Transpose", {"kr"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  }
  m.Node("MatMul", {"qr", "kt"}, {"scores"});
  m.Node("Div", {"scores", "root"}, {"scaled"});
  m.Node("Where", {"causal", "scaled", "lowest"}, {"masked"});
  SetAttr(m.Node("Softmax", {"masked"}, {"probs"}), "axis", int64_t{-1});
  m.Node("MatMul", {"probs", values}, {"ctx"});
  SetAttr(m.Node("Transpose", {"ctx"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.Output("y", DataType::kFloat, {b, s, n, d});
  return m.Serialize();
}

// Q and K are read as the model computed them, (B, N, S, D), and V as its Transpose writes it; in
// ONNX Runtime's form K gets a Transpose into heads of its own, as V is already in heads.
TEST(AttentionFusion, PartialRotaryHeadsFuse) {
  for (const bool as_ort_saves : {false, true}) {
    SCOPED_TRACE(as_ort_saves ? "as ONNX Runtime saves it" : "as exported");
    std::vector<NamedValue> inputs;
    const auto ops = OpsWithSameOutputs(RotaryModel(as_ort_saves, &inputs), inputs);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "FusedAttention"), 1);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 0);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Transpose"), 3);  // Q's, K's and V's into heads
  }
}

// The bmm form of transformers before 4.48 (BART, Marian, HF Whisper): q_proj(x) * scaling, heads
// (B, S, N, D) -> (B, N, S, D) flattened to (B * N, S, D), K^T = Transpose(K, [0, 2, 1]), the scores
// Reshaped to (B, N, S, T) for the mask and back to (B * N, S, T) for Softmax, the context Reshaped
// to (B, N, S, D) -> Transpose -> (B, S, N * D).
struct BmmCase {
  bool mask = true;
  bool batch_constant = true;  // the heads Reshape's batch entry B (else 0: copied, unknown at load)
  int64_t rows = 0;            // the flattened rows; 0: B * N
  // The sizes read off q's shape at run time, as an export with dynamic axes writes them: bsz =
  // Gather(Shape(q), 0), tgt_len = Gather(Shape(q), 1), the rows bsz * N (or, wrongly, tgt_len * N).
  bool dynamic = false;
  bool rows_of_tgt_len = false;
  // With dynamic sizes: src_len = Gather(Shape(k_flat), 1) in the scores' views, as `key_states.size(1)`
  // traces (`src_len_output`: also a graph output, so the Shape stays read).
  bool src_len_of_k = false;
  bool src_len_output = false;
  // K and V as a decoder's: kPresent, the heads also graph outputs; kCache, Concat(past, new heads)
  // on axis 2 (a graph output) flattened; kPast, the past inputs (B, N, P, D) flattened as they are.
  enum { kHeads, kPresent, kCache, kPast } kv = kHeads;
  int64_t seq = 5;  // S (2 = B: rows tgt_len * N then run, and equal B * N here alone)
  // With dynamic sizes: q's heads Reshape [0, -1, N, D], as ONNX Runtime saves it (its B q's own
  // dimension 0, through the scaling), and the scaling a graph input (not a constant: nothing
  // says q * scaling keeps q's dimension 0).
  bool q_heads_zero = false;
  bool scaling_input = false;
};

std::string BmmModel(const BmmCase& c, std::vector<NamedValue>* inputs) {
  tools::ModelBuilder m(17);
  const int64_t b = 2, s = c.seq, n = 3, d = 4, rows = c.rows > 0 ? c.rows : b * n;
  m.Initializer("heads", Tensor::FromVector<int64_t>({4}, {c.batch_constant ? b : 0, s, n, d}));
  m.Initializer("flat", Tensor::FromVector<int64_t>({3}, {rows, -1, d}));
  m.Initializer("scores4", Tensor::FromVector<int64_t>({4}, {b, n, s, s}));
  m.Initializer("scores3", Tensor::FromVector<int64_t>({3}, {b * n, s, s}));
  m.Initializer("ctx4", Tensor::FromVector<int64_t>({4}, {b, n, s, d}));
  m.Initializer("hidden", Tensor::FromVector<int64_t>({3}, {b, s, n * d}));
  if (c.scaling_input) {
    m.Input("scaling", DataType::kFloat, {});
    inputs->push_back({"scaling", Tensor::Scalar<float>(0.5f)});
  } else {
    m.Initializer("scaling", Tensor::Scalar<float>(0.5f));
  }
  m.Initializer("q_zero_heads", Tensor::FromVector<int64_t>({4}, {0, -1, 3, 4}));
  if (c.dynamic) {
    for (const auto& [name, v] : std::vector<std::pair<std::string, int64_t>>{
             {"n", n}, {"d", d}, {"minus_one", -1}, {"axis0", 0}}) {
      m.Initializer(name, Tensor::FromVector<int64_t>({1}, {v}));
    }
    m.Initializer("heads_n", Tensor::Scalar<int64_t>(n));
    m.Initializer("zero", Tensor::Scalar<int64_t>(0));
    m.Initializer("one", Tensor::Scalar<int64_t>(1));
    m.Node("Shape", {"q"}, {"q_shape"});
    SetAttr(m.Node("Gather", {"q_shape", "zero"}, {"bsz"}), "axis", int64_t{0});
    SetAttr(m.Node("Gather", {"q_shape", "one"}, {"tgt_len"}), "axis", int64_t{0});
    m.Node("Unsqueeze", {"bsz", "axis0"}, {"bsz_u"});
    m.Node("Unsqueeze", {"tgt_len", "axis0"}, {"tgt_u"});
    m.Node("Mul", {c.rows_of_tgt_len ? "tgt_len" : "bsz", "heads_n"}, {"rows"});
    m.Node("Unsqueeze", {"rows", "axis0"}, {"rows_u"});
    SetAttr(m.Node("Concat", {"bsz_u", "tgt_u", "n", "d"}, {"q_heads_shape"}), "axis", int64_t{0});
    SetAttr(m.Node("Concat", {"bsz_u", "minus_one", "n", "d"}, {"kv_heads_shape"}), "axis", int64_t{0});
    SetAttr(m.Node("Concat", {"rows_u", "minus_one", "d"}, {"flat_shape"}), "axis", int64_t{0});
    const char* src = c.src_len_of_k ? "src_u" : "minus_one";
    if (c.src_len_of_k) {
      m.Node("Shape", {"k_flat"}, {"k_flat_shape"});
      SetAttr(m.Node("Gather", {"k_flat_shape", "one"}, {"src_len"}), "axis", int64_t{0});
      m.Node("Unsqueeze", {"src_len", "axis0"}, {"src_u"});
    }
    SetAttr(m.Node("Concat", {"bsz_u", "n", "tgt_u", src}, {"scores4_shape"}), "axis", int64_t{0});
    SetAttr(m.Node("Concat", {"rows_u", "tgt_u", src}, {"scores3_shape"}), "axis", int64_t{0});
    SetAttr(m.Node("Concat", {"bsz_u", "n", "tgt_u", "d"}, {"ctx4_shape"}), "axis", int64_t{0});
  }
  auto shape = [&](const std::string& name) { return c.dynamic ? name + "_shape" : name; };
  const int64_t past = 3;
  for (const auto& [name, seed] : std::vector<std::pair<std::string, uint32_t>>{{"q", 1}, {"k", 2}, {"v", 3}}) {
    if (name != "q" && c.kv == BmmCase::kPast) {  // (B, N, P, D) caches used as they are
      m.Input("past_" + name, DataType::kFloat, {b, n, past, d});
      inputs->push_back({"past_" + name, Random({b, n, past, d}, seed + 10)});
      m.Node("Reshape", {"past_" + name, shape("flat")}, {name + "_flat"});
      continue;
    }
    m.Input(name, DataType::kFloat, {b, s, n * d});
    inputs->push_back({name, Random({b, s, n * d}, seed)});
    std::string x = name;
    if (name == "q") x = m.Node("Mul", {name, "scaling"}, {"q_scaled"}).output(0);
    const std::string target = !c.dynamic      ? "heads"
                               : name != "q"     ? "kv_heads_shape"
                               : c.q_heads_zero  ? "q_zero_heads"
                                                 : "q_heads_shape";
    m.Node("Reshape", {x, target}, {name + "_r"});
    SetAttr(m.Node("Transpose", {name + "_r"}, {name + "_t"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    std::string heads = name + "_t";
    if (name != "q" && c.kv == BmmCase::kCache) {
      m.Input("past_" + name, DataType::kFloat, {b, n, past, d});
      inputs->push_back({"past_" + name, Random({b, n, past, d}, seed + 10)});
      heads = "present_" + name;
      SetAttr(m.Node("Concat", {"past_" + name, name + "_t"}, {heads}), "axis", int64_t{2});
    }
    if (name != "q" && c.kv != BmmCase::kHeads) m.Output(heads, DataType::kFloat, {b, n, -1, d});
    m.Node("Reshape", {heads, shape("flat")}, {name + "_flat"});
  }
  SetAttr(m.Node("Transpose", {"k_flat"}, {"kt"}), "perm", std::vector<int64_t>{0, 2, 1});
  m.Node("MatMul", {"q_flat", "kt"}, {"scores"});
  std::string logits = "scores";
  if (c.mask) {
    const int64_t t = c.kv == BmmCase::kPast ? past : c.kv == BmmCase::kCache ? past + s : s;
    m.Input("mask", DataType::kFloat, {b, 1, 1, t});
    Tensor mask(DataType::kFloat, {b, 1, 1, t});
    for (int64_t i = 0; i < mask.size(); ++i) mask.mutable_data<float>()[i] = i % 4 == 3 ? -1e9f : 0.0f;
    inputs->push_back({"mask", mask});
    m.Node("Reshape", {"scores", shape("scores4")}, {"s4"});
    m.Node("Add", {"s4", "mask"}, {"masked"});
    m.Node("Reshape", {"masked", shape("scores3")}, {"s3"});
    logits = "s3";
  }
  SetAttr(m.Node("Softmax", {logits}, {"probs"}), "axis", int64_t{-1});
  m.Node("MatMul", {"probs", "v_flat"}, {"ctx3"});
  m.Node("Reshape", {"ctx3", shape("ctx4")}, {"ctx"});
  SetAttr(m.Node("Transpose", {"ctx"}, {"ctx_t"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.Node("Reshape", {"ctx_t", "hidden"}, {"y"});
  m.Output("y", DataType::kFloat, {b, s, n * d});
  if (c.src_len_output) m.Output("src_u", DataType::kInt64, {1});
  return m.Serialize();
}

// With and without the mask, sizes as numbers or read at run time: one FusedAttention reading the
// (B, S, N, D) heads, the q scaling in its scale (Q's Reshape now reads q itself), the output
// Reshape kept (and with dynamic sizes the shape arithmetic the heads Reshapes read).
TEST(AttentionFusion, BmmFormFuses) {
  for (const bool dynamic : {false, true}) {
    for (const bool mask : {true, false}) {
      SCOPED_TRACE(std::string(mask ? "mask" : "no mask") + (dynamic ? ", dynamic" : ""));
      BmmCase c;
      c.mask = mask;
      c.dynamic = dynamic;
      std::vector<NamedValue> inputs;
      const auto ops = OpsWithSameOutputs(BmmModel(c, &inputs), inputs);
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "FusedAttention"), 1);
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "Reshape"), 4);
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "MatMul") + std::count(ops.begin(), ops.end(), "Softmax") +
                    std::count(ops.begin(), ops.end(), "Transpose"),
                0);
    }
  }
}

// An export with dynamic axes: src_len read off the flattened keys' shape (its Shape, Gather and
// Unsqueeze go with the pattern), and a decoder's keys and values: the heads also present outputs
// (read in place), a cache Concat(past, new) or the past inputs flattened as they are (read through a
// (B, N, -1, D) view of the same bytes: Reshape, Shape, Gather and Concat added for K and V each).
TEST(AttentionFusion, BmmFormOfDecodersFuses) {
  for (const auto kv : {BmmCase::kHeads, BmmCase::kPresent, BmmCase::kCache, BmmCase::kPast}) {
    for (const bool mask : {true, false}) {
      SCOPED_TRACE(std::to_string(kv) + (mask ? " mask" : " no mask"));
      BmmCase c;
      c.dynamic = c.src_len_of_k = true;
      c.mask = mask;
      c.kv = kv;
      std::vector<NamedValue> inputs;
      const auto ops = OpsWithSameOutputs(BmmModel(c, &inputs), inputs);
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "FusedAttention"), 1);
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "MatMul") + std::count(ops.begin(), ops.end(), "Softmax"), 0);
      const bool views = kv == BmmCase::kCache || kv == BmmCase::kPast;
      // Q's (and K's and V's) Reshape into heads and the output's, plus a view each of K and V.
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "Reshape"), (kv == BmmCase::kPast ? 2 : 4) + (views ? 2 : 0));
      // Only what the remaining Reshapes read: no Shape of a flattened value.
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "Shape"), views ? 3 : 1);
      // The present heads: their Transposes stay, as graph outputs.
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "Transpose"), kv == BmmCase::kHeads || kv == BmmCase::kPast ? 0 : 2);
    }
  }
}

// q's heads Reshape [0, -1, N, D] (ONNX Runtime's saved form): B is q's dimension 0, the one the
// rows bsz * N read, through q * scaling; not through a product with a graph input.
TEST(AttentionFusion, BmmFormWithACopiedBatchEntry) {
  for (const bool scaling_input : {false, true}) {
    BmmCase c;
    c.dynamic = c.src_len_of_k = c.q_heads_zero = true;
    c.scaling_input = scaling_input;
    std::vector<NamedValue> inputs;
    const auto ops = OpsWithSameOutputs(BmmModel(c, &inputs), inputs);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "FusedAttention"), scaling_input ? 0 : 1) << scaling_input;
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), scaling_input ? 1 : 0) << scaling_input;
  }
}

// src_len also read elsewhere (here a graph output): the Shape of the flattened keys cannot go, so
// the pattern stays whole.
TEST(AttentionFusion, BmmFormSrcLenReadElsewhereStays) {
  for (const auto kv : {BmmCase::kHeads, BmmCase::kPast}) {
    BmmCase c;
    c.dynamic = c.src_len_of_k = c.src_len_output = true;
    c.kv = kv;
    std::vector<NamedValue> inputs;
    const auto ops = OpsWithSameOutputs(BmmModel(c, &inputs), inputs);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "FusedAttention"), 0) << kv;
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 1) << kv;
  }
}

// ONNX Runtime's saved form of a static export's projections: q and v with biases as
// Reshape(Gemm(Reshape(x, [-1, K]), W, b), [1, S, H]) (v's without the Reshape after the Gemm, as
// ONNX Runtime joins two Reshapes), k without one as MatMul(x, W); q's heads Reshape [1, S, N, D],
// k's and v's [1, -1, N, D]. `gemm_attr` (when set) is given to q's Gemm,
// which makes it another product than MatMul(x, W) + b.
std::string SavedGemmModel(const std::string& gemm_attr, std::vector<NamedValue>* inputs) {
  tools::ModelBuilder m(17);
  const int64_t s = 5, n = 2, d = 4, h = n * d;
  m.Input("x", DataType::kFloat, {1, s, h});
  inputs->push_back({"x", Random({1, s, h}, 1)});
  m.Initializer("rows", Tensor::FromVector<int64_t>({2}, {-1, h}));
  m.Initializer("unflat", Tensor::FromVector<int64_t>({3}, {1, s, h}));
  m.Initializer("q_heads", Tensor::FromVector<int64_t>({4}, {1, s, n, d}));
  m.Initializer("kv_heads", Tensor::FromVector<int64_t>({4}, {1, -1, n, d}));
  m.Initializer("scale", Tensor::Scalar<float>(0.5f));
  for (const auto& [name, seed] : std::vector<std::pair<std::string, uint32_t>>{{"q", 2}, {"k", 3}, {"v", 4}}) {
    m.Initializer(name + "_w", Random({h, h}, seed));
    std::string p = name + "_p";
    if (name == "k") {
      m.Node("MatMul", {"x", "k_w"}, {p});
    } else {
      m.Initializer(name + "_b", Random({h}, seed + 10));
      m.Node("Reshape", {"x", "rows"}, {name + "_x2"});
      onnx::NodeProto& gemm = m.Node("Gemm", {name + "_x2", name + "_w", name + "_b"}, {name + "_g"});
      if (name == "q" && gemm_attr == "alpha") SetAttr(gemm, "alpha", 0.5f);
      if (name == "q" && gemm_attr == "transB") SetAttr(gemm, "transB", int64_t{1});
      if (name == "q") {
        m.Node("Reshape", {name + "_g", "unflat"}, {p});
      } else {
        p = name + "_g";  // the heads Reshape reads the Gemm itself (ONNX Runtime joins the two)
      }
    }
    m.Node("Reshape", {p, name == "q" ? "q_heads" : "kv_heads"}, {name + "_r"});
    SetAttr(m.Node("Transpose", {name + "_r"}, {name + "_t"}), "perm",
            name == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
  }
  m.Node("MatMul", {"q_t", "k_t"}, {"scores"});
  m.Node("Mul", {"scores", "scale"}, {"scaled"});
  SetAttr(m.Node("Softmax", {"scaled"}, {"probs"}), "axis", int64_t{-1});
  m.Node("MatMul", {"probs", "v_t"}, {"ctx"});
  SetAttr(m.Node("Transpose", {"ctx"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.Output("y", DataType::kFloat, {1, s, n, d});
  return m.Serialize();
}

// The three merge into one product of the flattened rows ([Wq | Wk | Wv], k's bias zeros) read
// packed; a Gemm that is not MatMul + bias (alpha 0.5, or B transposed) keeps them apart.
TEST(AttentionFusion, SavedGemmProjectionsMerge) {
  for (const std::string attr : {"", "alpha", "transB"}) {
    SCOPED_TRACE(attr);
    std::vector<NamedValue> inputs;
    const auto ops = OpsWithSameOutputs(SavedGemmModel(attr, &inputs), inputs);
    const auto products = std::count(ops.begin(), ops.end(), "Gemm") + std::count(ops.begin(), ops.end(), "MatMul") +
                          std::count(ops.begin(), ops.end(), "FusedMatMul") +
                          std::count(ops.begin(), ops.end(), "FusedGemm");
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "FusedAttention"), 1);
    EXPECT_EQ(products, attr.empty() ? 1 : 3);
  }
}

// Flattened rows that are not B * N (3 of B = 2 by N = 3: two heads' rows in one product; or at run
// time tgt_len * N), or B unknown at load: nothing proves the flattening, so the bmm form stays.
TEST(AttentionFusion, BmmFormNearMissesStay) {
  for (int variant = 0; variant < 5; ++variant) {
    BmmCase c;
    c.mask = false;
    if (variant == 0) c.rows = 3;
    if (variant == 1) c.batch_constant = false;
    if (variant == 2) c.dynamic = c.rows_of_tgt_len = true;
    if (variant >= 3) {  // rows tgt_len * N over a cache or past input, B * N in this run alone
      c.dynamic = c.rows_of_tgt_len = true;
      c.seq = 2;
      c.kv = variant == 3 ? BmmCase::kCache : BmmCase::kPast;
    }
    std::vector<NamedValue> inputs;
    const auto ops = OpsWithSameOutputs(BmmModel(c, &inputs), inputs);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "FusedAttention"), 0) << variant;
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 1) << variant;
  }
}

// kCdfTimesX: x * (0.5 * (1 + erf(x / sqrt 2))), BERT's gelu as cdf * x.
enum class GeluForm { kHalfLast, kHalfFirst, kMulBySqrtHalf, kCdfTimesX };

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
  } else if (form == GeluForm::kCdfTimesX) {
    m.Node("Mul", swapped ? std::vector<std::string>{"a", "half"} : std::vector<std::string>{"half", "a"}, {"cdf"});
    m.Node("Mul", swapped ? std::vector<std::string>{"cdf", "h"} : std::vector<std::string>{"h", "cdf"}, {"y"});
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

// kRsqrtAsDiv: x * Div(1, rs), torch's rsqrt (T5's and LLaMA's hidden * torch.rsqrt(var + eps)).
enum class RmsForm { kDivPow, kReciprocalMulSquare, kReciprocalFirst, kRsqrtAsDiv };

struct RmsCase {
  RmsForm form = RmsForm::kDivPow;
  bool residual = false;    // the normalized value is Add(a, b), the residual stream
  bool x_read = false;      // x also read elsewhere
  int64_t mean_axis = -1;
  int64_t weight_size = 8;  // 1: a scalar weight, which broadcasts, stays
  float numerator = 1.0f;   // kRsqrtAsDiv's Div(numerator, rs): only 1 is a reciprocal
};

std::string RmsModel(const RmsCase& c, std::vector<NamedValue>* inputs) {
  tools::ModelBuilder m(17);
  m.Input("a", DataType::kFloat, {2, 3, 8});
  m.Input("b", DataType::kFloat, {2, 3, 8});
  m.Initializer("weight", Random({c.weight_size}, 31, 0.5f, 1.5f));
  m.Initializer("two", Tensor::Scalar<float>(2.0f));
  m.Initializer("eps", Tensor::Scalar<float>(1e-5f));
  m.Initializer("numerator", Tensor::Scalar<float>(c.numerator));
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
  } else if (c.form == RmsForm::kRsqrtAsDiv) {
    m.Node("Div", {"numerator", "rs"}, {"inv"});
    m.Node("Mul", {x, "inv"}, {"n"});
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
  for (RmsForm form :
       {RmsForm::kDivPow, RmsForm::kReciprocalMulSquare, RmsForm::kReciprocalFirst, RmsForm::kRsqrtAsDiv}) {
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

// The mean over another axis, a scalar weight, or Div(2, rs): no SimplifiedLayerNormalization.
TEST(RmsNormFusion, NearMissesStay) {
  for (int variant = 0; variant < 3; ++variant) {
    RmsCase c;
    if (variant == 0) c.mean_axis = 1;
    if (variant == 1) c.weight_size = 1;
    if (variant == 2) {
      c.form = RmsForm::kRsqrtAsDiv;
      c.numerator = 2.0f;
    }
    std::vector<NamedValue> inputs;
    const auto ops = OpsWithSameOutputs(RmsModel(c, &inputs), inputs);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "SimplifiedLayerNormalization"), 0) << variant;
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "ReduceMean"), 1) << variant;
  }
}

// The written-out GELU after a linear layer is the layer's epilogue: one FusedMatMul.
TEST(GeluFusion, WrittenOutGeluJoinsTheProduct) {
  for (GeluForm form : {GeluForm::kHalfLast, GeluForm::kHalfFirst, GeluForm::kMulBySqrtHalf, GeluForm::kCdfTimesX}) {
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
  for (GeluForm form : {GeluForm::kHalfLast, GeluForm::kCdfTimesX}) {
    inputs.clear();
    EXPECT_EQ(OpsWithSameOutputs(GeluModel(form, false, false, 0.6f, &inputs), inputs),
              (std::vector<std::string>{"ElementwiseChain", "FusedMatMul"}));
  }
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
