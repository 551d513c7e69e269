// MaxpoolWithMask: hand-computed windows for each of ONNX Runtime's mask rules (1-D stops the
// window, 2-D the row, position 0 never masked), output sizes, and the refusals. The four
// hand-computed outputs are also what ONNX Runtime 1.30 gives for them (checked through node).
#include <gtest/gtest.h>

#include <limits>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

constexpr float kLowest = std::numeric_limits<float>::lowest();

OpTest Pool(Tensor x, Tensor m, std::vector<int64_t> kernel) {
  OpTest t("MaxpoolWithMask", 1, kMsDomain);
  t.Input(std::move(x)).Input(std::move(m)).Attr("kernel_shape", kernel);
  return t;
}

TEST(MaxpoolWithMask, OneDimensionalMaskStopsTheWindow) {
  // x = 1 9 2 8 3, mask 1 0 1 1 1, kernel 3 stride 1: windows [1 9 2] stops at 9 (masked) -> 1;
  // [9 2 8] stops at once -> lowest; [2 8 3] -> 8.
  auto out = Pool(Tensor::FromVector<float>({1, 1, 5}, {1, 9, 2, 8, 3}),
                  Tensor::FromVector<int32_t>({1, 1, 5}, {1, 0, 1, 1, 1}), {3})
                 .Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 3}, {1, kLowest, 8}), (*out)[0].tensor()));
}

TEST(MaxpoolWithMask, TwoDimensionalMaskStopsOnlyTheRow) {
  // 3x3 x = [[1 2 3] [4 5 6] [7 8 9]], mask 0 only at (1, 1); kernel 2x2, stride 1.
  // Window (0,0): row 0 -> 1, 2; row 1 -> 4, then (1,1) masked ends that row: max 4.
  // Window (0,1): row 0 -> 2, 3; row 1 starts at the mask: max 3. Window (1,0): row 1 -> 4, stop;
  // row 2 -> 7, 8: 8. Window (1,1): row 1 stops at once; row 2 -> 8, 9: 9.
  auto out = Pool(Tensor::FromVector<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                  Tensor::FromVector<int32_t>({1, 1, 3, 3}, {1, 1, 1, 1, 0, 1, 1, 1, 1}), {2, 2})
                 .Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 2, 2}, {4, 3, 8, 9}), (*out)[0].tensor()));
}

TEST(MaxpoolWithMask, PositionZeroOfAPlaneIsNeverMaskedInTwoD) {
  // All-zero mask: only position 0 is read (ONNX Runtime tests index > 0); other windows are empty.
  auto out = Pool(Tensor::FromVector<float>({1, 1, 2, 3}, {5, 1, 2, 3, 4, 6}),
                  Tensor::FromVector<int32_t>({1, 1, 2, 3}, {0, 0, 0, 0, 0, 0}), {2, 2})
                 .Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 1, 2}, {5, kLowest}), (*out)[0].tensor()));
}

TEST(MaxpoolWithMask, PadsAndStrides) {
  // 1-D x = 3 1 4 1 5 9, mask all 1, kernel 2, stride 2, pads (1, 1): out = (6 + 2 - 2) / 2 + 1 = 4,
  // windows [-1, 0], [1, 2], [3, 4], [5, 6]: 3, 4, 5, 9.
  OpTest t = Pool(Tensor::FromVector<float>({1, 1, 6}, {3, 1, 4, 1, 5, 9}),
                  Tensor::FromVector<int32_t>({1, 1, 6}, {1, 1, 1, 1, 1, 1}), {2});
  t.Attr("strides", std::vector<int64_t>{2}).Attr("pads", std::vector<int64_t>{1, 1});
  auto out = t.Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 4}, {3, 4, 5, 9}), (*out)[0].tensor()));
}

TEST(MaxpoolWithMask, KernelOnePastTheInputGivesAnEmptyAxis) {
  // (2 + 0 - 3) / 1 + 1 = 0 (ONNX Runtime's float formula truncates): an empty output.
  auto out = Pool(Tensor::FromVector<float>({1, 1, 2}, {1, 2}), Tensor::FromVector<int32_t>({1, 1, 2}, {1, 1}), {3})
                 .Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{1, 1, 0}));
}

TEST(MaxpoolWithMask, RefusesMalformedNodesAndInputs) {
  const Tensor x = Tensor::FromVector<float>({1, 1, 3, 3}, std::vector<float>(9, 1));
  const Tensor m = Tensor::FromVector<int32_t>({1, 1, 3, 3}, std::vector<int32_t>(9, 1));
  auto run = [](OpTest t) { return t.Run(RegisterMsMiscKernels); };
  EXPECT_TRUE(Refused(run(Pool(x, m, {})), StatusCode::kInvalidArgument, "'kernel_shape'"));
  EXPECT_TRUE(Refused(run(Pool(x, m, {1, 1, 1, 1})), StatusCode::kInvalidArgument, "'kernel_shape'"));
  EXPECT_TRUE(Refused(run(Pool(x, m, {0, 2})), StatusCode::kInvalidArgument, "'kernel_shape' must be positive"));
  EXPECT_TRUE(Refused(run(Pool(x, m, {2})), StatusCode::kInvalidArgument, "input 'X'"));
  EXPECT_TRUE(Refused(run(Pool(x, m, {5, 5})), StatusCode::kInvalidArgument, "'kernel_shape' 5"));
  OpTest one("MaxpoolWithMask", 1, kMsDomain);
  one.Input(x).Attr("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_TRUE(Refused(run(one), StatusCode::kInvalidArgument, "takes 2 inputs"));
  OpTest pads = Pool(x, m, {2, 2});
  pads.Attr("pads", std::vector<int64_t>{2, 0, 0, 0});
  EXPECT_TRUE(Refused(run(pads), StatusCode::kInvalidArgument, "'pads'"));
  OpTest negative = Pool(x, m, {2, 2});
  negative.Attr("pads", std::vector<int64_t>{-1, 0, 0, 0});
  EXPECT_TRUE(Refused(run(negative), StatusCode::kInvalidArgument, "'pads'"));
  OpTest stride = Pool(x, m, {2, 2});
  stride.Attr("strides", std::vector<int64_t>{0, 1});
  EXPECT_TRUE(Refused(run(stride), StatusCode::kInvalidArgument, "'strides'"));
  OpTest dil = Pool(x, m, {2, 2});
  dil.Attr("dilations", std::vector<int64_t>{1, 1});
  EXPECT_TRUE(Refused(run(dil), StatusCode::kInvalidArgument, "'dilations'"));
  OpTest pad_mode = Pool(x, m, {2, 2});
  pad_mode.Attr("auto_pad", std::string("SAME"));
  EXPECT_TRUE(Refused(run(pad_mode), StatusCode::kInvalidArgument, "'auto_pad'"));
  EXPECT_TRUE(Refused(run(Pool(x, Tensor::FromVector<int32_t>({1, 1, 3, 2}, std::vector<int32_t>(6, 1)), {2, 2})),
                      StatusCode::kInvalidArgument, "input 'M'"));
  EXPECT_TRUE(Refused(run(Pool(x, Tensor::FromVector<float>({1, 1, 3, 3}, std::vector<float>(9, 1)), {2, 2})),
                      StatusCode::kInvalidArgument, "input 'M' must be int32"));
  EXPECT_TRUE(Refused(run(Pool(x, Tensor::FromVector<int32_t>({0, 1, 3, 3}, {}), {2, 2})), StatusCode::kInvalidArgument,
                      "input 'M'"));
  EXPECT_TRUE(Refused(run(Pool(Tensor::FromVector<double>({1, 1, 3, 3}, std::vector<double>(9, 1)), m, {2, 2})),
                      StatusCode::kInvalidArgument, "input 'X' must be float"));
  EXPECT_TRUE(Refused(
      run(Pool(Tensor::FromVector<float>({1, 0, 3, 3}, {}), Tensor::FromVector<int32_t>({1, 0, 3, 3}, {}), {2, 2})),
      StatusCode::kInvalidArgument, "only N may be 0"));
}

TEST(MaxpoolWithMask, HugeKernelsAndStridesAreRefusedOrHarmless) {
  const Tensor x = Tensor::FromVector<float>({1, 1, 3}, {1, 2, 3});
  const Tensor m = Tensor::FromVector<int32_t>({1, 1, 3}, {1, 1, 1});
  // A kernel near INT64_MAX with pads just below it: in + pads - kernel stays in range, negative.
  OpTest huge = Pool(x, m, {INT64_MAX});
  huge.Attr("pads", std::vector<int64_t>{INT64_MAX - 1, INT64_MAX - 1});
  EXPECT_TRUE(Refused(huge.Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "overflows"));
  OpTest same = Pool(x, m, {INT64_MAX});
  same.Attr("auto_pad", std::string("SAME_UPPER")).Attr("strides", std::vector<int64_t>{INT64_MAX});
  EXPECT_TRUE(Refused(same.Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "overflow"));
  // A stride past the input: one window.
  OpTest stride = Pool(x, m, {2});
  stride.Attr("strides", std::vector<int64_t>{INT64_MAX});
  auto out = stride.Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 1}, {2}), (*out)[0].tensor()));
}

}  // namespace
}  // namespace onnxflow
