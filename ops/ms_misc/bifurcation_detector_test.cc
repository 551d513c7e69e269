// BifurcationDetector: hand-worked token merges and suffix matches, and the refusals. The no-prediction
// cases (unique, repeated, ending at the source end) give the same in ONNX Runtime 1.30.
#include <gtest/gtest.h>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

Tensor I(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>({n}, v);
}

OpTest Detector(Tensor src, Tensor cur, Tensor prev, std::optional<Tensor> pred, int64_t min_n = 1, int64_t max_n = 3) {
  OpTest t("BifurcationDetector", 1, kMsDomain);
  t.Input(std::move(src)).Input(std::move(cur)).Input(std::move(prev));
  if (pred) t.Input(std::move(*pred));
  t.Outputs(2).Attr("min_ngram_size", min_n).Attr("max_ngram_size", max_n);
  return t;
}

void ExpectTokens(const Result<std::vector<Value>>& out, const std::vector<int64_t>& tokens, int64_t idx) {
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(I(tokens), (*out)[0].tensor()));
  EXPECT_TRUE(TensorsEqual(I({idx}), (*out)[1].tensor()));
}

TEST(BifurcationDetector, PredictionUpToItsFirstDepartureJoinsTheTokens) {
  // src from prev = 2 is (3, 4, 5); pred (3, 4, 9, 9) departs at 2: tokens gain pred[0..2] = 3, 4, 9.
  // The 1-gram (9) is not in src: the search stops at once, -1.
  ExpectTokens(Detector(I({1, 2, 3, 4, 5}), I({0}), I({2}), I({3, 4, 9, 9})).Run(RegisterMsMiscKernels), {0, 3, 4, 9},
               -1);
}

TEST(BifurcationDetector, UniqueSuffixGivesTheIndexAfterIt) {
  // No prediction: tokens = cur = (6, 2, 3). 1-gram (3) once in src at 2 -> 3; 2-gram (2, 3) once
  // -> 3; 3-gram (6, 2, 3) absent: stop, keeping 3.
  ExpectTokens(Detector(I({1, 2, 3, 4}), I({6, 2, 3}), I({0}), std::nullopt).Run(RegisterMsMiscKernels), {6, 2, 3}, 3);
}

TEST(BifurcationDetector, RepeatedNgramGivesMinusOneThenLongerOnesAreTried) {
  // (5) occurs twice -> -1; (7, 5) once, ends at 4 -> 4.
  ExpectTokens(Detector(I({5, 1, 7, 5, 8}), I({7, 5}), I({0}), std::nullopt).Run(RegisterMsMiscKernels), {7, 5}, 4);
  // Only the 1-gram is searched: -1.
  ExpectTokens(Detector(I({5, 1, 7, 5, 8}), I({7, 5}), I({0}), std::nullopt, 1, 1).Run(RegisterMsMiscKernels), {7, 5},
               -1);
}

TEST(BifurcationDetector, MatchEndingAtTheSourceEndStopsWithItsLength) {
  // (3) ends src (index 3 == S): ONNX Runtime stops there and returns S, not -1.
  ExpectTokens(Detector(I({1, 2, 3}), I({3}), I({0}), std::nullopt).Run(RegisterMsMiscKernels), {3}, 3);
}

TEST(BifurcationDetector, WholePredictionTakenWhenItFollowsTheSource) {
  // prev = S: pred has one token, taken whole.
  ExpectTokens(Detector(I({1, 2}), I({4}), I({2}), I({9})).Run(RegisterMsMiscKernels), {4, 9}, -1);
}

TEST(BifurcationDetector, HugeMaxNgramStopsAtTheTokens) {
  ExpectTokens(Detector(I({1, 2, 3, 4}), I({2, 3}), I({0}), std::nullopt, 1, INT64_MAX).Run(RegisterMsMiscKernels),
               {2, 3}, 3);
}

TEST(BifurcationDetector, ScalarPrevGivesAScalarIndex) {
  auto out = Detector(I({1, 2, 3, 4}), I({2}), Tensor::Scalar<int64_t>(0), std::nullopt).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::Scalar<int64_t>(2), (*out)[1].tensor()));
}

TEST(BifurcationDetector, RefusesMalformedInputs) {
  auto run = [](OpTest t) { return t.Run(RegisterMsMiscKernels); };
  EXPECT_TRUE(Refused(run(Detector(I({1, 2}), I({1}), I({3}), I({1}))), StatusCode::kInvalidArgument,
                      "'prev_suffix_match_idx' 3"));
  EXPECT_TRUE(Refused(run(Detector(I({1, 2}), I({1}), I({-1}), I({1, 2, 3, 4}))), StatusCode::kInvalidArgument,
                      "'prev_suffix_match_idx' -1"));
  EXPECT_TRUE(Refused(run(Detector(I({1, 2}), I({1}), I({0}), I({1, 2}))), StatusCode::kInvalidArgument,
                      "input 'pred_tokens'"));
  EXPECT_TRUE(
      Refused(run(Detector(I({1, 2}), I({1}), I({0, 0}), std::nullopt)), StatusCode::kInvalidArgument, "one value"));
  EXPECT_TRUE(
      Refused(run(Detector(I({1, 2}), I({1}), I({}), std::nullopt)), StatusCode::kInvalidArgument, "one value"));
  EXPECT_TRUE(Refused(run(Detector(Tensor::FromVector<int64_t>({1, 2}, {1, 2}), I({1}), I({0}), std::nullopt)),
                      StatusCode::kInvalidArgument, "input 'src_tokens' must be 1-D"));
  EXPECT_TRUE(Refused(run(Detector(I({1, 2}), Tensor::FromVector<int32_t>({1}, {1}), I({0}), std::nullopt)),
                      StatusCode::kInvalidArgument, "input 'cur_tokens' must be int64"));
  EXPECT_TRUE(Refused(run(Detector(I({1}), I({1}), I({0}), std::nullopt, 0, 3)), StatusCode::kInvalidArgument,
                      "'min_ngram_size'"));
  EXPECT_TRUE(Refused(run(Detector(I({1}), I({1}), I({0}), std::nullopt, 3, 2)), StatusCode::kInvalidArgument,
                      "'max_ngram_size'"));
  OpTest two("BifurcationDetector", 1, kMsDomain);
  two.Input(I({1})).Input(I({1})).Outputs(2);
  EXPECT_TRUE(Refused(two.Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "prev_suffix_match_idx"));
}

}  // namespace
}  // namespace onnxflow
