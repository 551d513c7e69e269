#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/text/register.h"

namespace onnxflow {
namespace {

Tensor Floats(Shape shape, std::vector<float> v) { return Tensor::FromVector<float>(std::move(shape), v); }

OpTest Vectorizer(const std::string& mode, int64_t min_gram, int64_t max_gram, int64_t max_skip) {
  OpTest t("TfIdfVectorizer", 9);
  t.Attr("mode", mode)
      .Attr("min_gram_length", min_gram)
      .Attr("max_gram_length", max_gram)
      .Attr("max_skip_count", max_skip);
  return t;
}

// Pool: unigrams {a, b}, bigrams {(a, b), (b, a)}; coordinates reversed to check ngram_indexes.
OpTest StringVectorizer(const std::string& mode, int64_t min_gram, int64_t max_gram, int64_t max_skip) {
  OpTest t = Vectorizer(mode, min_gram, max_gram, max_skip);
  t.Attr("pool_strings", std::vector<std::string>{"a", "b", "a", "b", "b", "a"})
      .Attr("ngram_counts", std::vector<int64_t>{0, 2})
      .Attr("ngram_indexes", std::vector<int64_t>{3, 2, 1, 0});
  return t;
}

TEST(TfIdfVectorizer, StringCountsWithSkips) {
  // Row "a x b a": unigrams a=2, b=1. Bigrams skip 0: (x,b) (b,a) -> (b,a)=1; skip 1: (a,b) (x,a)
  // -> (a,b)=1; skip 2: (a,a) -> none.
  OpTest t = StringVectorizer("TF", 1, 2, 2);
  t.Input(Tensor::FromVector<std::string>({4}, {"a", "x", "b", "a"}));
  auto out = t.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Floats({4}, {1, 1, 1, 2}), out.value()[0].tensor()));
}

TEST(TfIdfVectorizer, OnlyBigramsWithoutSkipsBatched) {
  OpTest t = StringVectorizer("TF", 2, 2, 0);
  t.Input(Tensor::FromVector<std::string>({2, 3}, {"a", "b", "a", "b", "b", "b"}));
  auto out = t.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Floats({2, 4}, {1, 1, 0, 0, 0, 0, 0, 0}), out.value()[0].tensor()));
}

TEST(TfIdfVectorizer, IdfAndTfidfWeights) {
  OpTest idf = Vectorizer("IDF", 1, 1, 0);
  idf.Attr("pool_int64s", std::vector<int64_t>{7, 9})
      .Attr("ngram_counts", std::vector<int64_t>{0})
      .Attr("ngram_indexes", std::vector<int64_t>{0, 1})
      .Attr("weights", std::vector<float>{0.5f, 2.0f});
  idf.Input(Tensor::FromVector<int32_t>({5}, {7, 7, 7, 1, 2}));
  auto out = idf.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Floats({2}, {0.5f, 0}), out.value()[0].tensor()));

  OpTest tfidf = Vectorizer("TFIDF", 1, 1, 0);
  tfidf.Attr("pool_int64s", std::vector<int64_t>{7, 9})
      .Attr("ngram_counts", std::vector<int64_t>{0})
      .Attr("ngram_indexes", std::vector<int64_t>{0, 1})
      .Attr("weights", std::vector<float>{0.5f, 2.0f});
  tfidf.Input(Tensor::FromVector<int64_t>({2, 3}, {7, 7, 9, 9, 9, 9}));
  out = tfidf.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Floats({2, 2}, {1.0f, 2.0f, 0, 6.0f}), out.value()[0].tensor()));
}

TEST(TfIdfVectorizer, HugeSkipCountAndEmptyRows) {
  OpTest t = StringVectorizer("TF", 2, 2, int64_t{1} << 40);
  t.Input(Tensor::FromVector<std::string>({3, 0}, {}));
  auto out = t.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Floats({3, 4}, std::vector<float>(12, 0.0f)), out.value()[0].tensor()));
  OpTest u = StringVectorizer("TF", 2, 2, int64_t{1} << 40);
  u.Input(Tensor::FromVector<std::string>({3}, {"a", "x", "b"}));
  out = u.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Floats({4}, {0, 1, 0, 0}), out.value()[0].tensor()));  // (a, b) at skip 1
}

TEST(TfIdfVectorizer, HugeGramLengthsDoNotOverflow) {
  OpTest t = StringVectorizer("TF", 2, int64_t{1} << 62, int64_t{1} << 62);
  t.Input(Tensor::FromVector<std::string>({3}, {"b", "x", "a"}));
  auto out = t.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Floats({4}, {1, 0, 0, 0}), out.value()[0].tensor()));  // (b, a) at skip 1
  OpTest u = StringVectorizer("TF", int64_t{1} << 62, int64_t{1} << 62, 0);
  u.Input(Tensor::FromVector<std::string>({2}, {"a", "b"}));
  out = u.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Floats({4}, {0, 0, 0, 0}), out.value()[0].tensor()));
}

TEST(TfIdfVectorizer, BadAttributesFailAtLoad) {
  OpTest bad_mode = StringVectorizer("BM25", 1, 2, 0);
  bad_mode.Input(Tensor::FromVector<std::string>({1}, {"a"}));
  EXPECT_TRUE(Refused(bad_mode.Run(RegisterTextKernels), StatusCode::kInvalidArgument, "mode must be TF, IDF or TFIDF, got 'BM25'"));
  OpTest bad_range = StringVectorizer("TF", 3, 2, 0);
  bad_range.Input(Tensor::FromVector<std::string>({1}, {"a"}));
  EXPECT_TRUE(Refused(bad_range.Run(RegisterTextKernels), StatusCode::kInvalidArgument, "need 1 <= min_gram_length <= max_gram_length, got 3 and 2"));
  OpTest no_pool = Vectorizer("TF", 1, 1, 0);
  no_pool.Attr("ngram_counts", std::vector<int64_t>{0}).Attr("ngram_indexes", std::vector<int64_t>{0});
  no_pool.Input(Tensor::FromVector<int64_t>({1}, {1}));
  EXPECT_TRUE(Refused(no_pool.Run(RegisterTextKernels), StatusCode::kInvalidArgument, "exactly one of pool_int64s and pool_strings must be set"));
  OpTest short_indexes = Vectorizer("TF", 1, 1, 0);
  short_indexes.Attr("pool_int64s", std::vector<int64_t>{1, 2, 3})
      .Attr("ngram_counts", std::vector<int64_t>{0})
      .Attr("ngram_indexes", std::vector<int64_t>{0});
  short_indexes.Input(Tensor::FromVector<int64_t>({1}, {1}));
  EXPECT_TRUE(Refused(short_indexes.Run(RegisterTextKernels), StatusCode::kInvalidArgument, "ngram_indexes has 1 entries, the pool has more n-grams"));
}

TEST(TfIdfVectorizer, WrongInputTypeOrRankFailsAtRun) {
  OpTest t = StringVectorizer("TF", 1, 1, 0);
  t.Input(Tensor::FromVector<int64_t>({1}, {1}));
  EXPECT_TRUE(Refused(t.Run(RegisterTextKernels), StatusCode::kInvalidArgument, "TfIdfVectorizer with pool_strings needs a string input, got int64"));
  OpTest u = StringVectorizer("TF", 1, 1, 0);
  u.Input(Tensor::FromVector<std::string>({1, 1, 1}, {"a"}));
  EXPECT_TRUE(Refused(u.Run(RegisterTextKernels), StatusCode::kInvalidArgument, "TfIdfVectorizer takes a [C] or [N, C] input, got [1,1,1]"));
}

}  // namespace
}  // namespace onnxflow
