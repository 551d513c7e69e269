// A tiny GPT-2-shaped decoder with a key-value cache, in the form tools/gen_models/gen_decoder.py
// writes at full size (the cache Concat(past, new heads) read by MatMul/Div/Add(mask)/Softmax/MatMul,
// the causal mask built from the shapes), kept in CI:
// - decoding token by token through the cache gives the logits and cache the prefill of the whole
//   sequence gives (the step's positions, mask offsets and cache layout all have to agree for that);
// - the optimized step runs its attention as FusedAttention reading the cache in place, and matches
//   the unoptimized run.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using tools::SetAttr;

constexpr int64_t kLayers = 2, kHidden = 32, kHeads = 4, kHead = 8, kFfn = 64, kVocab = 16, kPositions = 16;

Tensor Random(const Shape& shape, uint32_t seed, float scale) {
  Tensor t(DataType::kFloat, shape);
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.mutable_data<float>()[i] = scale * (2.0f * static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 1.0f);
  }
  return t;
}

Tensor Ints(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v); }

std::string PastName(int layer, const char* kind) { return "past_key_values." + std::to_string(layer) + "." + kind; }
std::string PresentName(int layer, const char* kind) { return "present." + std::to_string(layer) + "." + kind; }

// causal_where: the mask as transformers' GPT-2 applies it, Where(causal, scaled scores, lowest) and
// then the padding mask added; else one additive mask, causal and padding joined.
class Gpt2Builder {
 public:
  explicit Gpt2Builder(bool causal_where = false) : causal_where_(causal_where) {}

  std::string Build() {
    for (const char* n : {"input_ids", "attention_mask"}) m_.Input(n, DataType::kInt64, {1, -1});
    for (int l = 0; l < kLayers; ++l) {
      for (const char* kind : {"key", "value"}) m_.Input(PastName(l, kind), DataType::kFloat, {1, kHeads, -1, kHead});
    }
    // Positions P .. P+S-1 and the additive causal mask, from the shapes (P: the cache's length).
    const std::string past = Op("Gather", {Op("Shape", {PastName(0, "key")}), Const(Ints({2}))});
    const std::string total = Op("Add", {past, Op("Gather", {Op("Shape", {"input_ids"}), Const(Ints({1}))})});
    const std::string p = Op("Squeeze", {past, Const(Ints({0}))}), t = Op("Squeeze", {total, Const(Ints({0}))});
    const std::string one = Const(Tensor::Scalar<int64_t>(1));
    const std::string positions = Op("Range", {p, t, one});
    std::string x = Op("Add", {Op("Gather", {Weight({kVocab, kHidden}, 0.5f), "input_ids"}),
                               Op("Gather", {Weight({kPositions, kHidden}, 0.1f), Op("Unsqueeze", {positions, Const(Ints({0}))})})});
    const std::string causal = Op("LessOrEqual", {Op("Range", {Const(Tensor::Scalar<int64_t>(0)), t, one}),
                                                  Op("Unsqueeze", {positions, Const(Ints({1}))})});
    auto& keep = m_.Node("Cast", {Op("Unsqueeze", {"attention_mask", Const(Ints({1, 2}))})}, {Name("keep")});
    SetAttr(keep, "to", int64_t{static_cast<int64_t>(onnx::TensorProto::BOOL)});
    const std::string lowest = Const(Tensor::Scalar<float>(std::numeric_limits<float>::lowest()));
    const std::string mask =
        causal_where_ ? Op("Where", {keep.output(0), Const(Tensor::Scalar<float>(0.0f)), lowest})
                      : Op("Where", {Op("And", {causal, keep.output(0)}), Const(Tensor::Scalar<float>(0.0f)), lowest});
    const std::string heads = Const(Ints({0, 0, kHeads, kHead})), merge = Const(Ints({0, 0, kHidden}));
    for (int l = 0; l < kLayers; ++l) {
      const std::string qkv = Linear(Norm(x), kHidden, 3 * kHidden);
      std::vector<std::string> parts = {Name("q"), Name("k"), Name("v")};
      SetAttr(m_.Node("Split", {qkv, Const(Ints({kHidden, kHidden, kHidden}))}, parts), "axis", int64_t{2});
      for (std::string& part : parts) part = Transpose(Op("Reshape", {part, heads}), {0, 2, 1, 3});
      const std::string pk = PresentName(l, "key"), pv = PresentName(l, "value");
      SetAttr(m_.Node("Concat", {PastName(l, "key"), parts[1]}, {pk}), "axis", int64_t{-2});
      SetAttr(m_.Node("Concat", {PastName(l, "value"), parts[2]}, {pv}), "axis", int64_t{-2});
      std::string s = Op("MatMul", {parts[0], Transpose(pk, {0, 1, 3, 2})});
      s = Op("Div", {s, Const(Tensor::Scalar<float>(std::sqrt(static_cast<float>(kHead))))});
      if (causal_where_) s = Op("Where", {causal, s, lowest});
      s = Op("Add", {s, mask});
      auto& softmax = m_.Node("Softmax", {s}, {Name("probs")});
      SetAttr(softmax, "axis", int64_t{-1});
      const std::string ctx = Op("Reshape", {Transpose(Op("MatMul", {softmax.output(0), pv}), {0, 2, 1, 3}), merge});
      x = Op("Add", {x, Linear(ctx, kHidden, kHidden)});
      const std::string h = Linear(Norm(x), kHidden, kFfn);
      // GELU, tanh form: 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))).
      const std::string cube = Op("Mul", {Op("Pow", {h, Const(Tensor::Scalar<float>(3.0f))}), Const(Tensor::Scalar<float>(0.044715f))});
      const std::string th = Op("Tanh", {Op("Mul", {Op("Add", {h, cube}), Const(Tensor::Scalar<float>(0.7978845608f))})});
      const std::string g = Op("Mul", {Op("Mul", {h, Const(Tensor::Scalar<float>(0.5f))}),
                                       Op("Add", {th, Const(Tensor::Scalar<float>(1.0f))})});
      x = Op("Add", {x, Linear(g, kFfn, kHidden)});
    }
    m_.Node("MatMul", {Norm(x), Weight({kHidden, kVocab}, 0.3f)}, {"logits"});
    m_.Output("logits", DataType::kFloat, {1, -1, kVocab});
    for (int l = 0; l < kLayers; ++l) {
      for (const char* kind : {"key", "value"}) m_.Output(PresentName(l, kind), DataType::kFloat, {1, kHeads, -1, kHead});
    }
    return m_.Serialize();
  }

 private:
  std::string Name(const std::string& base) { return base + "_" + std::to_string(count_++); }
  std::string Const(const Tensor& t) {
    const std::string n = Name("c");
    m_.Initializer(n, t);
    return n;
  }
  std::string Weight(const Shape& shape, float scale) { return Const(Random(shape, static_cast<uint32_t>(count_), scale)); }
  std::string Op(const std::string& type, const std::vector<std::string>& in) { return m_.Node(type, in, {Name(type)}).output(0); }
  std::string Transpose(const std::string& x, std::vector<int64_t> perm) {
    auto& n = m_.Node("Transpose", {x}, {Name("t")});
    SetAttr(n, "perm", perm);
    return n.output(0);
  }
  std::string Linear(const std::string& x, int64_t in, int64_t out) {
    return Op("Add", {Op("MatMul", {x, Weight({in, out}, 1.0f / std::sqrt(static_cast<float>(in)))}), Weight({out}, 0.05f)});
  }
  std::string Norm(const std::string& x) {
    auto& n = m_.Node("LayerNormalization", {x, Weight({kHidden}, 1.0f), Weight({kHidden}, 0.1f)}, {Name("ln")});
    SetAttr(n, "axis", int64_t{-1});
    return n.output(0);
  }

  bool causal_where_;
  tools::ModelBuilder m_{17};
  int count_ = 0;
};

struct Step {
  Tensor logits;
  std::vector<Tensor> cache;  // per layer key, value
};

Step Decode(const Session& session, const std::vector<int64_t>& tokens, const std::vector<Tensor>& cache,
         const RunOptions& options = {}) {
  const int64_t s = static_cast<int64_t>(tokens.size());
  const int64_t p = cache.empty() ? 0 : cache[0].dim(2);
  std::vector<NamedValue> in = {{"input_ids", Tensor::FromVector<int64_t>({1, s}, tokens)},
                                {"attention_mask", Tensor::FromVector<int64_t>({1, p + s}, std::vector<int64_t>(p + s, 1))}};
  for (int l = 0; l < kLayers; ++l) {
    for (int kv = 0; kv < 2; ++kv) {
      in.push_back({PastName(l, kv == 0 ? "key" : "value"),
                    cache.empty() ? Tensor(DataType::kFloat, {1, kHeads, 0, kHead}) : cache[2 * l + kv]});
    }
  }
  auto out = session.Run(in, options);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  Step step;
  if (!out.ok()) return step;
  step.logits = (*out)[0].value.tensor();
  for (size_t i = 1; i < out->size(); ++i) step.cache.push_back((*out)[i].value.tensor());
  return step;
}

// Row `row` of (1, S, V) logits.
Tensor Row(const Tensor& logits, int64_t row) {
  const float* d = logits.data<float>() + row * kVocab;
  return Tensor::FromVector<float>({1, 1, kVocab}, std::vector<float>(d, d + kVocab));
}

void ExpectNear(const Tensor& expected, const Tensor& actual, const std::string& what) {
  const Comparison c = CompareValues(Value(expected), Value(actual), 1e-4, 1e-5);
  EXPECT_TRUE(c.match) << what << ": " << c.mismatch;
}

class DecoderTest : public ::testing::TestWithParam<bool> {};

TEST_P(DecoderTest, CachedStepsMatchThePrefill) {
  auto session = Session::LoadFromBytes(Gpt2Builder(GetParam()).Build());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::vector<int64_t> tokens = {3, 14, 1, 5, 9, 2, 6};
  const Step whole = Decode(*session, tokens, {});
  ASSERT_EQ(whole.cache.size(), 2u * kLayers);
  // The first three tokens at once, then one at a time through the cache.
  Step step = Decode(*session, {tokens.begin(), tokens.begin() + 3}, {});
  for (size_t i = 3; i < tokens.size(); ++i) {
    step = Decode(*session, {tokens[i]}, step.cache);
    ASSERT_EQ(step.cache.size(), 2u * kLayers);
    EXPECT_EQ(step.cache[0].dim(2), static_cast<int64_t>(i + 1));
    ExpectNear(Row(whole.logits, static_cast<int64_t>(i)), step.logits, "logits of token " + std::to_string(i));
  }
  for (size_t i = 0; i < whole.cache.size(); ++i) ExpectNear(whole.cache[i], step.cache[i], "cache " + std::to_string(i));
}

TEST_P(DecoderTest, StepRunsFusedAttentionOnTheCache) {
  const std::string bytes = Gpt2Builder(GetParam()).Build();
  SessionOptions plain;
  plain.optimize = false;
  auto fused = Session::LoadFromBytes(bytes);
  auto written = Session::LoadFromBytes(bytes, plain);
  ASSERT_TRUE(fused.ok() && written.ok());
  std::vector<Tensor> cache;
  for (int i = 0; i < 2 * kLayers; ++i) cache.push_back(Random({1, kHeads, 11, kHead}, 100 + i, 1.0f));
  RunProfile profile;
  RunOptions options;
  options.profile = &profile;
  const Step a = Decode(*fused, {7}, cache, options), b = Decode(*written, {7}, cache);
  ExpectNear(b.logits, a.logits, "logits");
  for (size_t i = 0; i < b.cache.size(); ++i) ExpectNear(b.cache[i], a.cache[i], "cache " + std::to_string(i));
  int64_t attention = 0, softmax = 0;
  for (const NodeTiming& t : profile.nodes) {
    attention += t.op_type == "FusedAttention";
    softmax += t.op_type == "Softmax";
  }
  EXPECT_EQ(attention, kLayers);
  EXPECT_EQ(softmax, 0);
}

INSTANTIATE_TEST_SUITE_P(MaskForms, DecoderTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "CausalWhere" : "OneAdditiveMask"; });

}  // namespace
}  // namespace onnxflow
