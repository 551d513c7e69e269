// com.microsoft BeamSearch as ONNX Runtime's CPU kernel runs it (beam_search_impl_gpt.h,
// beam_search_impl_t5.h, generation_device_helper.cc's ProcessLogits): each step takes the last
// position's logits, log-softmax, the score rules, adds each beam's running score, keeps the
// 2 * num_beams best (beam, token) pairs of each sentence and lets the scorer pick the next beams
// (beam_scorer.h). model_type 0 runs a GPT-2 style `decoder` (gpt_decoder.h); model_type 1 a T5 /
// BART `encoder` whose logits give the first token and a `decoder` for the rest (t5_model.h).
//
// Inputs: input_ids, max_length, min_length, num_beams, num_return_sequences, length_penalty,
// repetition_penalty, vocab_mask, prefix_vocab_mask, attention_mask. Outputs: sequences
// [batch, num_return_sequences, max_length], sequences_scores [batch, num_return_sequences],
// scores [max_length - input length, batch, num_beams, vocab] (each step's beam scores).
#include <algorithm>
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

class BeamSearch : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(SearchAttributes attrs, SearchAttributes::Parse(info));
    // Whisper's inputs (decoder_input_ids, logits_processor, cross_qk_layer_head, extra_decoding_ids,
    // temperature) and outputs (cross_qk, non_speech_probs) are another kernel's.
    if (info.input_count() > 10 || info.output_count() > 3) {
      return Unimplemented("BeamSearch takes at most 10 inputs (through attention_mask) and 3 outputs here");
    }
    std::unique_ptr<BeamSearch> k(new BeamSearch(attrs));
    if (attrs.model_type == kModelTypeGpt) {
      ONNXFLOW_ASSIGN_OR_RETURN(GptDecoder d, GptDecoder::Prepare(info, "decoder", attrs.vocab_size));
      ONNXFLOW_ASSIGN_OR_RETURN(k->gpt_init_, GptDecoder::PrepareInit(info, d));
      k->gpt_.emplace(std::move(d));
    } else {
      if (attrs.decoder_start_token_id < 0) {
        return InvalidArgument("attribute 'decoder_start_token_id' must be set (>= 0) for model_type 1");
      }
      ONNXFLOW_ASSIGN_OR_RETURN(T5Model m, T5Model::Prepare(info, attrs.vocab_size));
      k->t5_.emplace(std::move(m));
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
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* input_ids, ReadInputIds(ctx, vocab));
    const int batch = static_cast<int>(input_ids->dim(0));
    // The rows start with the prompt (GPT-2) or with the decoder's start token (T5).
    const int length = gpt_ ? static_cast<int>(input_ids->dim(1)) : 1;
    if (!ctx.has_input(1)) return InvalidArgument("input 'max_length' is required");
    BeamConfig c;
    c.batch_size = batch;
    ONNXFLOW_ASSIGN_OR_RETURN(c.max_length, ScalarInt(ctx, 1, "max_length", 0));
    ONNXFLOW_RETURN_IF_ERROR(CheckMaxLength(c.max_length, length));
    if (t5_ && c.max_length < 3) {
      // ONNX Runtime's T5 loop never prepares the decoder then, and fails.
      return InvalidArgument("input 'max_length' must be at least 3 for model_type 1, got " + std::to_string(c.max_length));
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
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* attention_mask, ReadAttentionMask(ctx, 9, *input_ids));
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
                    : RunT5(ctx, *input_ids, attention_mask, c, rules, scores_out, &search);
    ONNXFLOW_RETURN_IF_ERROR(s);
    search->scorer.Finalize(search->sequences, search->beam_scores, sequences_out->mutable_data<int32_t>(),
                            ctx.has_output(1) ? sequences_scores->mutable_data<float>() : nullptr);
    return Status::Ok();
  }

 private:
  explicit BeamSearch(const SearchAttributes& attrs) : attrs_(attrs) {}
  int vocab() const { return gpt_ ? gpt_->vocab() : t5_->vocab(); }

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

  Status RunT5(KernelContext& ctx, const Tensor& input_ids, const Tensor* attention_mask, const BeamConfig& c,
               const ScoreRules& rules, Tensor* scores_out, std::optional<Search>* search) const {
    const int vocab = t5_->vocab();
    const std::vector<int32_t> start(static_cast<size_t>(c.batch_size) * c.num_beams, attrs_.decoder_start_token_id);
    search->emplace(c, Sequences(c.batch_size * c.num_beams, c.max_length, 1, start));
    std::vector<Value> encoder_feeds =
        t5_->EncoderFeeds(input_ids, attention_mask, attrs_.pad_token_id, attrs_.decoder_start_token_id);
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
    for (int current = 2, step = 2; current < c.max_length; ++step) {
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

Status RegisterBeamSearch(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "BeamSearch", 1, kOpenEnded, Make<BeamSearch>());
}

}  // namespace onnxflow
