// What ONNX Runtime's CPU generation ops do to a step's scores before choosing tokens
// (contrib_ops/cpu/transformers/logits_processor.*, generation_device_helper.cc), in its order:
// repetition penalty, no-repeat n-grams, the vocabulary mask, the prefix mask (first step only),
// the minimum length, the temperature (Whisper's input, Sampling's attribute; scores divided by it),
// Sampling's presence penalty. Beam search applies them to log-probabilities, greedy search and
// sampling to raw logits.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/generation/sequences.h"

namespace onnxflow::generation {

struct ScoreRules {
  float repetition_penalty = 1.0f;  // 1: none
  int no_repeat_ngram_size = 0;     // 0: none
  int min_length = 0;               // eos is barred while the rows are shorter
  int eos_token_id = -1;
  const int32_t* vocab_mask = nullptr;         // [vocab]; 0 bars a token
  const int32_t* prefix_vocab_mask = nullptr;  // [batch, vocab], first step only
  int batch_size = 1;                          // rows of the prefix mask; rows / batch_size beams each
  float temperature = 1.0f;                    // 1: none
  // Sampling's presence_mask [batch, vocab] and presence_penalty. ONNX Runtime 1.30's processor
  // (PresencePenaltyLogitsProcessor) never advances its score pointer: every mask entry times the
  // penalty comes off the first score of the first row, one subtraction each, and no other score
  // changes. That is what it returns, so that is what this does.
  const int32_t* presence_mask = nullptr;
  float presence_penalty = 0.0f;  // 0: none
};

// `scores` holds sequences.rows() rows of `vocab` values; `step` counts from 1.
void ApplyScoreRules(const ScoreRules& rules, const Sequences& sequences, int step, int vocab, float* scores);

// log(softmax(row)) of `rows` rows of `vocab` values, from `in` to `out`.
void LogSoftmaxRows(const float* in, int rows, int vocab, float* out);

// The `k` largest of `n` values, largest first, ties to the lower index (ONNX Runtime's TopK).
void TopK(const float* values, int64_t n, int k, std::vector<float>* top, std::vector<int64_t>* indices);

}  // namespace onnxflow::generation
