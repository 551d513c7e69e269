#include "ops/generation/logits.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "ops/nn/row_kernels.h"

namespace onnxflow::generation {
namespace {

// ONNX Runtime bars a token with the lowest float, not -inf: a barred token plus a beam score
// stays finite (and ties with other barred tokens, broken by index).
constexpr float kBarred = std::numeric_limits<float>::lowest();

void PenalizeRepeats(float penalty, const Sequences& sequences, int vocab, float* scores) {
  for (int r = 0; r < sequences.rows(); ++r) {
    float* row = scores + static_cast<size_t>(r) * vocab;
    const int32_t* tokens = sequences.row(r);
    std::unordered_set<int32_t> seen(tokens, tokens + sequences.length());
    // Scores are log-probabilities (or logits of one sign): a penalty above 1 makes both kinds less likely.
    for (int32_t t : seen) row[t] = row[t] < 0 ? row[t] * penalty : row[t] / penalty;
  }
}

void BlockRepeatedNgrams(int n, const Sequences& sequences, int vocab, float* scores) {
  const int length = sequences.length();
  if (n > length) return;
  for (int r = 0; r < sequences.rows(); ++r) {
    const int32_t* tokens = sequences.row(r);
    const int32_t* prefix = tokens + length - (n - 1);  // the last n - 1 tokens
    float* row = scores + static_cast<size_t>(r) * vocab;
    for (int j = 0; j + n <= length; ++j) {
      if (std::equal(prefix, prefix + n - 1, tokens + j)) row[tokens[j + n - 1]] = kBarred;
    }
  }
}

}  // namespace

void ApplyScoreRules(const ScoreRules& rules, const Sequences& sequences, int step, int vocab, float* scores) {
  const int rows = sequences.rows();
  if (rules.repetition_penalty != 1.0f) PenalizeRepeats(rules.repetition_penalty, sequences, vocab, scores);
  if (rules.no_repeat_ngram_size > 0) BlockRepeatedNgrams(rules.no_repeat_ngram_size, sequences, vocab, scores);
  if (rules.vocab_mask != nullptr) {
    for (int r = 0; r < rows; ++r) {
      for (int t = 0; t < vocab; ++t) {
        if (rules.vocab_mask[t] == 0) scores[static_cast<size_t>(r) * vocab + t] = kBarred;
      }
    }
  }
  if (rules.prefix_vocab_mask != nullptr && step == 1) {
    const int beams = rows / rules.batch_size;
    for (int r = 0; r < rows; ++r) {
      const int32_t* mask = rules.prefix_vocab_mask + static_cast<size_t>(r / beams) * vocab;
      for (int t = 0; t < vocab; ++t) {
        if (mask[t] == 0) scores[static_cast<size_t>(r) * vocab + t] = kBarred;
      }
    }
  }
  if (rules.min_length > 0 && sequences.length() < rules.min_length) {
    for (int r = 0; r < rows; ++r) scores[static_cast<size_t>(r) * vocab + rules.eos_token_id] = kBarred;
  }
  if (rules.temperature != 1.0f) {
    // After the masks, as ONNX Runtime's list orders it: a barred token becomes lowest / temperature.
    const size_t n = static_cast<size_t>(rows) * vocab;
    for (size_t i = 0; i < n; ++i) scores[i] /= rules.temperature;
  }
  if (rules.presence_mask != nullptr && rules.presence_penalty != 0.0f) {
    const size_t n = static_cast<size_t>(rows) * vocab;
    for (size_t i = 0; i < n; ++i) scores[0] -= static_cast<float>(rules.presence_mask[i]) * rules.presence_penalty;
  }
}

// On the SIMD row kernels Softmax and LogSoftmax use: a vocabulary of 50 K tokens per beam and
// step took a scalar exp each.
void LogSoftmaxRows(const float* in, int rows, int vocab, float* out) {
  for (int r = 0; r < rows; ++r) {
    const float* x = in + static_cast<size_t>(r) * vocab;
    float* y = out + static_cast<size_t>(r) * vocab;
    const float max = RowMax(x, vocab);
    const float log_sum = std::log(ExpShiftSum(x, max, y, vocab));  // y holds the exps meanwhile
    AffineRow(x, 1.0f, -max - log_sum, y, vocab);
  }
}

void TopK(const float* values, int64_t n, int k, std::vector<float>* top, std::vector<int64_t>* indices) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  // NaN (a broken decoder) ranks last, so the order stays strict and weak.
  auto key = [values](int64_t i) { return std::isnan(values[i]) ? -std::numeric_limits<float>::infinity() : values[i]; };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&key](int64_t a, int64_t b) {
    const float ka = key(a), kb = key(b);
    return ka > kb || (ka == kb && a < b);
  });
  for (int i = 0; i < k; ++i) {
    indices->push_back(order[i]);
    top->push_back(values[order[i]]);
  }
}

}  // namespace onnxflow::generation
