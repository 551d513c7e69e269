// ZipMap, DictVectorizer and CastMap: maps in and out, worked by hand.
#include <climits>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

using Ints = std::vector<int64_t>;
using Strings = std::vector<std::string>;

Value MapOf(Tensor keys, Tensor values) {
  return Value(std::make_shared<const Map>(Map{std::move(keys), std::move(values)}));
}

TEST(ZipMap, OneMapPerRowSharingTheLabels) {
  OpTest t("ZipMap", 1, "ai.onnx.ml");
  t.Input(Tensor::FromVector<float>({2, 3}, {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f})).Attr("classlabels_int64s", Ints{4, 7, 9});
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out.value()[0].is_sequence());
  const Sequence& seq = out.value()[0].sequence();
  EXPECT_EQ(seq.elem_type, DataType::kFloat);
  EXPECT_TRUE(seq.tensors.empty());
  ASSERT_EQ(seq.maps.size(), 2u);
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<int64_t>({3}, {4, 7, 9}), seq.maps[1].keys));
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3}, {0.5f, 0.25f, 0.25f}), seq.maps[1].values));
  EXPECT_EQ(seq.maps[0].keys.data<int64_t>(), seq.maps[1].keys.data<int64_t>()) << "the labels are one tensor";

  OpTest strings("ZipMap", 1, "ai.onnx.ml");  // a 1-D input is one row
  strings.Input(Tensor::FromVector<float>({2}, {0.25f, 0.75f})).Attr("classlabels_strings", Strings{"cat", "dog"});
  out = strings.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out.value()[0].sequence().maps.size(), 1u);
  EXPECT_EQ(out.value()[0].sequence().maps[0].keys.data<std::string>()[1], "dog");
  EXPECT_EQ(out.value()[0].sequence().maps[0].values.data<float>()[1], 0.75f);
}

TEST(ZipMap, Refusals) {
  OpTest columns("ZipMap", 1, "ai.onnx.ml");
  columns.Input(Tensor::FromVector<float>({1, 2}, {1, 2})).Attr("classlabels_int64s", Ints{1, 2, 3});
  auto out = columns.Run(RegisterMlKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("2 columns for 3 class labels"), std::string::npos) << out.status().ToString();

  OpTest both("ZipMap", 1, "ai.onnx.ml");
  both.Input(Tensor::FromVector<float>({1}, {1})).Attr("classlabels_int64s", Ints{1}).Attr("classlabels_strings", Strings{"a"});
  EXPECT_FALSE(both.Run(RegisterMlKernels).ok());
}

TEST(DictVectorizer, VocabularyColumnsAndDroppedWords) {
  OpTest t("DictVectorizer", 1, "ai.onnx.ml");
  t.Input(MapOf(Tensor::FromVector<std::string>({3}, {"b", "zzz", "a"}), Tensor::FromVector<double>({3}, {2.5, 9, -1})))
      .Attr("string_vocabulary", Strings{"a", "b", "c"});
  auto out = t.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1, 3}, {-1, 2.5, 0}), out.value()[0].tensor()));

  OpTest ints("DictVectorizer", 1, "ai.onnx.ml");
  ints.Input(MapOf(Tensor::FromVector<int64_t>({2}, {30, 10}), Tensor::FromVector<int64_t>({2}, {3, 1})))
      .Attr("int64_vocabulary", Ints{10, 20, 30});
  out = ints.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<int64_t>({1, 3}, {1, 0, 3}), out.value()[0].tensor()));

  OpTest wrong_keys("DictVectorizer", 1, "ai.onnx.ml");
  wrong_keys.Input(MapOf(Tensor::FromVector<int64_t>({1}, {1}), Tensor::FromVector<float>({1}, {1})))
      .Attr("string_vocabulary", Strings{"a"});
  EXPECT_FALSE(wrong_keys.Run(RegisterMlKernels).ok());
  OpTest not_a_map("DictVectorizer", 1, "ai.onnx.ml");
  not_a_map.Input(Tensor::FromVector<float>({1}, {1})).Attr("string_vocabulary", Strings{"a"});
  out = not_a_map.Run(RegisterMlKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("must be a map"), std::string::npos);
}

TEST(CastMap, DenseInKeyOrderAndSparseByColumn) {
  const Value m = MapOf(Tensor::FromVector<int64_t>({3}, {5, 0, 2}), Tensor::FromVector<float>({3}, {1.5f, -2, 7}));
  OpTest dense("CastMap", 1, "ai.onnx.ml");
  dense.Input(m);
  auto out = dense.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 3}, {-2, 7, 1.5f}), out.value()[0].tensor()));

  OpTest sparse("CastMap", 1, "ai.onnx.ml");
  sparse.Input(m).Attr("map_form", std::string("SPARSE")).Attr("max_map", int64_t{4}).Attr("cast_to", std::string("TO_INT64"));
  out = sparse.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<int64_t>({1, 4}, {-2, 0, 7, 0}), out.value()[0].tensor()));

  OpTest nan("CastMap", 1, "ai.onnx.ml");  // NaN and out-of-range to int64 as Cast gives them
  nan.Input(MapOf(Tensor::FromVector<int64_t>({2}, {0, 1}), Tensor::FromVector<float>({2}, {std::nanf(""), 1e30f})))
      .Attr("cast_to", std::string("TO_INT64"));
  out = nan.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<int64_t>({1, 2}, {INT64_MIN, INT64_MIN}), out.value()[0].tensor()));

  OpTest strings("CastMap", 1, "ai.onnx.ml");
  strings.Input(m).Attr("cast_to", std::string("TO_STRING"));
  out = strings.Run(RegisterMlKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out.value()[0].tensor().data<std::string>()[0], "-2.000000");

  OpTest negative("CastMap", 1, "ai.onnx.ml");  // SPARSE keys are columns
  negative.Input(MapOf(Tensor::FromVector<int64_t>({1}, {-3}), Tensor::FromVector<float>({1}, {1})))
      .Attr("map_form", std::string("SPARSE")).Attr("max_map", int64_t{4});
  out = negative.Run(RegisterMlKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("-3 is negative"), std::string::npos) << out.status().ToString();

  OpTest parse("CastMap", 1, "ai.onnx.ml");
  parse.Input(MapOf(Tensor::FromVector<int64_t>({2}, {1, 0}), Tensor::FromVector<std::string>({2}, {"2.5", "x"})));
  out = parse.Run(RegisterMlKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("'x' is not a number"), std::string::npos);
}

}  // namespace
}  // namespace onnxflow
