// com.microsoft GreedySearch: a decoder-only model (model_type 0) decoded one arg-max token at a
// time, as ONNX Runtime's CPU kernel does (greedy_search_impl_gpt.h): the score rules on the raw
// logits, a row that produced eos continues with pad, and the loop stops when every row has.
//
// Inputs: input_ids, max_length, min_length, repetition_penalty, vocab_mask, prefix_vocab_mask,
// attention_mask. Output: sequences [batch, max_length] (int32).
#include <algorithm>
#include <optional>

#include "ops/framework/domains.h"
#include "ops/framework/registry.h"
#include "ops/generation/gpt_decoder.h"
#include "ops/generation/logits.h"
#include "ops/generation/search_inputs.h"
#include "ops/generation/subgraph_io.h"

namespace onnxflow {
namespace {

using namespace generation;

class GreedySearch : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(SearchAttributes attrs, SearchAttributes::Parse(info));
    if (attrs.model_type != kModelTypeGpt) {
      return Unimplemented("GreedySearch with model_type " + std::to_string(attrs.model_type) +
                           ": only 0 (a decoder-only model) is supported");
    }
    if (info.input_count() > 7 || info.output_count() > 1) {
      return Unimplemented("GreedySearch takes at most 7 inputs (through attention_mask) and returns sequences only");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(GptDecoder decoder, GptDecoder::Prepare(info, "decoder", attrs.vocab_size));
    ONNXFLOW_ASSIGN_OR_RETURN(std::optional<GptDecoder> init, GptDecoder::PrepareInit(info, decoder));
    if (attrs.eos_token_id >= decoder.vocab() || attrs.pad_token_id >= decoder.vocab()) {
      return InvalidArgument("attributes 'eos_token_id' and 'pad_token_id' must be below the vocabulary size " +
                             std::to_string(decoder.vocab()));
    }
    return std::unique_ptr<OpKernel>(new GreedySearch(attrs, std::move(decoder), std::move(init)));
  }

  Status Compute(KernelContext& ctx) const override {
    const int vocab = decoder_.vocab();
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* input_ids, ReadInputIds(ctx, vocab));
    const int batch = static_cast<int>(input_ids->dim(0)), length = static_cast<int>(input_ids->dim(1));
    if (!ctx.has_input(1)) return InvalidArgument("input 'max_length' is required");
    ONNXFLOW_ASSIGN_OR_RETURN(const int max_length, ScalarInt(ctx, 1, "max_length", 0));
    ONNXFLOW_RETURN_IF_ERROR(CheckMaxLength(max_length, length));
    ScoreRules rules;
    ONNXFLOW_ASSIGN_OR_RETURN(rules.min_length, ScalarInt(ctx, 2, "min_length", 0));
    ONNXFLOW_ASSIGN_OR_RETURN(rules.repetition_penalty, ScalarFloat(ctx, 3, "repetition_penalty", 1.0f));
    if (!(rules.repetition_penalty > 0.0f)) return InvalidArgument("input 'repetition_penalty' must be greater than 0");
    rules.no_repeat_ngram_size = attrs_.no_repeat_ngram_size;
    rules.eos_token_id = attrs_.eos_token_id;
    rules.batch_size = batch;
    ONNXFLOW_RETURN_IF_ERROR(ReadMasks(ctx, 4, 5, batch, vocab, &rules));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* attention_mask, ReadAttentionMask(ctx, 6, *input_ids));
    ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({batch, vocab}, sizeof(float), "the next-token scores"));

    std::vector<int32_t> prompt;
    ONNXFLOW_ASSIGN_OR_RETURN(GptDecoder::Feeds feeds,
                              decoder_.Start(*input_ids, attention_mask, 1, attrs_.pad_token_id, max_length, &prompt));
    Sequences sequences(batch, max_length, length, prompt);
    ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> frame, decoder_.graph().NewFrame(ctx));
    std::unique_ptr<SubgraphFrame> init_frame;
    if (init_) {
      ONNXFLOW_ASSIGN_OR_RETURN(init_frame, init_->graph().NewFrame(ctx));
    }
    std::vector<char> ended(batch, 0);
    std::vector<float> scores;
    std::vector<Value> outputs;
    std::vector<int32_t> tokens(batch);
    for (int current = length, step = 1; current < max_length; ++step) {
      ONNXFLOW_RETURN_IF_ERROR(ctx.run().CheckInterrupt());
      const bool first = step == 1 && init_frame != nullptr;  // init_decoder runs the prompt
      Status s = (first ? init_frame : frame)->Run(feeds.values, &outputs);  // moves every feed; Advance sets each again
      if (!s.ok()) return s.WithContext(std::string(first ? "graph 'init_decoder'" : "graph 'decoder'") + ", step " + std::to_string(step));
      ONNXFLOW_RETURN_IF_ERROR(LastLogits(outputs[0], "decoder", batch, 1, vocab, &scores));
      ApplyScoreRules(rules, sequences, step, vocab, scores.data());
      for (int b = 0; b < batch; ++b) {
        const float* row = scores.data() + static_cast<size_t>(b) * vocab;
        tokens[b] = static_cast<int32_t>(std::max_element(row, row + vocab) - row);  // first of equal maxima
        if (tokens[b] == attrs_.eos_token_id) ended[b] = 1;
        if (ended[b]) tokens[b] = attrs_.pad_token_id;
      }
      sequences.Append(tokens);
      if (std::all_of(ended.begin(), ended.end(), [](char e) { return e != 0; })) break;
      if (++current < max_length) {
        ONNXFLOW_RETURN_IF_ERROR(decoder_.Advance(outputs, tokens, nullptr, step > 1, &feeds));
      }
    }

    // Past the last step (every row ended early) ONNX Runtime leaves the output unwritten; pad here.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateUninitialized(0, DataType::kInt32, {batch, max_length}));
    int32_t* data = out->mutable_data<int32_t>();
    std::fill(data, data + out->size(), attrs_.pad_token_id);
    for (int b = 0; b < batch; ++b) {
      std::copy(sequences.row(b), sequences.row(b) + sequences.length(), data + static_cast<size_t>(b) * max_length);
    }
    return Status::Ok();
  }

 private:
  GreedySearch(const SearchAttributes& attrs, GptDecoder decoder, std::optional<GptDecoder> init)
      : attrs_(attrs), decoder_(std::move(decoder)), init_(std::move(init)) {}

  const SearchAttributes attrs_;
  const GptDecoder decoder_;
  const std::optional<GptDecoder> init_;
};

}  // namespace

Status RegisterGreedySearch(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "GreedySearch", 1, kOpenEnded, Make<GreedySearch>());
}

}  // namespace onnxflow
