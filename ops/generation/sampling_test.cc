// com.microsoft Sampling against ONNX Runtime 1.30 on the tiny GPT decoder (testdata/sampling from
// tools/gen_models/gen_generation.py: one node per attribute set, one test_data_set per seed, the
// outputs ONNX Runtime's), its random numbers and top-p filter against hand-computed values and
// the standard library, its draws against the distribution they come from, and its refusals.
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "include/onnxflow/session.h"
#include "ops/framework/case_folder.h"
#include "ops/framework/node_attributes.h"
#include "ops/generation/logits.h"
#include "ops/generation/top_p_sampler.h"
#include "proto/onnx.pb.h"

namespace onnxflow {
namespace {

using generation::DrawToken;
using generation::FilterTopP;
using generation::Minstd0;
using generation::TopPChooser;
using generation::TopPParams;

const char kDir[] = "ops/generation/testdata/sampling";
constexpr int kSets = 4;  // seeds 5, 123, 0, 2^31 - 1
constexpr int kPad = 0;
const char* const kNodes[] = {"top_p",  "hot",    "cold_keep",        "filter_value", "processors",
                              "presence", "custom", "zero_temperature", "init",         "no_seed"};

// Test data set `set` (inputs and ONNX Runtime's outputs), read once.
const CaseFolder& Set(int set) {
  static std::map<int, CaseFolder> sets;
  if (!sets.count(set)) sets.emplace(set, LoadCaseFolder(kDir, set));
  return sets.at(set);
}

onnx::ModelProto Model() { return Set(0).model; }
std::vector<NamedValue> Inputs(int set) { return Set(set).inputs; }

// ONNX Runtime's `<node>_sequences` of a set.
Tensor Expected(int set, const std::string& node) { return ExpectedOutput(Set(set), node + "_sequences"); }

// onnxflow's `<node>_sequences` of a set; the model runs once per set.
Tensor Actual(int set, const std::string& node) {
  static std::map<int, std::vector<NamedValue>> runs;
  if (!runs.count(set)) {
    auto out = RunCase(Set(set));
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    runs[set] = out.ok() ? *out : std::vector<NamedValue>{};
  }
  const Value* v = FindValue(runs[set], node + "_sequences");
  return v != nullptr && v->is_tensor() ? v->tensor() : Tensor();
}

// Exactly, token for token. When every row ended before max_length, ONNX Runtime leaves the
// columns after its last step unwritten (onnxflow pads them): the columns after the first one
// that is pad in every row of both are not compared.
void ExpectSameTokens(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  const int64_t width = want.shape().back(), rows = want.size() / width;
  int64_t compared = width;
  for (int64_t j = 1; j < width && compared == width; ++j) {
    bool all_pad = true;
    for (int64_t r = 0; r < rows; ++r) {
      all_pad &= want.data<int32_t>()[r * width + j] == kPad && got.data<int32_t>()[r * width + j] == kPad;
    }
    if (all_pad) compared = j + 1;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < compared; ++j) {
      EXPECT_EQ(want.data<int32_t>()[r * width + j], got.data<int32_t>()[r * width + j])
          << what << " row " << r << " column " << j;
    }
  }
}

void ExpectNodeMatches(const std::string& node) {
  for (int set = 0; set < kSets; ++set) {
    ExpectSameTokens(Expected(set, node), Actual(set, node), node + " set " + std::to_string(set));
  }
}

// ---- against ONNX Runtime: every node under every seed, tokens exact ----

TEST(Sampling, TopPMatchesOnnxRuntime) { ExpectNodeMatches("top_p"); }
TEST(Sampling, HighTemperatureMatchesOnnxRuntime) { ExpectNodeMatches("hot"); }
TEST(Sampling, LowTemperatureMinTokensToKeepMatchesOnnxRuntime) { ExpectNodeMatches("cold_keep"); }
TEST(Sampling, FiniteFilterValueMatchesOnnxRuntime) { ExpectNodeMatches("filter_value"); }
TEST(Sampling, ScoreRulesMinLengthMasksBatch3MatchOnnxRuntime) { ExpectNodeMatches("processors"); }
TEST(Sampling, PresencePenaltyMatchesOnnxRuntime) { ExpectNodeMatches("presence"); }
TEST(Sampling, CustomMatchesOnnxRuntime) { ExpectNodeMatches("custom"); }
TEST(Sampling, AbsentSeedMatchesOnnxRuntime) { ExpectNodeMatches("no_seed"); }
TEST(Sampling, InitDecoderMatchesOnnxRuntime) { ExpectNodeMatches("init"); }

onnx::NodeProto* FindNode(onnx::ModelProto& m, const std::string& name) {
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

// A temperature of 0 scales nothing (ONNX Runtime adds its processor above 0 only): the node draws
// as top_p's, which has the same inputs, in ONNX Runtime and here.
TEST(Sampling, ZeroTemperatureMatchesOnnxRuntime) {
  ExpectNodeMatches("zero_temperature");
  for (int set = 0; set < kSets; ++set) {
    ExpectSameTokens(Expected(set, "top_p"), Expected(set, "zero_temperature"), "ONNX Runtime set " + std::to_string(set));
    ExpectSameTokens(Actual(set, "top_p"), Actual(set, "zero_temperature"), "onnxflow set " + std::to_string(set));
  }
}

// The init_decoder (logits times 3) runs the first step: without it the tokens differ from ONNX
// Runtime's in some set.
TEST(Sampling, InitDecoderRunsTheFirstStep) {
  onnx::ModelProto m = Model();
  RemoveAttribute(*FindNode(m, "init"), "init_decoder");
  bool differ = false;
  for (int set = 0; set < kSets; ++set) {
    auto out = RunCase(m, Inputs(set));
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& got = FindValue(*out, "init_sequences")->tensor();
    const Tensor want = Expected(set, "init");
    differ |= !std::equal(got.data<int32_t>(), got.data<int32_t>() + got.size(), want.data<int32_t>());
  }
  EXPECT_TRUE(differ);
}

// Seed 0, seed 2^31 - 1 and no seed all draw as seed 1 (minstd_rand0 maps a seed of 0 modulo
// 2^31 - 1 to 1): ONNX Runtime's outputs say so, and onnxflow's agree; other seeds differ.
TEST(Sampling, SeedZeroMaxAndAbsentDrawAlike) {
  for (const char* node : kNodes) {
    ExpectSameTokens(Expected(2, node), Expected(3, node), std::string("ONNX Runtime ") + node);
    ExpectSameTokens(Actual(2, node), Actual(3, node), std::string("onnxflow ") + node);
  }
  for (int set = 0; set < kSets; ++set) ExpectSameTokens(Actual(2, "top_p"), Actual(set, "no_seed"), "no_seed");
  bool differ = false;
  for (const char* node : kNodes) {
    const Tensor a = Actual(0, node), b = Actual(1, node);
    differ |= !std::equal(a.data<int32_t>(), a.data<int32_t>() + a.size(), b.data<int32_t>());
  }
  EXPECT_TRUE(differ) << "seeds 5 and 123 gave the same tokens everywhere";
}

// Each run starts its engine afresh from the seed: two runs of one session give the same tokens.
TEST(Sampling, RunsOfOneSessionRepeat) {
  auto session = Session::LoadFromBytes(Model().SerializeAsString());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const auto inputs = Inputs(1);
  auto first = session->Run(inputs), second = session->Run(inputs);
  ASSERT_TRUE(first.ok() && second.ok());
  for (const char* node : kNodes) {
    const std::string name = std::string(node) + "_sequences";
    ExpectSameTokens(FindValue(*first, name)->tensor(), FindValue(*second, name)->tensor(), name);
  }
}

// ---- the random numbers ----

TEST(SamplingEngine, MatchesMinstdRand0) {
  for (uint32_t seed : {0u, 1u, 5u, 123u, 2147483647u, 2147483648u, 4294967295u}) {
    Minstd0 ours(seed);
    std::minstd_rand0 theirs(seed);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(ours.Next(), theirs()) << "seed " << seed << " draw " << i;
  }
}

TEST(SamplingEngine, UniformIsTwoDrawsLowPartFirst) {
  // Seed 1: draws 16807 and 16807^2 mod (2^31 - 1) = 282475249.
  const double r = 2147483646.0;
  Minstd0 engine(1);
  EXPECT_EQ(engine.Uniform(), (16806.0 + 282475248.0 * r) / (r * r));
}

#if defined(__GLIBCXX__)
// libstdc++'s uniform_real_distribution<double> over its default_random_engine is what ONNX
// Runtime's Linux build draws with.
TEST(SamplingEngine, MatchesLibstdcxxUniformRealDistribution) {
  for (uint32_t seed : {0u, 5u, 123u}) {
    Minstd0 ours(seed);
    std::default_random_engine engine(seed);
    std::uniform_real_distribution<double> dist(0.0, 1.0);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(ours.Uniform(), dist(engine)) << "seed " << seed << " draw " << i;
  }
}
#endif

// ---- the top-p filter and the draw, by hand ----

std::vector<float> LogRow(const std::vector<float>& probs) {
  std::vector<float> row;
  for (float p : probs) row.push_back(std::log(p));
  return row;
}

// Which tokens keep their score (the others hold filter_value).
std::vector<int> Kept(const TopPParams& params, std::vector<float> row) {
  std::vector<float> probs;
  std::vector<int32_t> order;
  const std::vector<float> before = row;
  FilterTopP(params, row.data(), static_cast<int>(row.size()), &probs, &order);
  std::vector<int> kept;
  for (size_t j = 0; j < row.size(); ++j) {
    if (row[j] == before[j]) {
      kept.push_back(static_cast<int>(j));
    } else {
      EXPECT_EQ(row[j], params.filter_value) << "token " << j;
    }
  }
  return kept;
}

TEST(SamplingFilter, AscendingDropsTheTailOfAtMostOneMinusTopP) {
  // Probabilities 0.2, 0.1, 0.4, 0.3 (token order); ascending running sums 0.1, 0.3, 0.6, 1.0.
  const std::vector<float> row = LogRow({0.2f, 0.1f, 0.4f, 0.3f});
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Kept({0.65f, -inf, 0, false}, row), (std::vector<int>{2, 3}));     // 0.1, 0.3 <= 0.35
  EXPECT_EQ(Kept({0.8f, -inf, 0, false}, row), (std::vector<int>{0, 2, 3}));   // 0.1 <= 0.2
  EXPECT_EQ(Kept({0.05f, -inf, 0, false}, row), (std::vector<int>{2}));        // 0.1, 0.3, 0.6 <= 0.95
  EXPECT_EQ(Kept({0.05f, -inf, 2, false}, row), (std::vector<int>{2, 3}));     // the 2 largest stay
  EXPECT_EQ(Kept({0.05f, -inf, 4, false}, row), (std::vector<int>{0, 2, 3}));  // the smallest is always tested
  EXPECT_EQ(Kept({1.5f, -inf, 0, false}, row), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(Kept({0.65f, -7.0f, 0, false}, row), (std::vector<int>{2, 3}));    // filter_value -7
}

TEST(SamplingFilter, CustomDropsAfterTheRunningSumPassesTopP) {
  // Descending 0.4, 0.3, 0.2, 0.1; running sums 0.4, 0.7, 0.9: past top_p, the next token goes.
  const std::vector<float> row = LogRow({0.2f, 0.1f, 0.4f, 0.3f});
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Kept({0.35f, -inf, 0, true}, row), (std::vector<int>{2}));
  EXPECT_EQ(Kept({0.5f, -inf, 0, true}, row), (std::vector<int>{2, 3}));
  EXPECT_EQ(Kept({0.8f, -inf, 0, true}, row), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(Kept({0.95f, -inf, 3, true}, row), (std::vector<int>{0, 1, 2, 3}));  // min_tokens_to_keep unused
}

TEST(SamplingDraw, FirstCdfEntryAboveUTimesTheSum) {
  // Weights 1, 1, 0 (-inf: skipped), 0 (the lowest float: exp underflows), 1; cdf 1, 2, 2, 2, 3.
  const float inf = std::numeric_limits<float>::infinity(), lowest = std::numeric_limits<float>::lowest();
  const std::vector<float> row = {0.0f, 0.0f, -inf, lowest, 0.0f};
  std::vector<double> cdf;
  EXPECT_EQ(DrawToken(row.data(), 5, 0.0, &cdf), 0);
  EXPECT_EQ(DrawToken(row.data(), 5, 0.2, &cdf), 0);
  EXPECT_EQ(DrawToken(row.data(), 5, 1.0 / 3, &cdf), 1);  // u * sum = 1: the first entry above it
  EXPECT_EQ(DrawToken(row.data(), 5, 0.5, &cdf), 1);
  EXPECT_EQ(DrawToken(row.data(), 5, 0.7, &cdf), 4);
  EXPECT_EQ(DrawToken(row.data(), 5, 0.9999, &cdf), 4);
  EXPECT_EQ(cdf, (std::vector<double>{1, 2, 2, 2, 3}));
  const std::vector<float> none = {-inf, -inf};
  EXPECT_EQ(DrawToken(none.data(), 2, 0.5, &cdf), 2);  // past the vocabulary, as ONNX Runtime
}

// Many draws of one row: tokens outside the top-p set never come, the others at their
// renormalized probabilities (each within 5 standard deviations of its expected count).
TEST(SamplingDraw, FrequenciesFollowTheTopPDistribution) {
  const std::vector<float> logits = {1.0f, 0.2f, -0.5f, 2.0f, 0.9f, -3.0f};
  TopPParams params{0.8f, -std::numeric_limits<float>::infinity(), 0, false};
  std::vector<double> p(logits.size());
  double sum = 0;
  for (size_t j = 0; j < p.size(); ++j) sum += p[j] = std::exp(logits[j]);
  for (double& x : p) x /= sum;  // 0.188, 0.085, 0.042, 0.512, 0.170, 0.003 (rounded)
  // Ascending sums: 0.003, 0.046, 0.130 (<= 0.2: tokens 5, 2, 1 filtered), then 0.300: 4, 0, 3 stay.
  const double kept = p[0] + p[3] + p[4];
  constexpr int kDraws = 20000;
  std::vector<int> counts(logits.size(), 0);
  TopPChooser chooser(params, 7);
  std::vector<int32_t> tokens(1);
  for (int i = 0; i < kDraws; ++i) {
    std::vector<float> row = logits;
    ASSERT_TRUE(chooser.Choose(row.data(), 1, static_cast<int>(row.size()), &tokens).ok());
    ++counts[tokens[0]];
  }
  for (int j : {1, 2, 5}) EXPECT_EQ(counts[j], 0) << "token " << j;
  for (int j : {0, 3, 4}) {
    const double q = p[j] / kept, mean = kDraws * q, sd = std::sqrt(kDraws * q * (1 - q));
    EXPECT_NEAR(counts[j], mean, 5 * sd) << "token " << j;
  }
}

TEST(SamplingDraw, NanScoresAreRefused) {
  TopPChooser chooser({0.9f, -std::numeric_limits<float>::infinity(), 0, false}, 1);
  std::vector<float> row = {0.0f, std::nanf(""), 1.0f};
  std::vector<int32_t> tokens(1);
  const Status s = chooser.Choose(row.data(), 1, 3, &tokens);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot sample"), std::string::npos) << s.ToString();
}

// ONNX Runtime 1.30's presence penalty: mask times penalty, every entry, off the first score only.
TEST(SamplingScoreRules, PresencePenaltyMovesTheFirstScoreOnly) {
  generation::Sequences sequences(2, 4, 1, {1, 2});
  const std::vector<int32_t> mask = {1, 0, 2, 0, 1, 1};  // [2, 3]
  generation::ScoreRules rules;
  rules.batch_size = 2;
  rules.presence_mask = mask.data();
  rules.presence_penalty = 0.5f;
  std::vector<float> scores = {1, 2, 3, 4, 5, 6};
  generation::ApplyScoreRules(rules, sequences, 1, 3, scores.data());
  EXPECT_EQ(scores, (std::vector<float>{1 - 2.5f, 2, 3, 4, 5, 6}));
}

// ---- refusals: a Status naming node, op and what is wrong ----

void SetInput(std::vector<NamedValue>& inputs, const std::string& name, Tensor t) {
  for (auto& in : inputs) {
    if (in.name == name) in.value = std::move(t);
  }
}

void ExpectRefused(const onnx::ModelProto& model, const std::vector<NamedValue>& inputs,
                   const std::vector<std::string>& words) {
  auto out = RunCase(model, inputs);
  ASSERT_FALSE(out.ok());
  std::printf("refused: %s\n", out.status().ToString().c_str());
  for (const auto& w : words) EXPECT_NE(out.status().message().find(w), std::string::npos) << out.status().ToString();
}

TEST(SamplingRefusals, FilteredLogitsOutput) {
  onnx::ModelProto m = Model();
  FindNode(m, "top_p")->add_output("top_p_filtered_logits");
  ExpectRefused(m, Inputs(0), {"top_p", "Sampling", "filtered_logits"});
}

TEST(SamplingRefusals, DefaultTopPOfZero) {
  onnx::ModelProto m = Model();
  RemoveAttribute(*FindNode(m, "hot"), "top_p");
  ExpectRefused(m, Inputs(0), {"hot", "Sampling", "top_p"});
}

TEST(SamplingRefusals, MinTokensToKeepAboveVocabulary) {
  onnx::ModelProto m = Model();
  SetAttribute(*FindNode(m, "cold_keep"), "min_tokens_to_keep", int64_t{51});
  ExpectRefused(m, Inputs(0), {"cold_keep", "Sampling", "min_tokens_to_keep"});
  SetAttribute(*FindNode(m, "cold_keep"), "min_tokens_to_keep", int64_t{-1});
  ExpectRefused(m, Inputs(0), {"cold_keep", "min_tokens_to_keep"});
}

TEST(SamplingRefusals, CustomNotZeroOrOne) {
  onnx::ModelProto m = Model();
  SetAttribute(*FindNode(m, "custom"), "custom", int64_t{2});
  ExpectRefused(m, Inputs(0), {"custom", "Sampling", "'custom'"});
}

TEST(SamplingRefusals, EncoderDecoderModelType) {
  onnx::ModelProto m = Model();
  SetAttribute(*FindNode(m, "top_p"), "model_type", int64_t{1});
  ExpectRefused(m, Inputs(0), {"top_p", "Sampling", "model_type"});
}

TEST(SamplingRefusals, NegativeSeed) {
  std::vector<NamedValue> inputs = Inputs(0);
  SetInput(inputs, "custom_seed", Tensor::FromVector<int32_t>({1}, {-3}));
  ExpectRefused(Model(), inputs, {"custom", "Sampling", "seed"});
}

TEST(SamplingRefusals, SeedOfWrongType) {
  onnx::ModelProto m = Model();
  for (auto& in : *m.mutable_graph()->mutable_input()) {
    if (in.name() == "hot_seed") in.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  std::vector<NamedValue> inputs = Inputs(0);
  SetInput(inputs, "hot_seed", Tensor::FromVector<float>({1}, {5.0f}));
  ExpectRefused(m, inputs, {"hot", "Sampling", "seed"});
}

TEST(SamplingRefusals, PresenceMaskOfWrongShape) {
  onnx::ModelProto m = Model();
  for (auto& in : *m.mutable_graph()->mutable_input()) {  // declared as given: the node is what refuses
    if (in.name() == "presence_presence_mask") in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(49);
  }
  std::vector<NamedValue> inputs = Inputs(0);
  SetInput(inputs, "presence_presence_mask", Tensor::FromVector<int32_t>({2, 49}, std::vector<int32_t>(98, 1)));
  ExpectRefused(m, inputs, {"presence", "Sampling", "presence_mask", "[2, 50]"});
}

// GreedySearch's and Sampling's bound is ONNX Runtime's 16384 (BeamSearch's 4096). 5000 passes it
// (the tiny decoder then runs out of its 32 positions, as in ONNX Runtime: a decoder error).
TEST(SamplingRefusals, MaxLengthAbove16384) {
  std::vector<NamedValue> inputs = Inputs(0);
  SetInput(inputs, "top_p_max_length", Tensor::FromVector<int32_t>({1}, {16385}));
  ExpectRefused(Model(), inputs, {"top_p", "Sampling", "max_length", "at most 16384"});
  SetInput(inputs, "top_p_max_length", Tensor::FromVector<int32_t>({1}, {5000}));
  auto out = RunCase(Model(), inputs);
  if (!out.ok()) {
    EXPECT_EQ(out.status().message().find("max_length"), std::string::npos) << out.status().ToString();
  }
}

TEST(SamplingRefusals, TooManyInputs) {
  onnx::ModelProto m = Model();
  FindNode(m, "top_p")->add_input("top_p_seed");
  ExpectRefused(m, Inputs(0), {"top_p", "Sampling", "at most 9 inputs"});
}

}  // namespace
}  // namespace onnxflow
