#include "ops/elementwise/broadcast.h"

#include <gtest/gtest.h>

#include <vector>

#include "ops/elementwise/register.h"
#include "ops/elementwise/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using testing_util::MakeTensor;

// The flat index into `input` of output element `flat` (numpy broadcasting, done slowly).
int64_t NaiveIndex(const Shape& input, const Shape& output, int64_t flat) {
  int64_t index = 0, in_stride = 1;
  for (size_t d = output.size(); d-- > 0;) {
    const int64_t coord = flat % output[d];
    flat /= output[d];
    const int64_t k = static_cast<int64_t>(d) - static_cast<int64_t>(output.size() - input.size());
    if (k >= 0) {
      if (input[k] != 1) index += coord * in_stride;
      in_stride *= input[k];
    }
  }
  return index;
}

// Walks the plan over [begin, end) in pieces and checks every element's input offsets.
void CheckPlan(const std::vector<Shape>& inputs, const Shape& output) {
  std::vector<const Shape*> ptrs;
  for (const Shape& s : inputs) ptrs.push_back(&s);
  auto plan = BroadcastPlan::Make(ptrs, output);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const int64_t total = ElementCount(output);
  ASSERT_EQ(plan->total(), total);
  // Several split points, as ParallelFor would choose them.
  for (int64_t split : {int64_t{1}, int64_t{3}, total / 2 + 1, total}) {
    if (split <= 0) continue;
    std::vector<int> seen(total, 0);
    for (int64_t begin = 0; begin < total; begin += split) {
      const int64_t end = std::min(total, begin + split);
      plan->ForEachRun(begin, end, [&](const int64_t* off, int64_t out_off, int64_t n) {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t o = out_off + j;
          ASSERT_LT(o, total);
          ++seen[o];
          for (size_t i = 0; i < inputs.size(); ++i) {
            const int64_t got = off[i] + (plan->inner_broadcast(static_cast<int>(i)) ? 0 : j);
            ASSERT_EQ(got, NaiveIndex(inputs[i], output, o))
                << "input " << i << " " << ShapeToString(inputs[i]) << " -> " << ShapeToString(output) << " at " << o;
          }
        }
      });
    }
    for (int64_t o = 0; o < total; ++o) ASSERT_EQ(seen[o], 1) << "element " << o;
  }
}

TEST(BroadcastPlanTest, MatchesNaiveIndexing) {
  CheckPlan({{2, 3, 4}, {2, 3, 4}}, {2, 3, 4});           // same shape: one run
  CheckPlan({{2, 3, 4}, {}}, {2, 3, 4});                  // scalar
  CheckPlan({{2, 3, 4}, {1}}, {2, 3, 4});                 // [1]
  CheckPlan({{}, {2, 3, 4}}, {2, 3, 4});                  // scalar first
  CheckPlan({{2, 3, 4}, {4}}, {2, 3, 4});                 // mismatched ranks, trailing
  CheckPlan({{2, 3, 4}, {3, 1}}, {2, 3, 4});              // repeat inside the run
  CheckPlan({{2, 1, 4}, {1, 3, 1}}, {2, 3, 4});           // both broadcast
  CheckPlan({{5, 3, 7, 7}, {1, 3, 1, 1}}, {5, 3, 7, 7});  // per-channel bias
  CheckPlan({{1, 1, 1}, {1}}, {1, 1, 1});                 // all ones
  CheckPlan({{3, 1}, {1, 4}, {3, 4}}, {3, 4});            // three inputs
  CheckPlan({{2, 1, 3, 1, 5}, {1, 4, 3, 6, 1}}, {2, 4, 3, 6, 5});
}

TEST(BroadcastPlanTest, ZeroSizedAndErrors) {
  Shape a{2, 0, 3}, b{3}, out{2, 0, 3};
  auto plan = BroadcastPlan::Make({&a, &b}, out);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->total(), 0);
  Shape bad{4};
  Shape o2{2, 3};
  EXPECT_TRUE(Refused(BroadcastPlan::Make({&bad}, o2), StatusCode::kInvalidArgument, "shape [4] does not broadcast to [2,3]"));
  Shape too_long{1, 2, 3};
  EXPECT_TRUE(Refused(BroadcastPlan::Make({&too_long}, o2), StatusCode::kInvalidArgument, "shape [1,2,3] has more dims than the output [2,3]"));
}

// Through a real kernel, big enough that ParallelFor splits the runs over threads.
TEST(BroadcastTest, AddSplitsOverThreads) {
  const int64_t n = 64, c = 33, hw = 129;
  std::vector<double> x(n * c * hw), bias(c);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 1000);
  for (int64_t i = 0; i < c; ++i) bias[i] = 1000.0 * (i + 1);
  std::vector<double> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) expected[i] = x[i] + bias[(i / hw) % c];
  OpTest test("Add", 14);
  test.Input(MakeTensor<float>({n, c, hw}, x)).Input(MakeTensor<float>({c, 1}, bias)).Threads(2);
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<float>({n, c, hw}, expected), out->at(0).tensor()));
}

// One operand repeating along middle dims (MiddleBroadcast: a squeeze-and-excitation scale of
// blocked channels, a row added to every row) runs row by row; on either side of Sub and Div, on
// one and two threads. Shapes that only look alike take the plan.
TEST(BroadcastTest, RowsRepeatedAlongMiddleDims) {
  int64_t outer, middle, width;
  EXPECT_TRUE(MiddleBroadcast({2, 3, 4, 5, 16}, {2, 3, 1, 1, 16}, {2, 3, 4, 5, 16}, &outer, &middle, &width));
  EXPECT_EQ(std::vector<int64_t>({outer, middle, width}), std::vector<int64_t>({6, 20, 16}));
  EXPECT_TRUE(MiddleBroadcast({6, 10, 20}, {20}, {6, 10, 20}, &outer, &middle, &width));
  EXPECT_EQ(std::vector<int64_t>({outer, middle, width}), std::vector<int64_t>({1, 60, 20}));
  EXPECT_FALSE(MiddleBroadcast({2, 3, 4, 16}, {3, 1, 16}, {2, 3, 4, 16}, &outer, &middle, &width));  // N repeats too
  EXPECT_FALSE(MiddleBroadcast({2, 3, 4, 5}, {2, 3, 1, 1}, {2, 3, 4, 5}, &outer, &middle, &width));  // width 1
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3, 4, 5, 16}, {2, 3, 1, 1, 16}}, {{6, 10, 20}, {20}}, {{2, 3, 4, 16}, {3, 1, 16}}};
  for (const auto& [full_shape, row_shape] : shapes) {
    for (const char* op : {"Sub", "Div"}) {
      for (const bool row_first : {false, true}) {
        for (const int threads : {1, 2}) {
          SCOPED_TRACE(std::string(op) + " " + ShapeToString(full_shape) + " " + ShapeToString(row_shape));
          std::vector<double> full(static_cast<size_t>(ElementCount(full_shape))), row(ElementCount(row_shape));
          for (size_t i = 0; i < full.size(); ++i) full[i] = static_cast<double>(i % 13) - 5.5;
          for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<double>(i % 7) + 0.5;
          std::vector<double> expected(full.size());
          for (size_t i = 0; i < full.size(); ++i) {
            const double f = full[i], r = row[NaiveIndex(row_shape, full_shape, static_cast<int64_t>(i))];
            const double a = row_first ? r : f, b = row_first ? f : r;
            expected[i] = static_cast<float>(std::string(op) == "Sub" ? a - b : a / b);
          }
          OpTest test(op, 14);
          const Tensor tf = MakeTensor<float>(full_shape, full), tr = MakeTensor<float>(row_shape, row);
          test.Input(row_first ? tr : tf).Input(row_first ? tf : tr).Threads(threads);
          auto out = test.Run(RegisterElementwiseKernels);
          ASSERT_TRUE(out.ok()) << out.status().ToString();
          EXPECT_TRUE(TensorsNear(MakeTensor<float>(full_shape, expected), out->at(0).tensor(), 1e-6, 1e-6));
        }
      }
    }
  }
}

// The same products for float16 and bfloat16 (widened a block of rows at a time): each element
// the float result on the widened values, rounded once; rows longer than the block (1100) too.
template <typename T>
void ExpectSixteenBitRowsRoundTheFloatResult() {
  const std::vector<std::pair<Shape, Shape>> shapes = {{{1, 3, 5, 7, 16}, {1, 3, 1, 1, 16}}, {{2, 3, 1100}, {1100}}};
  for (const auto& [full_shape, row_shape] : shapes) {
    for (const char* op : {"Mul", "Div"}) {
      for (const bool row_first : {false, true}) {
        for (const int threads : {1, 2}) {
          SCOPED_TRACE(std::string(op) + " " + ShapeToString(full_shape) + " " + ShapeToString(row_shape));
          std::vector<double> full(static_cast<size_t>(ElementCount(full_shape))), row(ElementCount(row_shape));
          for (size_t i = 0; i < full.size(); ++i) full[i] = (static_cast<double>(i % 13) - 5.5) / 3;
          for (size_t i = 0; i < row.size(); ++i) row[i] = (static_cast<double>(i % 7) + 0.5) / 3;
          const Tensor tf = MakeTensor<T>(full_shape, full), tr = MakeTensor<T>(row_shape, row);
          std::vector<T> expected(full.size());
          for (size_t i = 0; i < full.size(); ++i) {
            const float f = ToCompute(tf.data<T>()[i]);
            const float r = ToCompute(tr.data<T>()[NaiveIndex(row_shape, full_shape, static_cast<int64_t>(i))]);
            const float a = row_first ? r : f, b = row_first ? f : r;
            expected[i] = FromCompute<T>(std::string(op) == "Mul" ? a * b : a / b);
          }
          OpTest test(op, 14);
          test.Input(row_first ? tr : tf).Input(row_first ? tf : tr).Threads(threads);
          auto out = test.Run(RegisterElementwiseKernels);
          ASSERT_TRUE(out.ok()) << out.status().ToString();
          EXPECT_TRUE(TensorsEqual(Tensor::FromVector<T>(full_shape, expected), out->at(0).tensor()));
        }
      }
    }
  }
}

TEST(BroadcastTest, SixteenBitRowsRepeatedAlongMiddleDims) {
  ExpectSixteenBitRowsRoundTheFloatResult<Float16>();
  ExpectSixteenBitRowsRoundTheFloatResult<BFloat16>();
}

TEST(BroadcastTest, ZeroSizedDims) {
  OpTest test("Mul", 14);
  test.Input(MakeTensor<float>({2, 0, 3}, {})).Input(MakeTensor<float>({3}, {1, 2, 3}));
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().shape(), (Shape{2, 0, 3}));
}

TEST(BroadcastTest, IncompatibleShapesFail) {
  OpTest test("Add", 14);
  test.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(MakeTensor<float>({2}, {1, 2}));
  EXPECT_TRUE(Refused(test.Run(RegisterElementwiseKernels), StatusCode::kInvalidArgument, "shapes [2,3] and [2] do not broadcast"));
}

TEST(BroadcastTest, LegacyBroadcastAxis) {
  // Add-6 with broadcast=1, axis=1: B of shape [3] lines up with A's dim 1.
  OpTest test("Add", 6);
  test.Input(MakeTensor<float>({2, 3, 2}, {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}))
      .Input(MakeTensor<float>({3}, {10, 20, 30}))
      .Attr("broadcast", int64_t{1})
      .Attr("axis", int64_t{1});
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<float>({2, 3, 2}, {10, 10, 20, 20, 30, 30, 11, 11, 21, 21, 31, 31}),
                           out->at(0).tensor()));
}

}  // namespace
}  // namespace onnxflow
