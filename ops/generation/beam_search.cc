// com.microsoft BeamSearch as ONNX Runtime's CPU kernel runs it (beam_search_impl_gpt.h,
// beam_search_impl_t5.h, generation_device_helper.cc's ProcessLogits): each step takes the last
// position's logits, log-softmax, the score rules, adds each beam's running score, keeps the
// 2 * num_beams best (beam, token) pairs of each sentence and lets the scorer pick the next beams
// (beam_scorer.h). model_type 0 runs a GPT-2 style `decoder` (gpt_decoder.h); model_type 1 a T5 /
// BART `encoder` whose logits give the first token and a `decoder` for the rest (t5_model.h);
// model_type 2 (BeamSearch, or the WhisperBeamSearch op) the same loop over Whisper's subgraphs
// (beam_search_impl_whisper.h): the encoder reads the input features and the forced prompt
// decoder_input_ids, which every beam's row starts with.
//
// Inputs: input_ids (Whisper: input_features), max_length, min_length, num_beams,
// num_return_sequences, length_penalty, repetition_penalty, vocab_mask, prefix_vocab_mask,
// attention_mask (Whisper: read by nothing, as in ONNX Runtime), decoder_input_ids and
// logits_processor (model_type 2; only 0, no timestamp rules), and WhisperBeamSearch's temperature
// (input 14; the step's log-probabilities divided by it after the other rules). Outputs: sequences
// [batch, num_return_sequences, max_length], sequences_scores [batch, num_return_sequences],
// scores [max_length - input length, batch, num_beams, vocab] (each step's beam scores).
// WhisperBeamSearch's cross_qk_layer_head and extra_decoding_ids inputs and cross_qk and
// non_speech_probs outputs are refused: ONNX Runtime 1.30's CPU kernel serves none of them (cross_qk
// needs its CUDA-only masked decoder attention; extra_decoding_ids changes nothing there;
// non_speech_probs comes back 0 for every sentence).
#include <algorithm>
#include <cmath>
#include <optional>

#include "ops/framework/domains.h"
#include "ops/framework/registry.h"
#include "ops/generation/beam_scorer.h"
#include "ops/generation/gpt_decoder.h"
#include "ops/generation/logits.h"
#include "ops/generation/search_inputs.h"
#include "ops/generation/subgraph_io.h"
#include "ops/generation/t5_model.h"

namespace onnxflow {
namespace {

using namespace generation;

// One run's search state: the rows, the scorer and each beam's running score.
struct Search {
  Search(const BeamConfig& config, Sequences rows)
      : config(config), sequences(std::move(rows)), scorer(config),
        beam_scores(static_cast<size_t>(config.batch_size) * config.num_beams, 0.0f) {
    // Only beam 0 of each sentence starts live: the others would repeat its choices.
    for (int b = 0; b < config.batch_size; ++b) {
      for (int j = 1; j < config.num_beams; ++j) beam_scores[static_cast<size_t>(b) * config.num_beams + j] = -1e9f;
    }
  }

  // Chooses the next beams from one step's logits and appends their tokens.
  void Step(const ScoreRules& rules, int step, int vocab, const std::vector<float>& logits, float* scores_out) {
    const int beams = config.num_beams, rows = config.batch_size * beams;
    scores.resize(logits.size());
    LogSoftmaxRows(logits.data(), rows, vocab, scores.data());
    ApplyScoreRules(rules, sequences, step, vocab, scores.data());
    for (int r = 0; r < rows; ++r) {
      for (int t = 0; t < vocab; ++t) scores[static_cast<size_t>(r) * vocab + t] += beam_scores[r];
    }
    if (scores_out != nullptr) std::copy(scores.begin(), scores.end(), scores_out);
    std::vector<float> top;
    std::vector<int64_t> indices;
    for (int b = 0; b < config.batch_size; ++b) {
      TopK(scores.data() + static_cast<size_t>(b) * beams * vocab, int64_t{beams} * vocab, 2 * beams, &top, &indices);
    }
    std::vector<int32_t> tokens(indices.size()), from(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) {
      from[i] = static_cast<int32_t>(indices[i] / vocab);
      tokens[i] = static_cast<int32_t>(indices[i] % vocab);
    }
    scorer.Process(sequences, top, tokens, from);
    beam_scores = scorer.next_scores();
    sequences.AppendFrom(scorer.next_rows(), scorer.next_tokens());
  }

  BeamConfig config;
  Sequences sequences;
  BeamScorer scorer;
  std::vector<float> beam_scores, scores;
};

// Whisper's input slots past attention_mask.
constexpr int kDecoderInputIds = 10, kLogitsProcessor = 11, kCrossQkLayerHead = 12, kExtraDecodingIds = 13,
              kTemperature = 14;

class BeamSearch : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, bool whisper_op) {
    ONNXFLOW_ASSIGN_OR_RETURN(SearchAttributes attrs, SearchAttributes::Parse(info));
    const bool whisper = attrs.model_type == kModelTypeWhisper;
    if (whisper_op && !whisper) {
      return InvalidArgument("attribute 'model_type' must be 2 (Whisper) for WhisperBeamSearch, got " +
                             std::to_string(attrs.model_type));
    }
    ONNXFLOW_RETURN_IF_ERROR(CheckSlots(info, whisper_op, whisper));
    std::unique_ptr<BeamSearch> k(new BeamSearch(attrs));
    if (attrs.model_type == kModelTypeGpt) {
      ONNXFLOW_ASSIGN_OR_RETURN(GptDecoder d, GptDecoder::Prepare(info, "decoder", attrs.vocab_size));
      ONNXFLOW_ASSIGN_OR_RETURN(k->gpt_init_, GptDecoder::PrepareInit(info, d));
      k->gpt_.emplace(std::move(d));
    } else {
      if (!whisper && attrs.decoder_start_token_id < 0) {
        return InvalidArgument("attribute 'decoder_start_token_id' must be set (>= 0) for model_type 1");
      }
      ONNXFLOW_ASSIGN_OR_RETURN(T5Model m, T5Model::Prepare(info, attrs.vocab_size, whisper));
      k->t5_.emplace(std::move(m));
    }
    if (whisper && !info.has_input(kDecoderInputIds) && attrs.decoder_start_token_id < 0) {
      return InvalidArgument("input 'decoder_input_ids' is required when attribute 'decoder_start_token_id' is "
                             "not set (model_type 2 starts every row with one or the other)");
    }
    const int vocab = k->vocab();
    if (attrs.eos_token_id >= vocab || attrs.pad_token_id >= vocab || attrs.decoder_start_token_id >= vocab) {
      return InvalidArgument("attributes 'eos_token_id', 'pad_token_id' and 'decoder_start_token_id' must be below "
                             "the vocabulary size " + std::to_string(vocab));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const int vocab = this->vocab();
    const Tensor* input_ids = nullptr;  // Whisper: the input features
    Tensor prompt;                      // Whisper: decoder_input_ids, or the start token
    int length = 1;
    if (whisper()) {
      ONNXFLOW_ASSIGN_OR_RETURN(input_ids, ReadFeatures(ctx));
      ONNXFLOW_ASSIGN_OR_RETURN(prompt, ReadPrompt(ctx, static_cast<int>(input_ids->dim(0)), vocab));
      length = static_cast<int>(prompt.dim(1));
    } else {
      ONNXFLOW_ASSIGN_OR_RETURN(input_ids, ReadInputIds(ctx, vocab));
      // The rows start with the prompt (GPT-2) or with the decoder's start token (T5).
      if (gpt_) length = static_cast<int>(input_ids->dim(1));
    }
    const int batch = static_cast<int>(input_ids->dim(0));
    if (!ctx.has_input(1)) return InvalidArgument("input 'max_length' is required");
    BeamConfig c;
    c.batch_size = batch;
    ONNXFLOW_ASSIGN_OR_RETURN(c.max_length, ScalarInt(ctx, 1, "max_length", 0));
    ONNXFLOW_RETURN_IF_ERROR(CheckMaxLength(c.max_length, length));
    if (t5_ && c.max_length < length + 2) {
      // ONNX Runtime's encoder-decoder loops never prepare the decoder then, and fail.
      return InvalidArgument("input 'max_length' must be at least " + std::to_string(length + 2) + " for model_type " +
                             std::to_string(attrs_.model_type) + " (the decoder's start of " + std::to_string(length) +
                             " tokens, the encoder's token and one decoder step), got " + std::to_string(c.max_length));
    }
    ScoreRules rules;
    ONNXFLOW_ASSIGN_OR_RETURN(rules.min_length, ScalarInt(ctx, 2, "min_length", 0));
    if (!ctx.has_input(3)) return InvalidArgument("input 'num_beams' is required");
    ONNXFLOW_ASSIGN_OR_RETURN(c.num_beams, ScalarInt(ctx, 3, "num_beams", 1));
    if (c.num_beams < 1 || c.num_beams > kMaxBeams) {
      return InvalidArgument("input 'num_beams' must be in [1, " + std::to_string(kMaxBeams) + "], got " +
                             std::to_string(c.num_beams));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(c.num_return_sequences, ScalarInt(ctx, 4, "num_return_sequences", 1));
    if (c.num_return_sequences < 1 || c.num_return_sequences > c.num_beams) {
      return InvalidArgument("input 'num_return_sequences' must be in [1, num_beams = " + std::to_string(c.num_beams) +
                             "], got " + std::to_string(c.num_return_sequences));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(c.length_penalty, ScalarFloat(ctx, 5, "length_penalty", 1.0f));
    ONNXFLOW_ASSIGN_OR_RETURN(rules.repetition_penalty, ScalarFloat(ctx, 6, "repetition_penalty", 1.0f));
    if (!(rules.repetition_penalty > 0.0f)) return InvalidArgument("input 'repetition_penalty' must be greater than 0");
    c.early_stopping = attrs_.early_stopping;
    c.pad_token_id = attrs_.pad_token_id;
    c.eos_token_id = attrs_.eos_token_id;
    rules.no_repeat_ngram_size = attrs_.no_repeat_ngram_size;
    rules.eos_token_id = attrs_.eos_token_id;
    rules.batch_size = batch;
    ONNXFLOW_RETURN_IF_ERROR(ReadMasks(ctx, 7, 8, batch, vocab, &rules));
    const Tensor* attention_mask = nullptr;  // Whisper's encoder takes none; ONNX Runtime reads none either
    if (whisper()) {
      ONNXFLOW_ASSIGN_OR_RETURN(const int processor, ScalarInt(ctx, kLogitsProcessor, "logits_processor", 0));
      if (processor < 0) return InvalidArgument("input 'logits_processor' must be 0 or more, got " + std::to_string(processor));
      if (processor != 0) {
        return Unimplemented("input 'logits_processor' " + std::to_string(processor) +
                             ": Whisper's timestamp rules (1) are not implemented; only 0 is supported");
      }
      ONNXFLOW_ASSIGN_OR_RETURN(rules.temperature, ScalarFloat(ctx, kTemperature, "temperature", 1.0f));
      if (!(rules.temperature > 0.0f) || !std::isfinite(rules.temperature)) {
        // ONNX Runtime skips the division then; a temperature that is not positive is refused here.
        return InvalidArgument("input 'temperature' must be a positive finite value, got " +
                               std::to_string(rules.temperature));
      }
    } else {
      ONNXFLOW_ASSIGN_OR_RETURN(attention_mask, ReadAttentionMask(ctx, 9, *input_ids));
    }
    const int64_t rows = int64_t{batch} * c.num_beams;
    const int64_t steps = c.max_length - length;
    ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({rows, vocab}, sizeof(float), "the next-token scores"));
    // The rows twice (a step reads one buffer and writes the other); the kept hypotheses are fewer.
    ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({2, rows, c.max_length}, sizeof(int32_t), "the token rows"));

    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * sequences_out, ctx.AllocateUninitialized(0, DataType::kInt32,
                                                                                 {batch, c.num_return_sequences, c.max_length}));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * sequences_scores, ctx.Allocate(1, DataType::kFloat, {batch, c.num_return_sequences}));
    // Steps the search did not reach (every sentence done) stay 0; ONNX Runtime leaves them unwritten.
    Tensor* scores_out = nullptr;
    if (ctx.has_output(2)) {
      ONNXFLOW_ASSIGN_OR_RETURN(scores_out, ctx.Allocate(2, DataType::kFloat, {steps, batch, c.num_beams, vocab}));
    }
    std::optional<Search> search;
    Status s = gpt_ ? RunGpt(ctx, *input_ids, attention_mask, c, rules, scores_out, &search)
                    : RunT5(ctx, *input_ids, attention_mask, prompt, c, rules, scores_out, &search);
    ONNXFLOW_RETURN_IF_ERROR(s);
    search->scorer.Finalize(search->sequences, search->beam_scores, sequences_out->mutable_data<int32_t>(),
                            ctx.has_output(1) ? sequences_scores->mutable_data<float>() : nullptr);
    return Status::Ok();
  }

 private:
  explicit BeamSearch(const SearchAttributes& attrs) : attrs_(attrs) {}
  int vocab() const { return gpt_ ? gpt_->vocab() : t5_->vocab(); }
  bool whisper() const { return attrs_.model_type == kModelTypeWhisper; }

  // Inputs and outputs the node wires that this kernel does not serve are refused by name.
  static Status CheckSlots(const KernelInfo& info, bool whisper_op, bool whisper) {
    static const char* const kWhisperInputs[] = {
        "cross_qk_layer_head' is not supported: ONNX Runtime computes cross attention scores only on CUDA",
        "extra_decoding_ids' is not supported: ONNX Runtime's CPU kernel does not read it"};
    static const char* const kWhisperOutputs[] = {
        "cross_qk' is not supported: ONNX Runtime computes cross attention scores only on CUDA",
        "non_speech_probs' is not supported: ONNX Runtime's CPU kernel does not compute it (returns 0)"};
    const int inputs = whisper_op ? kTemperature + 1 : whisper ? kLogitsProcessor + 1 : kDecoderInputIds;
    if (info.input_count() > inputs) {
      return Unimplemented(std::string(whisper_op ? "WhisperBeamSearch" : "BeamSearch") + " with model_type " +
                           std::to_string(info.GetInt("model_type", kModelTypeGpt)) + " takes at most " +
                           std::to_string(inputs) + " inputs, got " + std::to_string(info.input_count()) +
                           (whisper ? "" : " (decoder_input_ids and later inputs are Whisper's: model_type 2)"));
    }
    for (int i = kCrossQkLayerHead; i <= kExtraDecodingIds; ++i) {
      if (info.has_input(i)) {
        return Unimplemented(std::string("input '") + kWhisperInputs[i - kCrossQkLayerHead]);
      }
    }
    for (int i = 3; i < info.output_count(); ++i) {
      if (!info.has_output(i)) continue;
      if (!whisper_op || i > 4) return Unimplemented("output " + std::to_string(i) + " is not an output of this op");
      return Unimplemented(std::string("output '") + kWhisperOutputs[i - 3]);
    }
    if (info.GetInt("decoder_output_cross_qk", 0) != 0) {
      return Unimplemented("attribute 'decoder_output_cross_qk' is not supported: the cross attention scores are "
                           "CUDA-only in ONNX Runtime");
    }
    return Status::Ok();
  }

  // input_features: float [batch, feature_size, frames].
  static Result<const Tensor*> ReadFeatures(const KernelContext& ctx) {
    const Tensor* f = ctx.input_tensor(0);
    if (f == nullptr) return InvalidArgument("input 'input_features' (input 0) is required");
    if (f->dtype() != DataType::kFloat || f->rank() != 3 || f->dim(0) < 1) {
      return InvalidArgument("input 'input_features' (input 0) must be float32 [batch, feature_size, frames] for "
                             "model_type 2, got " + std::string(DataTypeName(f->dtype())) + " " + ShapeToString(f->shape()));
    }
    return f;
  }

  // decoder_input_ids int32 [batch, length] with tokens in the vocabulary, or the start token.
  Result<Tensor> ReadPrompt(const KernelContext& ctx, int batch, int vocab) const {
    const Tensor* ids = ctx.input_tensor(kDecoderInputIds);
    if (ids == nullptr) {
      if (attrs_.decoder_start_token_id < 0) {
        return InvalidArgument("input 'decoder_input_ids' is required when attribute 'decoder_start_token_id' is not set");
      }
      return Tensor::FromVector<int32_t>({batch, 1}, std::vector<int32_t>(batch, attrs_.decoder_start_token_id));
    }
    if (ids->dtype() != DataType::kInt32 || ids->rank() != 2 || ids->dim(0) != batch || ids->dim(1) < 1) {
      return InvalidArgument("input 'decoder_input_ids' must be int32 [batch = " + std::to_string(batch) +
                             ", length >= 1], got " + DataTypeName(ids->dtype()) + " " + ShapeToString(ids->shape()));
    }
    for (int64_t i = 0; i < ids->size(); ++i) {
      const int32_t t = ids->data<int32_t>()[i];
      if (t < 0 || t >= vocab) {
        return InvalidArgument("input 'decoder_input_ids' holds token " + std::to_string(t) + " at " + std::to_string(i) +
                               ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
      }
    }
    return *ids;
  }

  static float* StepScores(Tensor* scores_out, int step_index) {
    if (scores_out == nullptr) return nullptr;
    return scores_out->mutable_data<float>() + scores_out->size() / scores_out->dim(0) * step_index;
  }

  Status RunGpt(KernelContext& ctx, const Tensor& input_ids, const Tensor* attention_mask, const BeamConfig& c,
                const ScoreRules& rules, Tensor* scores_out, std::optional<Search>* search) const {
    const int vocab = gpt_->vocab(), length = static_cast<int>(input_ids.dim(1));
    std::vector<int32_t> prompt;
    ONNXFLOW_ASSIGN_OR_RETURN(GptDecoder::Feeds feeds,
                              gpt_->Start(input_ids, attention_mask, c.num_beams, c.pad_token_id, c.max_length, &prompt));
    search->emplace(c, Sequences(c.batch_size * c.num_beams, c.max_length, length, prompt));
    ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> frame, gpt_->graph().NewFrame(ctx));
    std::unique_ptr<SubgraphFrame> init_frame;
    if (gpt_init_) {
      ONNXFLOW_ASSIGN_OR_RETURN(init_frame, gpt_init_->graph().NewFrame(ctx));
    }
    std::vector<Value> outputs;
    std::vector<float> logits;
    for (int current = length, step = 1; current < c.max_length; ++step) {
      ONNXFLOW_RETURN_IF_ERROR(ctx.run().CheckInterrupt());
      const bool first = step == 1 && init_frame != nullptr;  // init_decoder runs the prompt
      Status s = (first ? init_frame : frame)->Run(feeds.values, &outputs);  // moves every feed; Advance sets each again
      if (!s.ok()) return s.WithContext(std::string(first ? "graph 'init_decoder'" : "graph 'decoder'") + ", step " + std::to_string(step));
      ONNXFLOW_RETURN_IF_ERROR(LastLogits(outputs[0], "decoder", c.batch_size, c.num_beams, vocab, &logits));
      (*search)->Step(rules, step, vocab, logits, StepScores(scores_out, step - 1));
      if ((*search)->scorer.AllDone()) break;
      if (++current < c.max_length) {
        const std::vector<int32_t>* rows = c.num_beams > 1 ? &(*search)->scorer.next_rows() : nullptr;
        ONNXFLOW_RETURN_IF_ERROR(gpt_->Advance(outputs, (*search)->scorer.next_tokens(), rows, step > 1, &feeds));
      }
    }
    return Status::Ok();
  }

  // T5 and Whisper: every beam's row starts with the decoder start token (T5) or its sentence's
  // prompt (Whisper's decoder_input_ids).
  Status RunT5(KernelContext& ctx, const Tensor& input_ids, const Tensor* attention_mask, const Tensor& prompt,
               const BeamConfig& c, const ScoreRules& rules, Tensor* scores_out, std::optional<Search>* search) const {
    const int vocab = t5_->vocab(), rows = c.batch_size * c.num_beams;
    const int length = whisper() ? static_cast<int>(prompt.dim(1)) : 1;
    std::vector<int32_t> start(static_cast<size_t>(rows) * length, attrs_.decoder_start_token_id);
    if (whisper()) {
      for (int r = 0; r < rows; ++r) {
        const int32_t* sentence = prompt.data<int32_t>() + static_cast<size_t>(r / c.num_beams) * length;
        std::copy(sentence, sentence + length, start.begin() + static_cast<size_t>(r) * length);
      }
    }
    search->emplace(c, Sequences(rows, c.max_length, length, start));
    std::vector<Value> encoder_feeds =
        whisper() ? t5_->WhisperEncoderFeeds(input_ids, prompt)
                  : t5_->EncoderFeeds(input_ids, attention_mask, attrs_.pad_token_id, attrs_.decoder_start_token_id);
    std::vector<Value> outputs, feeds;
    std::vector<float> logits;
    {
      ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> encoder, t5_->encoder().NewFrame(ctx));
      std::vector<Value> feeds_in = encoder_feeds;  // Run moves its inputs; the decoder reads the mask after
      Status s = encoder->Run(feeds_in, &outputs);
      if (!s.ok()) return s.WithContext("graph 'encoder'");
    }
    // The encoder's logits give the first token (step 1); the decoder starts from its presents.
    ONNXFLOW_RETURN_IF_ERROR(LastLogits(outputs[0], "encoder", c.batch_size, c.num_beams, vocab, &logits));
    (*search)->Step(rules, 1, vocab, logits, StepScores(scores_out, 0));
    ONNXFLOW_ASSIGN_OR_RETURN(feeds, t5_->DecoderStart(encoder_feeds, outputs, (*search)->scorer.next_tokens(),
                                                       (*search)->sequences, c.num_beams));
    ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> frame, t5_->decoder().NewFrame(ctx));
    for (int current = length + 1, step = 2; current < c.max_length; ++step) {
      ONNXFLOW_RETURN_IF_ERROR(ctx.run().CheckInterrupt());
      // Run moves its inputs: the mask, hidden states and cross caches are fed again every step.
      std::vector<Value> feeds_in = feeds;
      Status s = frame->Run(feeds_in, &outputs);
      if (!s.ok()) return s.WithContext("graph 'decoder', step " + std::to_string(step));
      ONNXFLOW_RETURN_IF_ERROR(LastLogits(outputs[0], "decoder", c.batch_size, c.num_beams, vocab, &logits));
      (*search)->Step(rules, step, vocab, logits, StepScores(scores_out, step - 1));
      if ((*search)->scorer.AllDone()) break;
      if (++current < c.max_length) {
        const std::vector<int32_t>* rows = c.num_beams > 1 ? &(*search)->scorer.next_rows() : nullptr;
        ONNXFLOW_RETURN_IF_ERROR(t5_->DecoderAdvance(outputs, (*search)->scorer.next_tokens(), rows,
                                                     (*search)->sequences, &feeds));
      }
    }
    return Status::Ok();
  }

  const SearchAttributes attrs_;
  std::optional<GptDecoder> gpt_, gpt_init_;
  std::optional<T5Model> t5_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBeamSearch(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "BeamSearch", 1, kOpenEnded, Make<BeamSearch>(false)));
  return registry.Register(kMsDomain, "WhisperBeamSearch", 1, kOpenEnded, Make<BeamSearch>(true));
}

}  // namespace onnxflow
