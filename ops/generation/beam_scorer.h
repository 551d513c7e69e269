// Beam hypotheses and their selection as ONNX Runtime's CPU BeamSearchScorer keeps them
// (contrib_ops/cpu/transformers/beam_search_scorer.cc), so the sequences returned match its to
// the token: a finished hypothesis scores its summed log-probability over length^length_penalty,
// a sentence is done when it holds num_beams hypotheses and (unless early_stopping) none of its
// open beams can beat the worst of them, and sequences come out best first.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/generation/sequences.h"

namespace onnxflow::generation {

struct BeamConfig {
  int batch_size = 1;
  int num_beams = 1;
  int max_length = 1;
  int num_return_sequences = 1;
  float length_penalty = 1.0f;
  bool early_stopping = false;
  int pad_token_id = 0;
  int eos_token_id = -1;
};

class BeamScorer {
 public:
  explicit BeamScorer(const BeamConfig& config);

  // One step's 2 * num_beams candidates per sentence (scores largest first, tokens, the beam each
  // continues as an index in [0, num_beams)): picks each sentence's next beams and files the
  // candidates that end in eos among the top num_beams as hypotheses.
  void Process(const Sequences& sequences, const std::vector<float>& scores, const std::vector<int32_t>& tokens,
               const std::vector<int32_t>& beams);

  bool AllDone() const { return not_done_ == 0; }
  // The chosen beams of the last step: score, token, and the row (batch * num_beams + beam) each continues.
  const std::vector<float>& next_scores() const { return next_scores_; }
  const std::vector<int32_t>& next_tokens() const { return next_tokens_; }
  const std::vector<int32_t>& next_rows() const { return next_rows_; }

  // Adds the open beams of unfinished sentences, then writes num_return_sequences sequences per
  // sentence ([batch, R, max_length], pad after each) and their scores (may be null).
  void Finalize(const Sequences& sequences, const std::vector<float>& beam_scores, int32_t* out_sequences,
                float* out_scores);

 private:
  struct Hypothesis {
    std::vector<int32_t> tokens;
    float score;
  };
  // One sentence's best num_beams hypotheses, best first.
  struct Sentence {
    std::vector<Hypothesis> best;
    bool done = false;
  };
  void Add(Sentence& sentence, const int32_t* tokens, int length, float sum_logprobs) const;
  bool CanImprove(const Sentence& sentence, float best_sum_logprobs, int length) const;

  BeamConfig c_;
  std::vector<Sentence> sentences_;
  int not_done_;
  std::vector<float> next_scores_;
  std::vector<int32_t> next_tokens_, next_rows_;
};

}  // namespace onnxflow::generation
