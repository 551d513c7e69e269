// GreedySearch, BeamSearch and NGramRepeatBlock against ONNX Runtime 1.30 on the seeded tiny models
// of tools/gen_models/gen_generation.py (testdata/: each case is one node of its model with its own
// inputs <case>_*; output_<i>.pb are ONNX Runtime's outputs), and the refusals of malformed nodes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <gtest/gtest.h>

#include "include/onnxflow/session.h"
#include "ops/framework/case_folder.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/tensor_proto.h"
#include "proto/onnx.pb.h"

namespace onnxflow {
namespace {

const char kData[] = "ops/generation/testdata/";

// A folder's model, its inputs and ONNX Runtime's outputs by name.
using Case = CaseFolder;

Case LoadCase(const std::string& name) { return LoadCaseFolder(kData + name); }

// Each model runs once; every case of it reads the outputs.
const std::vector<NamedValue>& Outputs(const std::string& name) {
  static std::map<std::string, std::vector<NamedValue>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    Case c = LoadCase(name);
    auto out = RunCase(c);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    it = cache.emplace(name, out.ok() ? *out : std::vector<NamedValue>{}).first;
  }
  return it->second;
}

Tensor Expected(const std::string& model, const std::string& output) {
  static std::map<std::string, Case> cases;
  if (!cases.count(model)) cases.emplace(model, LoadCase(model));
  return ExpectedOutput(cases.at(model), output);
}

const Tensor* Actual(const std::string& model, const std::string& output) {
  const Value* v = FindValue(Outputs(model), output);
  return v != nullptr && v->is_tensor() ? &v->tensor() : nullptr;
}

// Token sequences, exactly. ONNX Runtime leaves the columns after a greedy search's last step
// unwritten when every row ended early (onnxflow pads them): columns after the first one that is
// pad in every row of both are not compared.
void ExpectSequences(const std::string& model, const std::string& name, int pad) {
  const Tensor& want = Expected(model, name + "_sequences");
  const Tensor* got = Actual(model, name + "_sequences");
  ASSERT_NE(got, nullptr) << name;
  ASSERT_EQ(want.shape(), got->shape()) << name;
  const int64_t width = want.shape().back(), rows = want.size() / width;
  int64_t compared = width;
  for (int64_t j = 0; j < width && compared == width; ++j) {
    bool all_pad = true;
    for (int64_t r = 0; r < rows; ++r) {
      all_pad &= want.data<int32_t>()[r * width + j] == pad && got->data<int32_t>()[r * width + j] == pad;
    }
    if (all_pad && j > 0) compared = j + 1;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < compared; ++j) {
      EXPECT_EQ(want.data<int32_t>()[r * width + j], got->data<int32_t>()[r * width + j])
          << name << " row " << r << " column " << j;
    }
  }
}

void ExpectNear(const std::string& model, const std::string& output, float tolerance, bool skip_unreached = false) {
  const Tensor& want = Expected(model, output);
  const Tensor* got = Actual(model, output);
  ASSERT_NE(got, nullptr) << output;
  ASSERT_EQ(want.shape(), got->shape()) << output;
  // Per-step scores: steps after every sentence finished stay 0 here, unwritten in ONNX Runtime.
  const int64_t step = want.size() / want.dim(0);
  int64_t reached = 0;
  for (int64_t i = 0; i < got->size(); ++i) {
    const bool unreached = skip_unreached && got->data<float>()[i / step * step] == 0.0f &&
                           std::all_of(got->data<float>() + i / step * step, got->data<float>() + (i / step + 1) * step,
                                       [](float x) { return x == 0.0f; });
    if (unreached) continue;
    ++reached;
    const float w = want.data<float>()[i], g = got->data<float>()[i];
    // Barred tokens hold the lowest float plus a beam score: equal in both, or both that large.
    if (std::fabs(w) > 1e30f) {
      EXPECT_GT(std::fabs(g), 1e30f) << output << " element " << i;
      continue;
    }
    EXPECT_NEAR(w, g, tolerance * (1 + std::fabs(w))) << output << " element " << i;
  }
  EXPECT_GT(reached, 0) << output;
}

constexpr int kPad = 0;

TEST(GreedySearch, PaddedBatchMatchesOnnxRuntime) { ExpectSequences("gpt", "greedy_padded", kPad); }
TEST(GreedySearch, PenaltyNgramVocabMaskMinLengthMatchOnnxRuntime) {
  ExpectSequences("gpt", "greedy_processors", kPad);
}
TEST(GreedySearch, PrefixVocabMaskMatchesOnnxRuntime) { ExpectSequences("gpt", "greedy_prefix", kPad); }

TEST(BeamSearch, GptPaddedBatchMatchesOnnxRuntime) {
  ExpectSequences("gpt", "beam_basic", kPad);
  ExpectNear("gpt", "beam_basic_sequences_scores", 1e-4f);
  ExpectNear("gpt", "beam_basic_scores", 1e-4f, true);
}
TEST(BeamSearch, GptEarlyStoppingMatchesOnnxRuntime) {
  ExpectSequences("gpt", "beam_early", kPad);
  ExpectNear("gpt", "beam_early_sequences_scores", 1e-4f);
}
TEST(BeamSearch, GptLengthAndRepetitionPenaltiesMinLengthMatchOnnxRuntime) {
  ExpectSequences("gpt", "beam_penalties", kPad);
  ExpectNear("gpt", "beam_penalties_sequences_scores", 1e-4f);
  ExpectNear("gpt", "beam_penalties_scores", 1e-4f, true);
}
TEST(BeamSearch, GptMasksAndNoRepeatNgramMatchOnnxRuntime) {
  ExpectSequences("gpt", "beam_masks", kPad);
  ExpectNear("gpt", "beam_masks_sequences_scores", 1e-4f);
}
TEST(BeamSearch, GptFourSentencesEosEqualToPadMatchesOnnxRuntime) {
  ExpectSequences("gpt", "beam_batch4", kPad);
  ExpectNear("gpt", "beam_batch4_sequences_scores", 1e-4f);
}
TEST(BeamSearch, GptInitDecoderMatchesOnnxRuntime) {
  ExpectSequences("gpt", "beam_init", kPad);
  ExpectNear("gpt", "beam_init_sequences_scores", 1e-4f);
}
TEST(BeamSearch, GptOneBeamMatchesOnnxRuntime) {
  ExpectSequences("gpt", "beam_one", kPad);
  ExpectNear("gpt", "beam_one_sequences_scores", 1e-4f);
}
TEST(BeamSearch, T5MatchesOnnxRuntime) {
  ExpectSequences("t5", "t5_basic", kPad);
  ExpectNear("t5", "t5_basic_sequences_scores", 1e-4f);
  ExpectNear("t5", "t5_basic_scores", 1e-4f, true);
}
TEST(BeamSearch, T5EarlyStoppingPenaltiesNgramMatchOnnxRuntime) {
  ExpectSequences("t5", "t5_processors", kPad);
  ExpectNear("t5", "t5_processors_sequences_scores", 1e-4f);
}

// past_present_share_buffer: the caches do not follow the beams (as in ONNX Runtime without
// cache_indirection), so these sequences differ from GptPaddedBatch's for the same weights.
TEST(BeamSearch, GptSharedBufferDecoderMatchesOnnxRuntime) {
  ExpectSequences("gpt_shared", "shared_beams", kPad);
  ExpectNear("gpt_shared", "shared_beams_sequences_scores", 1e-4f);
  ExpectNear("gpt_shared", "shared_beams_scores", 1e-4f, true);
}

TEST(NGramRepeatBlock, MatchesOnnxRuntime) { ExpectNear("ngram", "scores_out", 0.0f); }

// ---- refusals: a Status naming node, op and what is wrong; never a crash ----

onnx::NodeProto* FindNode(onnx::ModelProto& m, const std::string& name) {
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

onnx::AttributeProto* FindAttr(onnx::NodeProto* n, const std::string& name) {
  for (auto& a : *n->mutable_attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

void SetInput(std::vector<NamedValue>& inputs, const std::string& name, Tensor t) {
  for (auto& in : inputs) {
    if (in.name == name) in.value = std::move(t);
  }
}

void ExpectRefused(const Result<std::vector<NamedValue>>& out, const std::vector<std::string>& words) {
  ASSERT_FALSE(out.ok());
  std::printf("refused: %s\n", out.status().ToString().c_str());
  for (const auto& w : words) EXPECT_NE(out.status().message().find(w), std::string::npos) << out.status().ToString();
}

TEST(GenerationRefusals, NumBeamsZero) {
  Case c = LoadCase("gpt");
  SetInput(c.inputs, "beam_basic_num_beams", Tensor::FromVector<int32_t>({1}, {0}));
  ExpectRefused(RunCase(c), {"beam_basic", "BeamSearch", "num_beams"});
}

TEST(GenerationRefusals, NumReturnSequencesAboveNumBeams) {
  Case c = LoadCase("gpt");
  SetInput(c.inputs, "beam_early_num_return_sequences", Tensor::FromVector<int32_t>({1}, {5}));
  ExpectRefused(RunCase(c), {"beam_early", "num_return_sequences"});
}

TEST(GenerationRefusals, MaxLengthNotAboveInputLength) {
  Case c = LoadCase("gpt");
  SetInput(c.inputs, "greedy_padded_max_length", Tensor::FromVector<int32_t>({1}, {3}));
  ExpectRefused(RunCase(c), {"greedy_padded", "GreedySearch", "max_length"});
}

TEST(GenerationRefusals, TokenOutsideVocabulary) {
  Case c = LoadCase("gpt");
  std::vector<int32_t> ids(15, 3);
  ids[7] = 50;  // the vocabulary is 0..49
  SetInput(c.inputs, "beam_one_input_ids", Tensor::FromVector<int32_t>({3, 5}, ids));
  ExpectRefused(RunCase(c), {"beam_one", "input_ids", "vocabulary"});
}

TEST(GenerationRefusals, VocabMaskOfWrongShape) {
  Case c = LoadCase("gpt");
  SetInput(c.inputs, "beam_masks_vocab_mask", Tensor::FromVector<int32_t>({3}, {1, 1, 1}));
  for (auto& in : *c.model.mutable_graph()->mutable_input()) {  // declared as given: the node is what refuses
    if (in.name() == "beam_masks_vocab_mask") in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(3);
  }
  ExpectRefused(RunCase(c), {"beam_masks", "BeamSearch", "'vocab_mask' must be int32 [50]"});
}

TEST(GenerationRefusals, DecoderWithWrongNumberOfInputs) {
  Case c = LoadCase("gpt");
  onnx::GraphProto* decoder = FindAttr(FindNode(c.model, "greedy_padded"), "decoder")->mutable_g();
  auto* extra = decoder->add_input();  // an input the convention has no value for
  extra->CopyFrom(decoder->input(3));
  extra->set_name("unused_extra");
  ExpectRefused(RunCase(c), {"greedy_padded", "GreedySearch", "decoder", "inputs"});
}

TEST(GenerationRefusals, DecoderWithWrongNumberOfOutputs) {
  Case c = LoadCase("gpt");
  onnx::GraphProto* decoder = FindAttr(FindNode(c.model, "beam_basic"), "decoder")->mutable_g();
  decoder->mutable_output()->RemoveLast();  // present_1
  ExpectRefused(RunCase(c), {"beam_basic", "BeamSearch", "decoder", "outputs"});
}

TEST(GenerationRefusals, DecoderInputsOutOfOrder) {
  Case c = LoadCase("gpt");
  onnx::GraphProto* decoder = FindAttr(FindNode(c.model, "beam_early"), "decoder")->mutable_g();
  decoder->mutable_input()->SwapElements(1, 2);
  ExpectRefused(RunCase(c), {"beam_early", "position_ids"});
}

TEST(GenerationRefusals, LogitsOfWrongShape) {
  // vocab_size 49 against a decoder whose logits hold 50 tokens: refused at the first step.
  Case c = LoadCase("gpt");
  FindAttr(FindNode(c.model, "beam_penalties"), "vocab_size")->set_i(49);
  ExpectRefused(RunCase(c), {"beam_penalties", "BeamSearch", "logits", "49"});
}

TEST(GenerationRefusals, CacheIndirectionDecoder) {
  Case c = LoadCase("gpt_shared");
  onnx::GraphProto* decoder = FindAttr(FindNode(c.model, "shared_beams"), "decoder")->mutable_g();
  for (const char* name : {"beam_width", "cache_indirection"}) {
    auto* in = decoder->add_input();
    in->CopyFrom(decoder->input(decoder->input_size() - 2));  // past_sequence_length's declaration
    in->set_name(name);
  }
  ExpectRefused(RunCase(c), {"shared_beams", "BeamSearch", "cache_indirection", "not supported"});
}

TEST(GenerationRefusals, SharedBufferPresentOfWrongLength) {
  // present_1 cut to 5 positions while past_1 holds max_length (12): refused, never read past its end.
  Case c = LoadCase("gpt_shared");
  onnx::GraphProto* decoder = FindAttr(FindNode(c.model, "shared_beams"), "decoder")->mutable_g();
  for (auto& node : *decoder->mutable_node()) {
    for (auto& out : *node.mutable_output()) {
      if (out == "present_1") out = "present_1_full";
    }
  }
  auto* ends = decoder->add_initializer();
  TensorToProto(Tensor::FromVector<int64_t>({1}, {5}), ends);
  ends->set_name("test_ends");
  auto* cut = decoder->add_node();
  cut->set_op_type("Slice");
  for (const char* in : {"present_1_full", "c_i0", "test_ends", "c_i3"}) cut->add_input(in);
  cut->add_output("present_1");
  ExpectRefused(RunCase(c), {"shared_beams", "BeamSearch", "present_1", "past_1", "[2,6,2,12,16]"});
}

TEST(GenerationRefusals, T5WithoutDecoderStartToken) {
  Case c = LoadCase("t5");
  FindAttr(FindNode(c.model, "t5_basic"), "decoder_start_token_id")->set_i(-1);
  ExpectRefused(RunCase(c), {"t5_basic", "decoder_start_token_id"});
}

TEST(GenerationRefusals, T5WithoutEncoder) {
  Case c = LoadCase("t5");
  RemoveAttribute(*FindNode(c.model, "t5_processors"), "encoder");
  ExpectRefused(RunCase(c), {"t5_processors", "encoder"});
}

TEST(GenerationRefusals, EosTokenMissing) {
  Case c = LoadCase("gpt");
  RemoveAttribute(*FindNode(c.model, "greedy_prefix"), "eos_token_id");
  ExpectRefused(RunCase(c), {"greedy_prefix", "eos_token_id"});
}

// The shared-buffer decoder under GreedySearch, fed greedy_padded's prompts: ONNX Runtime gives the
// same sequences for both decoder forms (checked when the data was generated), so they are the expected.
TEST(GreedySearch, SharedBufferDecoderMatchesOnnxRuntime) {
  Case c = LoadCase("gpt_shared");
  onnx::NodeProto greedy = *FindNode(c.model, "shared_beams");
  greedy.set_name("shared_greedy");
  greedy.set_op_type("GreedySearch");
  greedy.clear_input();
  for (const char* in : {"shared_beams_input_ids", "greedy_max_length", "", "", "", "", "shared_beams_attention_mask"}) {
    greedy.add_input(in);
  }
  greedy.clear_output();
  greedy.add_output("greedy_sequences");
  c.model.mutable_graph()->clear_node();
  *c.model.mutable_graph()->add_node() = greedy;
  c.model.mutable_graph()->clear_output();
  auto* out = c.model.mutable_graph()->add_output();
  out->set_name("greedy_sequences");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT32);
  auto* max_length = c.model.mutable_graph()->add_input();
  max_length->CopyFrom(c.model.graph().input(1));  // shared_beams_max_length's declaration
  max_length->set_name("greedy_max_length");
  c.inputs.push_back({"greedy_max_length", Tensor::FromVector<int32_t>({1}, {14})});
  auto result = RunCase(c);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const Tensor& want = Expected("gpt", "greedy_padded_sequences");
  const Tensor& got = (*result)[0].value.tensor();
  ASSERT_EQ(want.shape(), got.shape());
  for (int64_t i = 0; i < want.size(); ++i) EXPECT_EQ(want.data<int32_t>()[i], got.data<int32_t>()[i]) << i;
}

// The init_decoder (logits x 3) is what makes beam_init's first step: without it the search differs.
TEST(BeamSearch, InitDecoderRunsTheFirstStep) {
  Case c = LoadCase("gpt");
  RemoveAttribute(*FindNode(c.model, "beam_init"), "init_decoder");
  auto out = RunCase(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& want = Expected("gpt", "beam_init_sequences");
  const Tensor& got = FindValue(*out, "beam_init_sequences")->tensor();
  ASSERT_EQ(want.shape(), got.shape());
  EXPECT_FALSE(std::equal(want.data<int32_t>(), want.data<int32_t>() + want.size(), got.data<int32_t>()));
}

}  // namespace
}  // namespace onnxflow
