#include <string>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/text/register.h"

namespace onnxflow {
namespace {

Tensor Strings(Shape shape, std::vector<std::string> v) { return Tensor::FromVector<std::string>(std::move(shape), v); }
Tensor Ints(Shape shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(std::move(shape), v); }

Result<std::vector<Value>> Split(const Tensor& x, const char* delimiter, int64_t maxsplit = -2) {
  OpTest t("StringSplit", 20);
  t.Input(x).Outputs(2);
  if (delimiter != nullptr) t.Attr("delimiter", std::string(delimiter));
  if (maxsplit != -2) t.Attr("maxsplit", maxsplit);
  return t.Run(RegisterTextKernels);
}

TEST(StringSplit, DelimiterKeepsEmptyPieces) {
  auto out = Split(Strings({3}, {"a,,b", "", ",x"}), ",");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Strings({3, 3}, {"a", "", "b", "", "", "", "", "x", ""}), out.value()[0].tensor()));
  EXPECT_TRUE(TensorsEqual(Ints({3}, {3, 1, 2}), out.value()[1].tensor()));
}

TEST(StringSplit, MultiCharacterUtf8Delimiter) {
  auto out = Split(Strings({1}, {"一→二→→三"}), "→");
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Strings({1, 4}, {"一", "二", "", "三"}), out.value()[0].tensor()));
}

TEST(StringSplit, WhitespaceWhenDelimiterUnsetOrEmpty) {
  for (const char* d : {static_cast<const char*>(nullptr), ""}) {
    auto out = Split(Strings({2, 1}, {"  a\tb \n c ", "   "}), d);
    ASSERT_TRUE(out.ok());
    EXPECT_TRUE(TensorsEqual(Strings({2, 1, 3}, {"a", "b", "c", "", "", ""}), out.value()[0].tensor()));
    EXPECT_TRUE(TensorsEqual(Ints({2, 1}, {3, 0}), out.value()[1].tensor()));
  }
}

TEST(StringSplit, MaxsplitKeepsTheRest) {
  auto out = Split(Strings({2}, {"a-b-c-d", "x"}), "-", 2);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Strings({2, 3}, {"a", "b", "c-d", "x", "", ""}), out.value()[0].tensor()));
  EXPECT_TRUE(TensorsEqual(Ints({2}, {3, 1}), out.value()[1].tensor()));
  // On whitespace, the rest loses its leading but keeps its trailing whitespace (Python's rule).
  out = Split(Strings({1}, {" a  b c "}), nullptr, 1);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Strings({1, 2}, {"a", "b c "}), out.value()[0].tensor()));
  // maxsplit 0: no split at all.
  out = Split(Strings({1}, {"a b"}), " ", 0);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Strings({1, 1}, {"a b"}), out.value()[0].tensor()));
}

TEST(StringSplit, ScalarAndEmptyInputs) {
  auto out = Split(Strings({}, {"p.q"}), ".");
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Strings({2}, {"p", "q"}), out.value()[0].tensor()));
  EXPECT_TRUE(TensorsEqual(Ints({}, {2}), out.value()[1].tensor()));
  out = Split(Strings({2, 0}, {}), ".");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.value()[0].tensor().shape(), (Shape{2, 0, 0}));
  EXPECT_EQ(out.value()[1].tensor().shape(), (Shape{2, 0}));
}

TEST(StringSplit, NonStringInputFails) {
  EXPECT_TRUE(Refused(Split(Ints({1}, {1}), ","), StatusCode::kInvalidArgument, "StringSplit needs a string input, got int64"));
}

}  // namespace
}  // namespace onnxflow
