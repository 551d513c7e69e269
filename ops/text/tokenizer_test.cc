// com.microsoft Tokenizer: separators, tokenexp, character splits, markers and padding, by hand.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/text/register.h"

namespace onnxflow {
namespace {

using Strings = std::vector<std::string>;

struct Tokenized {
  Shape shape;
  Strings tokens;
};

Result<Tokenized> Tokenize(const Tensor& x, const std::function<void(OpTest&)>& attrs, int64_t mark = 0,
                           int64_t mincharnum = 1) {
  OpTest t("Tokenizer", 1, "com.microsoft");
  t.Input(x).Attr("mark", mark).Attr("pad_value", std::string("#")).Attr("mincharnum", mincharnum);
  attrs(t);
  auto out = t.Run(RegisterTextKernels);
  if (!out.ok()) return out.status();
  const Tensor& y = out.value()[0].tensor();
  return Tokenized{y.shape(), Strings(y.data<std::string>(), y.data<std::string>() + y.size())};
}

Tensor S(Shape shape, Strings v) { return Tensor::FromVector<std::string>(std::move(shape), v); }

TEST(Tokenizer, SeparatorsPadToTheLongestRow) {
  auto y = Tokenize(S({2}, {"a bc", "d"}), [](OpTest& t) { t.Attr("separators", Strings{" "}); });
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape, (Shape{2, 2}));
  EXPECT_EQ(y->tokens, (Strings{"a", "bc", "d", "#"}));

  // Markers around each row's tokens, the padding after the end marker.
  y = Tokenize(S({2}, {"a bc", "d"}), [](OpTest& t) { t.Attr("separators", Strings{" "}); }, 1);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->tokens, (Strings{"\x02", "a", "bc", "\x03", "\x02", "d", "\x03", "#"}));

  // Separators are RE2 patterns, applied one after another to the pieces the previous left.
  y = Tokenize(S({1, 2}, {"a-b  c", "x"}), [](OpTest& t) { t.Attr("separators", Strings{"\\s+", "-"}); });
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape, (Shape{1, 2, 3}));
  EXPECT_EQ(y->tokens, (Strings{"a", "b", "c", "x", "#", "#"}));

  // Pieces shorter than mincharnum are dropped.
  y = Tokenize(S({1}, {"a bb ccc"}), [](OpTest& t) { t.Attr("separators", Strings{" "}); }, 0, 2);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->tokens, (Strings{"bb", "ccc"}));
}

TEST(Tokenizer, TokenexpMatchesAreTheTokens) {
  auto y = Tokenize(S({1}, {"I am ok, x42!"}), [](OpTest& t) { t.Attr("tokenexp", std::string("[a-zA-Z0-9_]+")); }, 0, 2);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->tokens, (Strings{"am", "ok", "x42"}));
  // A match too short is stepped over by one character, so a longer one may start inside it: at
  // "ab abcd" with 3 characters needed, "ab" and "b" are skipped and "abcd" found.
  y = Tokenize(S({1}, {"ab abcd"}), [](OpTest& t) { t.Attr("tokenexp", std::string("[a-z]+")); }, 0, 3);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->tokens, (Strings{"abcd"}));
}

TEST(Tokenizer, CharactersAreUtf8Characters) {
  auto y = Tokenize(S({2}, {"h\xC3\xA9", "abc"}), [](OpTest& t) { t.Attr("separators", Strings{""}); });
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->tokens, (Strings{"h", "\xC3\xA9", "#", "a", "b", "c"}));
  y = Tokenize(S({1}, {"ab"}), [](OpTest& t) { t.Attr("tokenexp", std::string(".")); });
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->tokens, (Strings{"a", "b"}));
}

TEST(Tokenizer, EmptyResultsAndRefusals) {
  auto y = Tokenize(S({2}, {"", "  "}), [](OpTest& t) { t.Attr("separators", Strings{" "}); }, 1);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape, (Shape{2, 0}));
  y = Tokenize(S({3, 0}, {}), [](OpTest& t) { t.Attr("separators", Strings{" "}); });
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape, (Shape{3, 0}));

  auto bad = Tokenize(S({1}, {"\xFF"}), [](OpTest& t) { t.Attr("separators", Strings{" "}); });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not valid UTF-8"), std::string::npos);
  bad = Tokenize(S({1}, {"a"}), [](OpTest& t) { t.Attr("tokenexp", std::string("(a")); });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a valid RE2 pattern"), std::string::npos);
  bad = Tokenize(S({1}, {"a"}), [](OpTest&) {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'separators' and 'tokenexp'"), std::string::npos);
  bad = Tokenize(S({1}, {"a"}), [](OpTest& t) { t.Attr("separators", Strings{""}); }, 0, 2);
  EXPECT_FALSE(bad.ok());
  bad = Tokenize(S({1, 1, 1}, {"a"}), [](OpTest& t) { t.Attr("separators", Strings{" "}); });
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace onnxflow
