// UnfoldTensor: hand-computed windows, every type ONNX Runtime registers (against a plain loop:
// the op only moves elements), strings, and the refusals.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

OpTest Unfold(Tensor x, int64_t size, int64_t step, std::optional<int64_t> dim = std::nullopt) {
  OpTest t("UnfoldTensor", 1, kMsDomain);
  t.Input(std::move(x)).Attr("size", size).Attr("step", step);
  if (dim) t.Attr("dim", *dim);
  return t;
}

TEST(UnfoldTensor, HandComputedWindows) {
  // [2, 5] along dim 1, size 2, step 2: windows start at 0 and 2 (the 5th element is left over).
  auto out = Unfold(Tensor::FromVector<float>({2, 5}, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14}), 2, 2, 1)
                 .Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 2, 2}, {0, 1, 2, 3, 10, 11, 12, 13}), (*out)[0].tensor()));
  // Along dim 0 of [3, 2] (the default dim would be the last axis), size 2, step 1: the new last
  // axis runs along the unfolded one, the trailing axis stays in place.
  out = Unfold(Tensor::FromVector<int64_t>({3, 2}, {1, 2, 3, 4, 5, 6}), 2, 1, 0).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2, 2, 2}, {1, 3, 2, 4, 3, 5, 4, 6}), (*out)[0].tensor()));
}

TEST(UnfoldTensor, DefaultDimIsLastAndDefaultStepIsOne) {
  OpTest t("UnfoldTensor", 1, kMsDomain);
  t.Input(Tensor::FromVector<int32_t>({1, 4}, {7, 8, 9, 10})).Attr("size", int64_t{3});
  auto out = t.Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({1, 2, 3}, {7, 8, 9, 8, 9, 10}), (*out)[0].tensor()));
}

// Y[o, w, i, j] = X[o, w * step + j, i], by index arithmetic alone.
template <typename T>
void CheckType(const std::vector<T>& pool) {
  const Shape shape = {2, 7, 3};
  std::vector<T> values;
  for (int64_t i = 0; i < 42; ++i) values.push_back(pool[(i * 5 + 3) % pool.size()]);
  const int64_t size = 3, step = 2, windows = 3;
  std::vector<T> want;
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t w = 0; w < windows; ++w)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < size; ++j) want.push_back(values[(o * 7 + w * step + j) * 3 + i]);
  auto out = Unfold(Tensor::FromVector<T>(shape, values), size, step, -2).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<T>({2, windows, 3, size}, want), (*out)[0].tensor()))
      << DataTypeName(DataTypeOf<T>::value);
}

TEST(UnfoldTensor, EveryRegisteredType) {
  CheckType<float>({1.5f, -2.0f, 3.25f, 0.0f, 7.0f});
  CheckType<double>({1.5, -2.0, 3.25, 1e300});
  CheckType<int8_t>({-128, 1, 127, 5});
  CheckType<int16_t>({-32768, 1, 32767, 5});
  CheckType<int32_t>({INT_MIN, 1, INT_MAX, 5});
  CheckType<int64_t>({INT64_MIN, 1, INT64_MAX, 5});
  CheckType<uint8_t>({0, 1, 255, 5});
  CheckType<uint16_t>({0, 1, 65535, 5});
  CheckType<uint32_t>({0, 1, 4000000000u, 5});
  CheckType<uint64_t>({0, 1, UINT64_MAX, 5});
  CheckType<bool>({true, false, false});
  CheckType<Float16>({Float16{0x3C00}, Float16{0xC000}, Float16{0x7E00}, Float16{0x0001}});
  CheckType<BFloat16>({BFloat16{0x3F80}, BFloat16{0xC000}, BFloat16{0x7FC0}});
  CheckType<std::string>({"a", "", "a longer string than any small-string buffer holds", "z"});
}

TEST(UnfoldTensor, WholeAxisIsOneWindow) {
  auto out = Unfold(Tensor::FromVector<float>({3}, {1, 2, 3}), 3, 100, 0).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 3}, {1, 2, 3}), (*out)[0].tensor()));
}

TEST(UnfoldTensor, EmptyOuterAxisGivesEmptyOutput) {
  auto out = Unfold(Tensor::FromVector<float>({0, 4}, {}), 2, 1, 1).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{0, 3, 2}));
}

TEST(UnfoldTensor, RefusesHostileAttributes) {
  const Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(Refused(Unfold(x, 2, 0).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'step'"));
  EXPECT_TRUE(Refused(Unfold(x, 2, -1).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'step'"));
  EXPECT_TRUE(
      Refused(Unfold(x, 2, int64_t{1} << 40).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'step'"));
  EXPECT_TRUE(Refused(Unfold(x, 0, 1).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'size'"));
  EXPECT_TRUE(Refused(Unfold(x, -3, 1).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'size'"));
  EXPECT_TRUE(Refused(Unfold(x, INT64_MAX, 1).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'size'"));
  EXPECT_TRUE(Refused(Unfold(x, 4, 1).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "longer than axis"));
  EXPECT_TRUE(Refused(Unfold(x, 1, 1, 2).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'dim'"));
  EXPECT_TRUE(Refused(Unfold(x, 1, 1, -3).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'dim'"));
  EXPECT_TRUE(
      Refused(Unfold(x, 1, 1, int64_t{1} << 40).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'dim'"));
  OpTest two = Unfold(x, 1, 1);
  two.Input(x);
  EXPECT_TRUE(Refused(two.Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "takes 1 input"));
  OpTest no_size("UnfoldTensor", 1, kMsDomain);
  no_size.Input(x);
  EXPECT_TRUE(Refused(no_size.Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "'size' is required"));
}

TEST(UnfoldTensor, RefusesScalarsAndUnregisteredTypes) {
  EXPECT_TRUE(Refused(Unfold(Tensor::Scalar<float>(1), 1, 1).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument,
                      "rank 0"));
  const Tensor f8 = Tensor::FromVector<Float8E4M3FN>({2}, {Float8E4M3FN{1}, Float8E4M3FN{2}});
  EXPECT_TRUE(Refused(Unfold(f8, 1, 1).Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "input 'input'"));
}

}  // namespace
}  // namespace onnxflow
