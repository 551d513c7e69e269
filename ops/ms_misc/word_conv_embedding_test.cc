// WordConvEmbedding: a hand-computed embedding (1-wide characters so every sum is visible), ONNX
// Runtime's length and lookup rules, and the refusals of what it would read out of bounds.
// HandComputed is what ONNX Runtime 1.30 gives too (its skipped row came out 0 there).
#include <gtest/gtest.h>

#include <cmath>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

Tensor F(Shape s, std::vector<float> v) { return Tensor::FromVector<float>(std::move(s), v); }

OpTest Embed(Tensor seq, Tensor w, Tensor b, Tensor c) {
  OpTest t("WordConvEmbedding", 1, kMsDomain);
  t.Input(std::move(seq)).Input(std::move(w)).Input(std::move(b)).Input(std::move(c));
  return t;
}

TEST(WordConvEmbedding, HandComputed) {
  // Character table (char_dim 1): id k -> 0.1 * k. One filter of width 2, weights (1, -1), bias 0.05:
  // a window (a, b) gives tanh(0.1 a - 0.1 b + 0.05).
  std::vector<float> table;
  for (int k = 0; k < 10; ++k) table.push_back(0.1f * k);
  const Tensor seq = Tensor::FromVector<int32_t>(
      {4, 4}, {
                  3, 1, 4, 0,  // length 3: windows (3,1) (1,4)
                  2, 0, 7, 0,  // length 2 (the 0 inside counts nothing): looks up ids 2, 0; window (2,0)
                  5, 0, 0, 0,  // length 1, shorter than the window: looks up max(1, 2) = 2 ids, window (5,0)
                  0, 6, 6, 6,  // first id 0: length 0, skipped, its row 0
              });
  auto out = Embed(seq, F({1, 1, 2, 1}, {1, -1}), F({1}, {0.05f}), F({10, 1}, table)).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float w0 = std::max(std::tanh(0.3f - 0.1f + 0.05f), std::tanh(0.1f - 0.4f + 0.05f));
  const float w1 = std::tanh(0.2f - 0.0f + 0.05f), w2 = std::tanh(0.5f + 0.05f);
  EXPECT_TRUE(TensorsNear(F({4, 1}, {w0, w1, w2, 0.0f}), (*out)[0].tensor(), 1e-6, 1e-6));
}

TEST(WordConvEmbedding, SeveralFiltersAndCharacterDims) {
  // char_dim 2, width 1, two filters: filter f's value per char is dot(W[f], C[id]); words of one
  // char each, so the max is that one value.
  const Tensor seq = Tensor::FromVector<int32_t>({2, 1}, {1, 2});
  const Tensor c = F({3, 2}, {0, 0, 0.5f, -0.25f, 1, 2});
  const Tensor w = F({2, 1, 1, 2}, {1, 1, 0.5f, -1});
  auto run = Embed(seq, w, F({2}, {0, 0.1f}), c);
  run.Attr("embedding_size", int64_t{2}).Attr("conv_window_size", int64_t{1}).Attr("char_embedding_size", int64_t{2});
  auto out = run.Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(
      TensorsNear(F({2, 2}, {std::tanh(0.25f), std::tanh(0.5f + 0.1f), std::tanh(3.0f), std::tanh(-1.5f + 0.1f)}),
                  (*out)[0].tensor(), 1e-6, 1e-6));
}

TEST(WordConvEmbedding, RefusesWhatWouldReadOutOfBounds) {
  const Tensor w = F({1, 1, 2, 1}, {1, 1});
  const Tensor b = F({1}, {0});
  const Tensor c = F({4, 1}, {0, 1, 2, 3});
  auto run = [](OpTest t) { return t.Run(RegisterMsMiscKernels); };
  EXPECT_TRUE(Refused(run(Embed(Tensor::FromVector<int32_t>({1, 3}, {1, 4, 0}), w, b, c)), StatusCode::kOutOfRange,
                      "input 'Sequence' has id 4"));
  // A negative id inside the looked-up prefix of a word (length counts positives only).
  EXPECT_TRUE(
      Refused(run(Embed(Tensor::FromVector<int32_t>({1, 3}, {1, -2, 3}), w, b, c)), StatusCode::kOutOfRange, "id -2"));
  // Width 2 over words of one char.
  EXPECT_TRUE(Refused(run(Embed(Tensor::FromVector<int32_t>({2, 1}, {1, 2}), w, b, c)), StatusCode::kInvalidArgument,
                      "width 2"));
  EXPECT_TRUE(Refused(run(Embed(Tensor::FromVector<int32_t>({1, 3}, {1, 2, 3}), F({1, 2, 2, 1}, {1, 1, 1, 1}), b, c)),
                      StatusCode::kInvalidArgument, "input 'W'"));
  EXPECT_TRUE(Refused(run(Embed(Tensor::FromVector<int32_t>({1, 3}, {1, 2, 3}), w, F({2}, {0, 0}), c)),
                      StatusCode::kInvalidArgument, "input 'B'"));
  EXPECT_TRUE(
      Refused(run(Embed(Tensor::FromVector<int32_t>({1, 3}, {1, 2, 3}), w, b, F({4, 2}, std::vector<float>(8)))),
              StatusCode::kInvalidArgument, "character embedding size"));
  EXPECT_TRUE(Refused(run(Embed(Tensor::FromVector<int32_t>({3}, {1, 2, 3}), w, b, c)), StatusCode::kInvalidArgument,
                      "input 'Sequence'"));
  EXPECT_TRUE(Refused(run(Embed(Tensor::FromVector<int64_t>({1, 3}, {1, 2, 3}), w, b, c)), StatusCode::kInvalidArgument,
                      "input 'Sequence' must be int32"));
  EXPECT_TRUE(Refused(run(Embed(Tensor::FromVector<int32_t>({1, 3}, {1, 2, 3}), w, b,
                                Tensor::FromVector<double>({4, 1}, {0, 1, 2, 3}))),
                      StatusCode::kInvalidArgument, "input 'C' must be float"));
  for (const char* attr : {"embedding_size", "conv_window_size", "char_embedding_size"}) {
    OpTest t = Embed(Tensor::FromVector<int32_t>({1, 3}, {1, 2, 3}), w, b, c);
    t.Attr(attr, int64_t{7});
    EXPECT_TRUE(Refused(run(t), StatusCode::kInvalidArgument, std::string("'") + attr + "' 7"));
  }
  OpTest three("WordConvEmbedding", 1, kMsDomain);
  three.Input(Tensor::FromVector<int32_t>({1, 3}, {1, 2, 3})).Input(w).Input(b);
  EXPECT_TRUE(Refused(three.Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "4 inputs"));
}

}  // namespace
}  // namespace onnxflow
