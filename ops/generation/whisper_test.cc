// Whisper decoding (WhisperBeamSearch, and BeamSearch with model_type 2) against ONNX Runtime 1.30 on
// the seeded tiny Whisper-shaped model of tools/gen_models/gen_generation.py (testdata/whisper: one
// WhisperBeamSearch node, features [2, 8, 40], the forced prompt start-of-transcript, language,
// task; test_data_set_<k> are its input sets and ONNX Runtime's outputs), and the refusals.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "include/onnxflow/session.h"
#include "ops/framework/case_folder.h"
#include "proto/onnx.pb.h"

namespace onnxflow {
namespace {

const char kDir[] = "ops/generation/testdata/whisper";
constexpr int kEos = 50;  // also the pad token

// The model, input set `set` and ONNX Runtime's outputs (sequences, sequences_scores, scores).
using Case = CaseFolder;

Case Load(int set) { return LoadCaseFolder(kDir, set); }

onnx::NodeProto* Node(Case& c) { return c.model.mutable_graph()->mutable_node(0); }

onnx::AttributeProto* Attr(Case& c, const std::string& name) {
  for (auto& a : *Node(c)->mutable_attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

onnx::ValueInfoProto* GraphInput(Case& c, const std::string& name) {
  for (auto& in : *c.model.mutable_graph()->mutable_input()) {
    if (in.name() == name) return &in;
  }
  return nullptr;
}

void SetInput(Case& c, const std::string& name, Tensor t) {
  bool found = false;
  for (auto& in : c.inputs) {
    if (in.name == name) {
      in.value = std::move(t);
      found = true;
    }
  }
  ASSERT_TRUE(found) << name;
}

// Drops the node's input `index` and the graph input and feed behind it.
void DropInput(Case& c, int index) {
  const std::string name = Node(c)->input(index);
  Node(c)->set_input(index, "");
  auto* inputs = c.model.mutable_graph()->mutable_input();
  for (int i = 0; i < inputs->size(); ++i) {
    if (inputs->Get(i).name() == name) inputs->DeleteSubrange(i, 1);
  }
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].name == name) c.inputs.erase(c.inputs.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// Wires an extra node input `index` to a new graph input fed `t`.
void AddInput(Case& c, int index, const std::string& name, Tensor t, int elem_type) {
  while (Node(c)->input_size() <= index) Node(c)->add_input("");
  Node(c)->set_input(index, name);
  auto* in = c.model.mutable_graph()->add_input();
  in->set_name(name);
  in->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  c.inputs.push_back({name, std::move(t)});
}

// Sequences exactly, sequences_scores and every reached step's scores within 1e-4 relative
// (1e-6 absolute near 0). Barred tokens hold the lowest float (over the temperature): both huge.
void ExpectMatches(const Case& c, const std::vector<NamedValue>& out) {
  const std::vector<std::string> names = {"whisper_sequences", "whisper_sequences_scores", "whisper_scores"};
  for (int i = 0; i < 3; ++i) {
    const Value* v = FindValue(out, names[i]);
    ASSERT_TRUE(v != nullptr && v->is_tensor()) << names[i];
    const Tensor& got = v->tensor();
    const Tensor want = ExpectedOutput(c, names[i]);
    ASSERT_EQ(want.shape(), got.shape()) << names[i];
    if (i == 0) {
      for (int64_t j = 0; j < want.size(); ++j) {
        EXPECT_EQ(want.data<int32_t>()[j], got.data<int32_t>()[j]) << "sequences element " << j;
      }
      continue;
    }
    // Steps after every sentence finished: 0 here, unwritten in ONNX Runtime.
    const int64_t step = i == 2 ? want.size() / want.dim(0) : want.size();
    int64_t compared = 0;
    for (int64_t j = 0; j < want.size(); ++j) {
      const float* s = got.data<float>() + j / step * step;
      if (i == 2 && std::all_of(s, s + step, [](float x) { return x == 0.0f; })) continue;
      ++compared;
      const float w = want.data<float>()[j], g = got.data<float>()[j];
      if (std::fabs(w) > 1e30f) {
        EXPECT_NEAR(w / g, 1.0f, 1e-6f) << names[i] << " element " << j;
        continue;
      }
      EXPECT_NEAR(w, g, 1e-4f * std::fabs(w) + 1e-6f) << names[i] << " element " << j;
    }
    EXPECT_GT(compared, 0) << names[i];
  }
}

// Set 0: 4 beams, 2 returned, batch 2, prompt of 3 forced tokens, temperature 1, logits_processor 0.
TEST(WhisperBeamSearch, FourBeamsTwoReturnedMatchOnnxRuntime) {
  Case c = Load(0);
  auto out = RunCase(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectMatches(c, *out);
  // The rows start with each sentence's prompt; some hypotheses end (eos, then pad) before max_length.
  const Tensor& seq = FindValue(*out, "whisper_sequences")->tensor();
  EXPECT_EQ(seq.data<int32_t>()[0], 51);
  EXPECT_EQ(seq.data<int32_t>()[2], 56);
  EXPECT_EQ(seq.data<int32_t>()[2 * 14 + 2], 57);
  EXPECT_EQ(seq.data<int32_t>()[13], kEos);
}

// Set 1: 3 beams, 2 returned, length penalty 0.6, repetition penalty 1.5, min_length 8, vocab mask,
// prefix vocab mask (first generated token), temperature 1.7.
TEST(WhisperBeamSearch, PenaltiesMasksMinLengthTemperatureMatchOnnxRuntime) {
  Case c = Load(1);
  auto out = RunCase(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectMatches(c, *out);
}

// BeamSearch with model_type 2 runs the same search: ONNX Runtime 1.30 gives set 0's outputs
// byte for byte for this node (checked when the model was generated; BeamSearch takes at most 12
// inputs there, so no temperature).
TEST(WhisperBeamSearch, BeamSearchModelType2MatchesOnnxRuntime) {
  Case c = Load(0);
  Node(c)->set_op_type("BeamSearch");
  DropInput(c, 14);  // temperature (1 in set 0)
  while (Node(c)->input_size() > 12) Node(c)->mutable_input()->RemoveLast();
  auto out = RunCase(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectMatches(c, *out);
}

// Without decoder_input_ids each row starts with decoder_start_token_id alone; ONNX Runtime 1.30's
// outputs for set 0 so (the node without that input, checked when the model was generated).
TEST(WhisperBeamSearch, StartTokenWithoutPromptMatchesOnnxRuntime) {
  Case c = Load(0);
  DropInput(c, 10);
  auto out = RunCase(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& seq = FindValue(*out, "whisper_sequences")->tensor();
  ASSERT_EQ(seq.shape(), (Shape{2, 2, 14}));
  const int heads[4][3] = {{51, 53, 8}, {51, 42, 53}, {51, 5, 8}, {51, 53, 8}};
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 14; ++j) EXPECT_EQ(seq.data<int32_t>()[r * 14 + j], j < 3 ? heads[r][j] : 8) << r << " " << j;
  }
  const float want[4] = {-1.5124698877f, -1.5592277050f, -1.1803493500f, -1.2482650280f};
  const Tensor& scores = FindValue(*out, "whisper_sequences_scores")->tensor();
  for (int r = 0; r < 4; ++r) EXPECT_NEAR(scores.data<float>()[r], want[r], 1e-4f * std::fabs(want[r]));
}

// ---- refusals: a Status naming node, op and the input, output or attribute ----

void ExpectRefused(const Result<std::vector<NamedValue>>& out, const std::vector<std::string>& words) {
  ASSERT_FALSE(out.ok());
  std::printf("refused: %s\n", out.status().ToString().c_str());
  for (const auto& w : words) EXPECT_NE(out.status().message().find(w), std::string::npos) << out.status().ToString();
}

TEST(WhisperRefusals, FeaturesOfWrongRank) {
  Case c = Load(0);
  SetInput(c, "whisper_input_ids", Tensor::FromVector<float>({2, 320}, std::vector<float>(640, 0.5f)));
  auto* dims = GraphInput(c, "whisper_input_ids")->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->clear_dim();
  dims->add_dim()->set_dim_value(2);
  dims->add_dim()->set_dim_value(320);
  ExpectRefused(RunCase(c), {"whisper", "WhisperBeamSearch", "input_features", "[batch, feature_size, frames]"});
}

TEST(WhisperRefusals, PromptMissingWithoutStartToken) {
  Case c = Load(0);
  DropInput(c, 10);
  Attr(c, "decoder_start_token_id")->set_i(-1);
  ExpectRefused(RunCase(c), {"whisper", "WhisperBeamSearch", "decoder_input_ids", "decoder_start_token_id"});
}

TEST(WhisperRefusals, PromptOfOtherBatch) {
  Case c = Load(0);
  SetInput(c, "whisper_decoder_input_ids", Tensor::FromVector<int32_t>({1, 3}, {51, 53, 56}));
  GraphInput(c, "whisper_decoder_input_ids")->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(1);
  ExpectRefused(RunCase(c), {"whisper", "WhisperBeamSearch", "decoder_input_ids", "batch = 2"});
}

TEST(WhisperRefusals, PromptTokenOutsideVocabulary) {
  Case c = Load(0);
  SetInput(c, "whisper_decoder_input_ids", Tensor::FromVector<int32_t>({2, 3}, {51, 53, 56, 51, 60, 57}));
  ExpectRefused(RunCase(c), {"whisper", "decoder_input_ids", "vocabulary"});
}

TEST(WhisperRefusals, MaxLengthWithoutRoomForTheDecoder) {
  Case c = Load(0);
  SetInput(c, "whisper_max_length", Tensor::FromVector<int32_t>({1}, {4}));  // the prompt is 3 tokens
  ExpectRefused(RunCase(c), {"whisper", "max_length", "at least 5"});
}

TEST(WhisperRefusals, TimestampLogitsProcessor) {
  Case c = Load(0);
  SetInput(c, "whisper_logits_processor", Tensor::FromVector<int32_t>({1}, {1}));
  ExpectRefused(RunCase(c), {"whisper", "WhisperBeamSearch", "logits_processor"});
}

TEST(WhisperRefusals, TemperatureZero) {
  Case c = Load(0);
  SetInput(c, "whisper_temperature", Tensor::FromVector<float>({1}, {0.0f}));
  ExpectRefused(RunCase(c), {"whisper", "temperature"});
}

TEST(WhisperRefusals, ExtraDecodingIds) {
  Case c = Load(0);
  AddInput(c, 13, "whisper_extra", Tensor::FromVector<int32_t>({2, 1}, {5, 6}), onnx::TensorProto::INT32);
  ExpectRefused(RunCase(c), {"whisper", "WhisperBeamSearch", "extra_decoding_ids"});
}

TEST(WhisperRefusals, CrossQkLayerHead) {
  Case c = Load(0);
  AddInput(c, 12, "whisper_layer_head", Tensor::FromVector<int32_t>({1, 2}, {0, 0}), onnx::TensorProto::INT32);
  ExpectRefused(RunCase(c), {"whisper", "WhisperBeamSearch", "cross_qk_layer_head"});
}

TEST(WhisperRefusals, CrossQkAndNonSpeechProbsOutputs) {
  for (int index : {3, 4}) {
    Case c = Load(0);
    while (Node(c)->output_size() <= index) Node(c)->add_output("");
    Node(c)->set_output(index, "whisper_extra_out");
    auto* o = c.model.mutable_graph()->add_output();
    o->set_name("whisper_extra_out");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    ExpectRefused(RunCase(c), {"whisper", "WhisperBeamSearch", index == 3 ? "'cross_qk'" : "'non_speech_probs'"});
  }
}

TEST(WhisperRefusals, WhisperBeamSearchOfOtherModelType) {
  Case c = Load(0);
  Attr(c, "model_type")->set_i(1);
  ExpectRefused(RunCase(c), {"whisper", "WhisperBeamSearch", "model_type"});
}

TEST(WhisperRefusals, BeamSearchWithWhisperInputsForT5) {
  Case c = Load(0);
  Node(c)->set_op_type("BeamSearch");
  Attr(c, "model_type")->set_i(1);
  ExpectRefused(RunCase(c), {"whisper", "BeamSearch", "inputs"});
}

}  // namespace
}  // namespace onnxflow
