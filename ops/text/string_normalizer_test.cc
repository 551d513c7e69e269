#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/text/case_mapping.h"
#include "ops/text/register.h"

namespace onnxflow {
namespace {

Tensor Strings(Shape shape, std::vector<std::string> v) { return Tensor::FromVector<std::string>(std::move(shape), v); }

TEST(StringNormalizer, CaseInsensitiveStopwordsThenUpper) {
  OpTest t("StringNormalizer", 10);
  t.Input(Strings({1, 4}, {"Der", "straße", "DER", "Ärger"}))
      .Attr("case_change_action", std::string("UPPER"))
      .Attr("stopwords", std::vector<std::string>{"der"});
  auto out = t.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // towupper keeps ß (its uppercase is two letters); Ä stays Ä.
  EXPECT_TRUE(TensorsEqual(Strings({1, 2}, {"STRAßE", "ÄRGER"}), out.value()[0].tensor()));
}

TEST(StringNormalizer, CaseSensitiveStopwordsThenLowerUtf8) {
  OpTest t("StringNormalizer", 10);
  t.Input(Strings({4}, {"ÉCOLE", "École", "ΣΟΦΙΑ", "Привет"}))
      .Attr("case_change_action", std::string("LOWER"))
      .Attr("is_case_sensitive", int64_t{1})
      .Attr("stopwords", std::vector<std::string>{"École"});
  auto out = t.Run(RegisterTextKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Strings({3}, {"école", "σοφια", "привет"}), out.value()[0].tensor()));
}

TEST(StringNormalizer, EverythingDroppedGivesOneEmptyString) {
  for (const Shape& shape : {Shape{2}, Shape{1, 2}}) {
    OpTest t("StringNormalizer", 10);
    t.Input(Strings(shape, {"a", "A"})).Attr("stopwords", std::vector<std::string>{"a"});
    auto out = t.Run(RegisterTextKernels);
    ASSERT_TRUE(out.ok());
    EXPECT_TRUE(TensorsEqual(Strings(shape.size() == 1 ? Shape{1} : Shape{1, 1}, {""}), out.value()[0].tensor()));
  }
}

TEST(StringNormalizer, BadActionFailsAtLoad) {
  OpTest t("StringNormalizer", 10);
  t.Input(Strings({1}, {"a"})).Attr("case_change_action", std::string("TITLE"));
  auto out = t.Run(RegisterTextKernels);
  ASSERT_TRUE(Refused(out, StatusCode::kInvalidArgument, "case_change_action must be NONE, LOWER or UPPER, got 'TITLE'"));
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
}

TEST(StringNormalizer, RejectsOtherShapesAndTypes) {
  OpTest t("StringNormalizer", 10);
  t.Input(Strings({2, 2}, {"a", "b", "c", "d"}));
  EXPECT_TRUE(Refused(t.Run(RegisterTextKernels), StatusCode::kInvalidArgument, "StringNormalizer takes a [C] or [1, C] input, got [2,2]"));
  OpTest u("StringNormalizer", 10);
  u.Input(Tensor::FromVector<int64_t>({1}, {1}));
  EXPECT_TRUE(Refused(u.Run(RegisterTextKernels), StatusCode::kInvalidArgument, "StringNormalizer needs a string input, got int64"));
}

TEST(CaseMapper, UnknownLocaleFallsBackAndMalformedBytesSurvive) {
  CaseMapper m("xx_NOWHERE");
  EXPECT_EQ(m.ToUpper("abc é"), "ABC É");
  const std::string bad = std::string("a\xff") + "b\xc3";
  EXPECT_EQ(m.ToUpper(bad), std::string("A\xff") + "B\xc3");
}

// Turkish casing does not depend on the host having tr_TR installed.
TEST(CaseMapper, TurkishWithoutTheHostLocale) {
  CaseMapper m("tr_TR");
  EXPECT_EQ(m.locale_name(), "unicode+tr");
  EXPECT_EQ(m.ToUpper("istanbul ılık"), "İSTANBUL ILIK");
  EXPECT_EQ(m.ToLower("İSTANBUL ILIK"), "istanbul ılık");
  EXPECT_EQ(CaseMapper("en_US").ToUpper("istanbul"), "ISTANBUL");
}

// Scripts beyond the old built-in fallback tables map the same with any host locale.
TEST(CaseMapper, AllOfUnicodeWithoutHostLocales) {
  CaseMapper m("xx_NOWHERE");
  EXPECT_EQ(m.locale_name(), "unicode");
  EXPECT_EQ(m.ToUpper("աբգ ǆ ꮳ ⓐ"), "ԱԲԳ Ǆ Ꮳ Ⓐ");
  EXPECT_EQ(m.ToLower("ԱԲԳ Ꮳ"), "աբգ ꮳ");
}

}  // namespace
}  // namespace onnxflow
