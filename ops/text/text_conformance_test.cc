// The ONNX backend-test cases of the text family, run kernel by kernel.
#include <string>

#include <gtest/gtest.h>

#include "ops/text/node_cases.h"
#include "ops/text/register.h"

namespace onnxflow {
namespace {

class TextCase : public ::testing::TestWithParam<std::string> {};

TEST_P(TextCase, MatchesExpectedOutputs) {
  bool skipped = false;
  EXPECT_TRUE(RunNodeCase(GetParam(), RegisterTextKernels, &skipped));
  if (skipped) GTEST_SKIP() << "no test data for " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(
    Onnx, TextCase,
    ::testing::Values("test_regex_full_match_basic", "test_regex_full_match_email_domain",
                      "test_regex_full_match_empty", "test_string_concat", "test_string_concat_broadcasting",
                      "test_string_concat_empty_string", "test_string_concat_utf8",
                      "test_string_concat_zero_dimensional", "test_string_split_basic",
                      "test_string_split_consecutive_delimiters", "test_string_split_empty_string_delimiter",
                      "test_string_split_empty_tensor", "test_string_split_maxsplit",
                      "test_string_split_no_delimiter", "test_strnormalizer_export_monday_casesensintive_lower",
                      "test_strnormalizer_export_monday_casesensintive_nochangecase",
                      "test_strnormalizer_export_monday_casesensintive_upper",
                      "test_strnormalizer_export_monday_empty_output",
                      "test_strnormalizer_export_monday_insensintive_upper_twodim",
                      "test_strnormalizer_nostopwords_nochangecase",
                      "test_tfidfvectorizer_tf_batch_onlybigrams_skip0",
                      "test_tfidfvectorizer_tf_batch_onlybigrams_skip5",
                      "test_tfidfvectorizer_tf_batch_uniandbigrams_skip5",
                      "test_tfidfvectorizer_tf_only_bigrams_skip0", "test_tfidfvectorizer_tf_onlybigrams_levelempty",
                      "test_tfidfvectorizer_tf_onlybigrams_skip5", "test_tfidfvectorizer_tf_uniandbigrams_skip5"),
    [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace onnxflow
