// The attributes and run-time inputs GreedySearch and BeamSearch share, read and checked once per
// node or run. Every refusal names the attribute or input; the runtime adds node and op.
#pragma once

#include <cstdint>
#include <string>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/generation/logits.h"

namespace onnxflow::generation {

inline constexpr int kModelTypeGpt = 0;
inline constexpr int kModelTypeT5 = 1;
inline constexpr int kModelTypeWhisper = 2;
// ONNX Runtime's bounds (beam_search_parameters.cc): buffers are sized from them before any step.
inline constexpr int kMaxLength = 4096;
// GreedySearch's and Sampling's (greedy_search_parameters.cc).
inline constexpr int kMaxGreedyLength = 16384;
inline constexpr int kMaxBeams = 128;

struct SearchAttributes {
  int eos_token_id = -1;
  int pad_token_id = -1;
  int decoder_start_token_id = -1;
  int no_repeat_ngram_size = 0;
  int vocab_size = -1;  // -1 or 0: the decoder's logits say
  int model_type = kModelTypeGpt;
  bool early_stopping = false;

  static Result<SearchAttributes> Parse(const KernelInfo& info);
};

// Input `index` (`name`) as one int32 or float value; `fallback` when the input is absent.
Result<int> ScalarInt(const KernelContext& ctx, int index, const char* name, int fallback);
Result<float> ScalarFloat(const KernelContext& ctx, int index, const char* name, float fallback);

// input_ids as [batch, length] int32 with every token in [0, vocab).
Result<const Tensor*> ReadInputIds(const KernelContext& ctx, int vocab);

// The masks of `rules` (vocab_mask [vocab], prefix_vocab_mask [batch, vocab]) from their inputs,
// and attention_mask ([batch, length] like input_ids, may be null).
Status ReadMasks(const KernelContext& ctx, int vocab_mask_index, int prefix_mask_index, int batch, int vocab,
                 ScoreRules* rules);
Result<const Tensor*> ReadAttentionMask(const KernelContext& ctx, int index, const Tensor& input_ids);

// max_length against the prompt length and `limit` (kMaxLength or kMaxGreedyLength).
Status CheckMaxLength(int max_length, int length, int limit = kMaxLength);

}  // namespace onnxflow::generation
