#include "ops/generation/greedy_loop.h"

#include <algorithm>
#include <string>

#include "ops/generation/subgraph_io.h"

namespace onnxflow::generation {

Result<GreedyModel> GreedyModel::Prepare(const KernelInfo& info, const char* op, int max_inputs) {
  ONNXFLOW_ASSIGN_OR_RETURN(SearchAttributes attrs, SearchAttributes::Parse(info));
  if (attrs.model_type != kModelTypeGpt) {
    return Unimplemented(std::string(op) + " with model_type " + std::to_string(attrs.model_type) +
                         ": only 0 (a decoder-only model) is supported");
  }
  if (info.input_count() > max_inputs) {
    return InvalidArgument(std::string(op) + " takes at most " + std::to_string(max_inputs) + " inputs, got " +
                           std::to_string(info.input_count()));
  }
  ONNXFLOW_ASSIGN_OR_RETURN(GptDecoder decoder, GptDecoder::Prepare(info, "decoder", attrs.vocab_size));
  ONNXFLOW_ASSIGN_OR_RETURN(std::optional<GptDecoder> init, GptDecoder::PrepareInit(info, decoder));
  if (attrs.eos_token_id >= decoder.vocab() || attrs.pad_token_id >= decoder.vocab()) {
    return InvalidArgument("attributes 'eos_token_id' and 'pad_token_id' must be below the vocabulary size " +
                           std::to_string(decoder.vocab()));
  }
  return GreedyModel{attrs, std::move(decoder), std::move(init)};
}

Result<GreedyRun> ReadGreedyInputs(const KernelContext& ctx, const GreedyModel& model) {
  GreedyRun run;
  const int vocab = model.decoder.vocab();
  ONNXFLOW_ASSIGN_OR_RETURN(run.input_ids, ReadInputIds(ctx, vocab));
  run.batch = static_cast<int>(run.input_ids->dim(0));
  run.length = static_cast<int>(run.input_ids->dim(1));
  if (!ctx.has_input(1)) return InvalidArgument("input 'max_length' is required");
  ONNXFLOW_ASSIGN_OR_RETURN(run.max_length, ScalarInt(ctx, 1, "max_length", 0));
  ONNXFLOW_RETURN_IF_ERROR(CheckMaxLength(run.max_length, run.length, kMaxGreedyLength));
  ScoreRules& rules = run.rules;
  ONNXFLOW_ASSIGN_OR_RETURN(rules.min_length, ScalarInt(ctx, 2, "min_length", 0));
  ONNXFLOW_ASSIGN_OR_RETURN(rules.repetition_penalty, ScalarFloat(ctx, 3, "repetition_penalty", 1.0f));
  if (!(rules.repetition_penalty > 0.0f)) return InvalidArgument("input 'repetition_penalty' must be greater than 0");
  rules.no_repeat_ngram_size = model.attrs.no_repeat_ngram_size;
  rules.eos_token_id = model.attrs.eos_token_id;
  rules.batch_size = run.batch;
  ONNXFLOW_RETURN_IF_ERROR(ReadMasks(ctx, 4, 5, run.batch, vocab, &rules));
  ONNXFLOW_ASSIGN_OR_RETURN(run.attention_mask, ReadAttentionMask(ctx, 6, *run.input_ids));
  return run;
}

Status DecodeGreedy(KernelContext& ctx, const GreedyModel& model, const GreedyRun& run, TokenChooser& chooser) {
  const GptDecoder& decoder = model.decoder;
  const SearchAttributes& attrs = model.attrs;
  const int vocab = decoder.vocab(), batch = run.batch, max_length = run.max_length;
  ONNXFLOW_RETURN_IF_ERROR(ctx.CheckScratch({batch, vocab}, sizeof(float), "the next-token scores"));

  std::vector<int32_t> prompt;
  ONNXFLOW_ASSIGN_OR_RETURN(GptDecoder::Feeds feeds, decoder.Start(*run.input_ids, run.attention_mask, 1,
                                                                   attrs.pad_token_id, max_length, &prompt));
  Sequences sequences(batch, max_length, run.length, prompt);
  ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphFrame> frame, decoder.graph().NewFrame(ctx));
  std::unique_ptr<SubgraphFrame> init_frame;
  if (model.init) {
    ONNXFLOW_ASSIGN_OR_RETURN(init_frame, model.init->graph().NewFrame(ctx));
  }
  std::vector<char> ended(batch, 0);
  std::vector<float> scores;
  std::vector<Value> outputs;
  std::vector<int32_t> tokens(batch);
  for (int current = run.length, step = 1; current < max_length; ++step) {
    ONNXFLOW_RETURN_IF_ERROR(ctx.run().CheckInterrupt());
    const bool first = step == 1 && init_frame != nullptr;  // init_decoder runs the prompt
    Status s = (first ? init_frame : frame)->Run(feeds.values, &outputs);  // moves every feed; Advance sets each again
    if (!s.ok()) return s.WithContext(std::string(first ? "graph 'init_decoder'" : "graph 'decoder'") + ", step " + std::to_string(step));
    ONNXFLOW_RETURN_IF_ERROR(LastLogits(outputs[0], "decoder", batch, 1, vocab, &scores));
    ApplyScoreRules(run.rules, sequences, step, vocab, scores.data());
    ONNXFLOW_RETURN_IF_ERROR(chooser.Choose(scores.data(), batch, vocab, &tokens));
    for (int b = 0; b < batch; ++b) {
      if (tokens[b] == attrs.eos_token_id) ended[b] = 1;
      if (ended[b]) tokens[b] = attrs.pad_token_id;
    }
    sequences.Append(tokens);
    if (std::all_of(ended.begin(), ended.end(), [](char e) { return e != 0; })) break;
    if (++current < max_length) {
      ONNXFLOW_RETURN_IF_ERROR(decoder.Advance(outputs, tokens, nullptr, step > 1, &feeds));
    }
  }

  // Past the last step (every row ended early) ONNX Runtime leaves the output unwritten; pad here.
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateUninitialized(0, DataType::kInt32, {batch, max_length}));
  int32_t* data = out->mutable_data<int32_t>();
  std::fill(data, data + out->size(), attrs.pad_token_id);
  for (int b = 0; b < batch; ++b) {
    std::copy(sequences.row(b), sequences.row(b) + sequences.length(), data + static_cast<size_t>(b) * max_length);
  }
  return Status::Ok();
}

}  // namespace onnxflow::generation
