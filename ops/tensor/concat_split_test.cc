#include <gtest/gtest.h>

#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

template <typename T>
class ConcatSplitTyped : public ::testing::Test {};
TYPED_TEST_SUITE(ConcatSplitTyped, AllTypes);

// Concat then Split on the same axis gives the pieces back, for every dtype.
TYPED_TEST(ConcatSplitTyped, RoundTripEveryType) {
  const Tensor a = Iota<TypeParam>({2, 1, 3}, 0);
  const Tensor b = Iota<TypeParam>({2, 2, 3}, 100);
  OpTest concat("Concat", 13);
  concat.Input(a).Input(b).Attr("axis", int64_t{-2});
  const Tensor y = Out(concat);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 3}));
  // Row 0 of batch 1 comes from a, rows 1-2 from b.
  Tensor expected(DataTypeOf<TypeParam>::value, {2, 3, 3});
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 3; ++c)
        expected.mutable_data<TypeParam>()[(n * 3 + r) * 3 + c] =
            r == 0 ? a.data<TypeParam>()[n * 3 + c] : b.data<TypeParam>()[(n * 2 + r - 1) * 3 + c];
  EXPECT_TRUE(Same(expected, y));

  OpTest split("Split", 13);
  split.Input(y).Input(I64({2}, {1, 2})).Attr("axis", int64_t{1}).Outputs(2);
  auto parts = RunOp(split);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  EXPECT_TRUE(Same(a, (*parts)[0].tensor()));
  EXPECT_TRUE(Same(b, (*parts)[1].tensor()));
}

TEST(Concat, AxisZeroZeroSizeAndErrors) {
  OpTest test("Concat", 13);
  test.Input(F32({2}, {1, 2})).Input(F32({0}, {})).Input(F32({1}, {3})).Attr("axis", int64_t{0});
  EXPECT_TRUE(Same(F32({3}, {1, 2, 3}), Out(test)));

  OpTest mismatch("Concat", 13);
  mismatch.Input(Iota<float>({2, 3})).Input(Iota<float>({2, 4})).Attr("axis", int64_t{0});
  EXPECT_EQ(RunOp(mismatch).status().code(), StatusCode::kInvalidArgument);

  OpTest bad_axis("Concat", 13);
  bad_axis.Input(Iota<float>({2, 3})).Attr("axis", int64_t{2});
  EXPECT_TRUE(Refused(RunOp(bad_axis), StatusCode::kInvalidArgument, "axis 2 is out of range for rank 2"));

  OpTest types("Concat", 13);
  types.Input(Iota<float>({2})).Input(Iota<int32_t>({2})).Attr("axis", int64_t{0});
  EXPECT_TRUE(Refused(RunOp(types), StatusCode::kInvalidArgument, "inputs have different types"));
}

TEST(Concat, LargeInParallel) {
  const Tensor a = Iota<float>({64, 1000}, 0);
  const Tensor b = Iota<float>({64, 1500}, 7);
  OpTest test("Concat", 13);
  test.Input(a).Input(b).Attr("axis", int64_t{1}).Threads(2);
  const Tensor y = Out(test);
  ASSERT_EQ(y.shape(), (Shape{64, 2500}));
  for (int64_t r = 0; r < 64; r += 13) {
    EXPECT_EQ(y.data<float>()[r * 2500 + 999], a.data<float>()[r * 1000 + 999]);
    EXPECT_EQ(y.data<float>()[r * 2500 + 1000], b.data<float>()[r * 1500]);
  }
}

// Every element against a plain reference: four inputs (one empty) on a middle axis, so the
// parallel chunks start and end inside runs and cross from one input to the next and from one
// outer row to the next; the same with one thread and with outer == 1 (one block per input).
TEST(Concat, EveryElementMatchesReferenceAcrossChunks) {
  for (int64_t outer : {1, 3, 37}) {
    const std::vector<int64_t> sizes = {5, 0, 129, 64};
    const int64_t inner = 91;
    std::vector<Tensor> in;
    for (size_t i = 0; i < sizes.size(); ++i) in.push_back(Iota<float>({outer, sizes[i], inner}, 1000 * static_cast<int64_t>(i)));
    for (int threads : {1, 2}) {
      OpTest test("Concat", 13);
      for (const Tensor& t : in) test.Input(t);
      test.Attr("axis", int64_t{1}).Threads(threads);
      const Tensor y = Out(test);
      ASSERT_EQ(y.shape(), (Shape{outer, 198, inner}));
      std::vector<float> expected;
      for (int64_t o = 0; o < outer; ++o) {
        for (size_t i = 0; i < in.size(); ++i) {
          const float* src = in[i].data<float>() + o * sizes[i] * inner;
          expected.insert(expected.end(), src, src + sizes[i] * inner);
        }
      }
      EXPECT_TRUE(Same(Tensor::FromVector<float>({outer, 198, inner}, expected), y)) << outer << " " << threads;
    }
  }
}

// Output rows of at most 64 elements are joined a row at a time: a detector's [N, 2] halves on
// the last axis, three inputs with one empty, every byte width, one and two threads; and rows of
// 65 (the element-split path) the same way.
template <typename T>
void CheckShortRows(int64_t rows, const std::vector<int64_t>& widths) {
  std::vector<Tensor> in;
  int64_t total = 0;
  for (size_t i = 0; i < widths.size(); ++i) {
    in.push_back(Iota<T>({1, rows, widths[i]}, 100 * static_cast<int64_t>(i)));
    total += widths[i];
  }
  for (int threads : {1, 2}) {
    OpTest test("Concat", 13);
    for (const Tensor& t : in) test.Input(t);
    test.Attr("axis", int64_t{2}).Threads(threads);
    const Tensor y = Out(test);
    ASSERT_EQ(y.shape(), (Shape{1, rows, total}));
    std::vector<T> expected;
    for (int64_t r = 0; r < rows; ++r) {
      for (size_t i = 0; i < in.size(); ++i) {
        const T* src = in[i].template data<T>() + r * widths[i];
        expected.insert(expected.end(), src, src + widths[i]);
      }
    }
    EXPECT_TRUE(Same(Tensor::FromVector<T>({1, rows, total}, expected), y)) << threads << " threads";
  }
}

TEST(Concat, ShortRowsARowAtATime) {
  CheckShortRows<float>(4420, {2, 0, 2});
  CheckShortRows<uint8_t>(301, {1, 3, 0});
  CheckShortRows<int16_t>(301, {5, 2, 1});
  CheckShortRows<double>(301, {2, 2, 60});
  CheckShortRows<float>(301, {32, 33});  // 65 a row: the split over elements
}

TEST(Split, EqualPartsDefaultAndNumOutputsUneven) {
  OpTest equal("Split", 13);
  equal.Input(Iota<int64_t>({6})).Outputs(3);
  auto e = RunOp(equal);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE(Same(I64({2}, {2, 3}), (*e)[1].tensor()));

  OpTest uneven("Split", 18);
  uneven.Input(Iota<int64_t>({7})).Attr("num_outputs", int64_t{3}).Outputs(3);
  auto u = RunOp(uneven);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ((*u)[0].tensor().shape(), (Shape{3}));
  EXPECT_EQ((*u)[1].tensor().shape(), (Shape{3}));
  EXPECT_TRUE(Same(I64({1}, {6}), (*u)[2].tensor()));

  OpTest not_even("Split", 13);
  not_even.Input(Iota<int64_t>({7})).Outputs(3);
  EXPECT_TRUE(Refused(RunOp(not_even), StatusCode::kInvalidArgument, "axis 0 of size 7 cannot be split evenly into 3 outputs"));
}

TEST(Split, AttributeFormZeroSizesAndBadSums) {
  OpTest attr("Split", 11);
  attr.Input(Iota<float>({2, 5})).Attr("axis", int64_t{-1}).Attr("split", std::vector<int64_t>{0, 5}).Outputs(2);
  auto a = RunOp(attr);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)[0].tensor().shape(), (Shape{2, 0}));
  EXPECT_TRUE(Same(Iota<float>({2, 5}), (*a)[1].tensor()));

  OpTest sum("Split", 13);
  sum.Input(Iota<float>({5})).Input(I64({2}, {2, 2})).Outputs(2);
  EXPECT_EQ(RunOp(sum).status().code(), StatusCode::kInvalidArgument);

  OpTest negative("Split", 13);
  negative.Input(Iota<float>({5})).Input(I64({2}, {6, -1})).Outputs(2);
  EXPECT_TRUE(Refused(RunOp(negative), StatusCode::kInvalidArgument, "split has a negative size -1"));
}

// With nothing before the axis, an output that starts 64-byte aligned is a view of the input, not
// a copy; otherwise (a row before the axis, or an unaligned start) a copy. Values are the same.
TEST(Split, ContiguousAlignedPartsAreViewsOfTheInput) {
  const Tensor x = Iota<float>({1, 4, 16});  // a part of 1 row is 64 bytes
  OpTest split("Split", 13);
  split.Input(x).Input(I64({2}, {1, 3})).Attr("axis", int64_t{1}).Outputs(2);
  auto out = RunOp(split);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const char* base = static_cast<const char*>(x.raw_data());
  EXPECT_EQ((*out)[0].tensor().raw_data(), base);
  EXPECT_EQ((*out)[1].tensor().raw_data(), base + 64);
  EXPECT_TRUE(Same(Iota<float>({1, 1, 16}), (*out)[0].tensor()));
  EXPECT_TRUE(Same(Iota<float>({1, 3, 16}, 16), (*out)[1].tensor()));

  const Tensor unaligned = Iota<float>({1, 5, 3});  // the second part starts 24 bytes in
  OpTest odd("Split", 13);
  odd.Input(unaligned).Input(I64({2}, {2, 3})).Attr("axis", int64_t{1}).Outputs(2);
  auto o = RunOp(odd);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_NE((*o)[1].tensor().raw_data(), static_cast<const char*>(unaligned.raw_data()) + 24);
  EXPECT_TRUE(Same(Iota<float>({1, 3, 3}, 6), (*o)[1].tensor()));

  const Tensor rows = Iota<float>({2, 4, 16});  // two rows before the axis: parts are not contiguous
  OpTest strided("Split", 13);
  strided.Input(rows).Attr("axis", int64_t{1}).Outputs(2);
  auto r = RunOp(strided);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE((*r)[0].tensor().raw_data(), rows.raw_data());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2, 16}));
  EXPECT_EQ((*r)[0].tensor().data<float>()[31], rows.data<float>()[31]);  // image 0's rows 0-1
  EXPECT_EQ((*r)[0].tensor().data<float>()[32], rows.data<float>()[64]);  // image 1's start
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
