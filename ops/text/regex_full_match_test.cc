#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/text/register.h"

namespace onnxflow {
namespace {

Tensor Strings(Shape shape, std::vector<std::string> v) { return Tensor::FromVector<std::string>(std::move(shape), v); }

Result<std::vector<Value>> Match(const std::string& pattern, const Tensor& x) {
  OpTest t("RegexFullMatch", 20);
  t.Input(x).Attr("pattern", pattern);
  return t.Run(RegisterTextKernels);
}

std::vector<bool> Bools(const Result<std::vector<Value>>& out) {
  const Tensor& t = out.value()[0].tensor();
  return std::vector<bool>(t.data<bool>(), t.data<bool>() + t.size());
}

TEST(RegexFullMatch, FullNotPartial) {
  auto out = Match("a+b", Strings({4}, {"aab", "aabx", "xaab", ""}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, false, false, false}));
}

TEST(RegexFullMatch, DotMatchesOneCodePoint) {
  auto out = Match("^..$", Strings({3}, {"中文", "ab", "中"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, true, false}));
  out = Match("[一-龥]+", Strings({2}, {"中文字", "中a"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, false}));
}

TEST(RegexFullMatch, Re2ClassesAreAscii) {
  auto out = Match(R"(\w+\s\d+)", Strings({3}, {"ab_1 42", "é 1", "ab\v1"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, false, false}));
  out = Match(R"([\w.-]+@\W?)", Strings({2}, {"a.b-c@", "a.b-c@!"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, true}));
}

TEST(RegexFullMatch, Re2OnlySyntax) {
  auto out = Match("(?i)(?P<word>hello) \\x{4E2D}\\Q.*\\E", Strings({3}, {"HeLLo 中.*", "hello 中ab", "hello x.*"}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, false, false}));
  out = Match("(?i)été", Strings({2}, {"ÉTÉ", "ETE"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, false}));
  out = Match("(?s)a.b", Strings({1}, {"a\nb"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{true}));
  out = Match("a.b", Strings({1}, {"a\nb"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{false}));
}

TEST(RegexFullMatch, BracesAndRepetitionLimits) {
  auto out = Match("a{2,3}b{c}", Strings({3}, {"aab{c}", "aaaab{c}", "ab{c}"}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, false, false}));
  const std::string repeat = "is not a valid RE2 regular expression: invalid repetition size";
  EXPECT_TRUE(Refused(Match("a{1001}", Strings({1}, {"a"})), StatusCode::kInvalidArgument, "pattern 'a{1001}' " + repeat));
  EXPECT_TRUE(Refused(Match("a{2,1001}", Strings({1}, {"a"})), StatusCode::kInvalidArgument, "pattern 'a{2,1001}' " + repeat));
  // Nested repetitions would expand to 10^9 states: refused (RE2 caps repetition and memory).
  EXPECT_TRUE(Refused(Match("((a{1000}){1000}){1000}", Strings({1}, {"a"})), StatusCode::kInvalidArgument,
                      "pattern '((a{1000}){1000}){1000}' " + repeat));
}

TEST(RegexFullMatch, LongInputDoesNotExhaustTheStack) {
  const std::string big(200000, 'a');
  auto out = Match("(a|b)*", Strings({1}, {big}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{true}));
}

TEST(RegexFullMatch, BadPatternsFailAtLoad) {
  for (const char* p : {"(ab", "a{2,1}", "(a)\\1", "(?=a)a", "\\p{NoSuchClass}", "[abc"}) {
    auto out = Match(p, Strings({1}, {"a"}));
    EXPECT_TRUE(Refused(out, StatusCode::kInvalidArgument, std::string("pattern '") + p + "'"));
  }
  EXPECT_TRUE(Refused(Match("(a)\\1", Strings({1}, {"a"})), StatusCode::kInvalidArgument,
                      "pattern '(a)\\1' is not a valid RE2 regular expression: invalid escape sequence: \\1"));
  OpTest t("RegexFullMatch", 20);
  t.Input(Strings({1}, {"a"}));
  EXPECT_TRUE(Refused(t.Run(RegisterTextKernels), StatusCode::kInvalidArgument, "attribute 'pattern' is required"));  // no pattern
}

// RE2's Unicode classes, which the spec's RE2 syntax includes (refused before RE2 was used).
TEST(RegexFullMatch, UnicodeClasses) {
  auto out = Match("\\p{L}+ \\p{Greek}+\\pN", Strings({3}, {"été αβγ7", "été abc7", "1 αβγ7"}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, false, false}));
  out = Match("(?i)ΣΊΣΥΦΟΣ", Strings({2}, {"σίσυφος", "sisyphus"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{true, false}));
}

// A pattern that backtracks exponentially elsewhere is linear in RE2.
TEST(RegexFullMatch, NoCatastrophicBacktracking) {
  const std::string input = std::string(5000, 'a') + "!";
  auto out = Match("(a+)+$", Strings({1}, {input}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Bools(out), (std::vector<bool>{false}));
}

TEST(RegexFullMatch, ShapeKeptAndTypeChecked) {
  auto out = Match("x", Strings({2, 0}, {}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.value()[0].tensor().shape(), (Shape{2, 0}));
  EXPECT_EQ(out.value()[0].tensor().dtype(), DataType::kBool);
  EXPECT_TRUE(Refused(Match("x", Tensor::FromVector<float>({1}, {1})), StatusCode::kInvalidArgument, "RegexFullMatch needs a string input, got float32"));
}

}  // namespace
}  // namespace onnxflow
