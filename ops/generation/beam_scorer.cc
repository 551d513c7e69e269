#include "ops/generation/beam_scorer.h"

#include <algorithm>
#include <cmath>

namespace onnxflow::generation {

BeamScorer::BeamScorer(const BeamConfig& config)
    : c_(config), sentences_(config.batch_size), not_done_(config.batch_size) {
  const size_t rows = static_cast<size_t>(c_.batch_size) * c_.num_beams;
  next_scores_.assign(rows, 0.0f);
  next_tokens_.assign(rows, 0);
  next_rows_.assign(rows, 0);
}

void BeamScorer::Add(Sentence& sentence, const int32_t* tokens, int length, float sum_logprobs) const {
  const float score = sum_logprobs / std::pow(static_cast<float>(length), c_.length_penalty);
  auto& best = sentence.best;
  if (static_cast<int>(best.size()) == c_.num_beams) {
    if (score <= best.back().score) return;
    best.pop_back();
  }
  // After every hypothesis of an equal score: the earlier one stays ahead.
  auto at = std::upper_bound(best.begin(), best.end(), score,
                             [](float s, const Hypothesis& h) { return s > h.score; });
  best.insert(at, Hypothesis{std::vector<int32_t>(tokens, tokens + length), score});
}

bool BeamScorer::CanImprove(const Sentence& sentence, float best_sum_logprobs, int length) const {
  const float current = best_sum_logprobs / std::pow(static_cast<float>(length), c_.length_penalty);
  return sentence.best.back().score < current;
}

void BeamScorer::Process(const Sequences& sequences, const std::vector<float>& scores,
                         const std::vector<int32_t>& tokens, const std::vector<int32_t>& beams) {
  const int length = sequences.length();
  const int beams_per = c_.num_beams, top_k = 2 * c_.num_beams;
  for (int b = 0; b < c_.batch_size; ++b) {
    Sentence& sentence = sentences_[b];
    const size_t out = static_cast<size_t>(b) * beams_per;
    if (sentence.done) {
      // A finished sentence's beams continue row 0 with pad; nothing reads them.
      for (int j = 0; j < beams_per; ++j) {
        next_scores_[out + j] = 0.0f;
        next_tokens_[out + j] = c_.pad_token_id;
        next_rows_[out + j] = 0;
      }
      continue;
    }
    int chosen = 0;
    for (int j = 0; j < top_k && chosen < beams_per; ++j) {
      const size_t k = static_cast<size_t>(b) * top_k + j;
      const int row = b * beams_per + beams[k];
      if (c_.eos_token_id >= 0 && tokens[k] == c_.eos_token_id) {
        // Only an eos among the top num_beams candidates ends a hypothesis (without the eos).
        if (j < beams_per) Add(sentence, sequences.row(row), length, scores[k]);
        continue;
      }
      next_scores_[out + chosen] = scores[k];
      next_tokens_[out + chosen] = tokens[k];
      next_rows_[out + chosen] = row;
      ++chosen;
    }
    if (static_cast<int>(sentence.best.size()) < beams_per) continue;
    if (!c_.early_stopping) {
      // ONNX Runtime reads the best candidate score from offset batch * num_beams of the
      // 2 * num_beams-per-sentence list (not batch * 2 * num_beams); kept so the stops match.
      const float* from = scores.data() + static_cast<size_t>(b) * beams_per;
      if (CanImprove(sentence, *std::max_element(from, from + top_k), length)) continue;
    }
    sentence.done = true;
    --not_done_;
  }
}

void BeamScorer::Finalize(const Sequences& sequences, const std::vector<float>& beam_scores, int32_t* out_sequences,
                          float* out_scores) {
  for (int b = 0; b < c_.batch_size; ++b) {
    Sentence& sentence = sentences_[b];
    if (sentence.done) continue;
    for (int j = 0; j < c_.num_beams; ++j) {
      const int row = b * c_.num_beams + j;
      Add(sentence, sequences.row(row), sequences.length(), beam_scores[row]);
    }
  }
  const int R = c_.num_return_sequences;
  std::fill(out_sequences, out_sequences + static_cast<size_t>(c_.batch_size) * R * c_.max_length, c_.pad_token_id);
  for (int b = 0; b < c_.batch_size; ++b) {
    const auto& best = sentences_[b].best;
    for (int i = 0; i < R && i < static_cast<int>(best.size()); ++i) {
      std::copy(best[i].tokens.begin(), best[i].tokens.end(),
                out_sequences + (static_cast<size_t>(b) * R + i) * c_.max_length);
      if (out_scores != nullptr) out_scores[static_cast<size_t>(b) * R + i] = best[i].score;
    }
  }
}

}  // namespace onnxflow::generation
