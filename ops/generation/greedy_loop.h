// The decoding loop com.microsoft GreedySearch and Sampling share (ONNX Runtime runs both through
// greedy_search_impl_gpt.h): a decoder-only model (model_type 0) run once per step, the score rules
// on the last position's raw logits, one token per row, a row that produced eos continues with
// pad, and the loop stops when every row has. The one thing the two ops do differently is how a
// row's token comes out of its processed scores: GreedySearch takes the arg-max, Sampling draws it
// (top_p_sampler.h). That choice is the TokenChooser a run passes in.
//
// Shared inputs 0-6: input_ids, max_length, min_length, repetition_penalty, vocab_mask,
// prefix_vocab_mask, attention_mask. Output 0: sequences [batch, max_length] (int32).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/generation/gpt_decoder.h"
#include "ops/generation/logits.h"
#include "ops/generation/search_inputs.h"

namespace onnxflow::generation {

// Picks one token per row from a step's processed scores ([rows, vocab], which it may overwrite).
// A chooser lives for one run: it may keep state across steps (the sampler's random engine).
class TokenChooser {
 public:
  virtual ~TokenChooser() = default;
  virtual Status Choose(float* scores, int rows, int vocab, std::vector<int32_t>* tokens) = 0;
};

// What a greedy-family node holds from load on: its attributes and prepared decoder graphs.
struct GreedyModel {
  SearchAttributes attrs;
  GptDecoder decoder;
  std::optional<GptDecoder> init;  // ONNX Runtime's optional graph for the first run

  // `op` names the node's op in refusals; the node may use at most `max_inputs` inputs.
  static Result<GreedyModel> Prepare(const KernelInfo& info, const char* op, int max_inputs);
};

// One run's shared inputs, read and checked: the caller may add rules before decoding.
struct GreedyRun {
  const Tensor* input_ids = nullptr;
  const Tensor* attention_mask = nullptr;  // may be null
  int batch = 0, length = 0, max_length = 0;
  ScoreRules rules;
};

Result<GreedyRun> ReadGreedyInputs(const KernelContext& ctx, const GreedyModel& model);

// Runs the loop and writes output 0.
Status DecodeGreedy(KernelContext& ctx, const GreedyModel& model, const GreedyRun& run, TokenChooser& chooser);

}  // namespace onnxflow::generation
