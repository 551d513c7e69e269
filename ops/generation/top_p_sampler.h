// How com.microsoft Sampling draws a row's next token, as ONNX Runtime's CPU kernel does
// (sampling_cpu_helper.h, then the Multinomial kernel it shares, core/providers/cpu/generator/random.cc):
//
// 1. Top-p filter. The row's scores are sorted (ascending; descending with `custom`) and their
//    softmax summed in that order in float. Ascending: a token whose running sum is at most
//    1 - top_p gets filter_value, except the last min_tokens_to_keep of the order (the largest).
//    Custom: once the running sum passes top_p, the next token in the order and all after it get
//    filter_value; the largest token always stays.
// 2. Multinomial. In double: exp(score - max) over the finite scores (max of the finite ones),
//    their running sum as a cdf, u uniform in [0, 1), the token the first cdf entry above u * sum.
//
// The random numbers: one std::default_random_engine per run seeded with the seed input (0 when
// absent), one uniform double per row per step in row order, every row drawn even after it ended.
// In libstdc++ (ONNX Runtime's Linux build) that engine is minstd_rand0, where seed 0 means 1, and
// uniform_real_distribution<double> is generate_canonical<double, 53>: two draws, the first the low
// part. Both are written out here so that a build on another standard library draws the same numbers.
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/status.h"
#include "ops/generation/greedy_loop.h"

namespace onnxflow::generation {

struct TopPParams {
  float top_p = 0.0f;
  float filter_value = 0.0f;
  int min_tokens_to_keep = 0;
  bool custom = false;
};

// std::minstd_rand0 and libstdc++'s uniform_real_distribution<double>(0, 1) over it.
class Minstd0 {
 public:
  explicit Minstd0(uint32_t seed) : state_(seed % kModulus == 0 ? 1 : seed % kModulus) {}
  uint32_t Next() {
    state_ = static_cast<uint32_t>(uint64_t{state_} * 16807 % kModulus);
    return state_;
  }
  double Uniform();

  static constexpr uint32_t kModulus = 2147483647;

 private:
  uint32_t state_;
};

// Step 1 on one row of `vocab` scores, in place. `probs` is scratch of `vocab` floats, `order` of
// `vocab` indices.
void FilterTopP(const TopPParams& params, float* row, int vocab, std::vector<float>* probs,
                std::vector<int32_t>* order);

// Step 2 on one filtered row for the uniform number `u`; `vocab` when no score is finite or every
// weight is 0 (ONNX Runtime then returns that index, past the vocabulary).
int32_t DrawToken(const float* row, int vocab, double u, std::vector<double>* cdf);

// The Sampling node's chooser for one run.
class TopPChooser : public TokenChooser {
 public:
  TopPChooser(const TopPParams& params, uint32_t seed) : params_(params), engine_(seed) {}
  Status Choose(float* scores, int rows, int vocab, std::vector<int32_t>* tokens) override;

 private:
  const TopPParams params_;
  Minstd0 engine_;
  std::vector<float> probs_;
  std::vector<int32_t> order_;
  std::vector<double> cdf_;
};

}  // namespace onnxflow::generation
