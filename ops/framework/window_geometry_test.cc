#include "ops/framework/window_geometry.h"

#include <gtest/gtest.h>

namespace onnxflow {
namespace {

TEST(WindowGeometry, DilatedWindowSpansFirstToLastTap) {
  EXPECT_EQ(DilatedWindow(1, 1), 1);
  EXPECT_EQ(DilatedWindow(3, 1), 3);
  EXPECT_EQ(DilatedWindow(3, 2), 5);
  EXPECT_EQ(DilatedWindow(1, 4), 1);
}

TEST(WindowGeometry, CheckedDilatedWindowRefusesOverflow) {
  int64_t window = 0;
  EXPECT_TRUE(CheckedDilatedWindow(3, 2, &window));
  EXPECT_EQ(window, 5);
  EXPECT_FALSE(CheckedDilatedWindow(3, int64_t{1} << 62, &window));
  EXPECT_FALSE(CheckedDilatedWindow(2, INT64_MAX, &window));  // INT64_MAX + 1
  EXPECT_TRUE(CheckedDilatedWindow(1, INT64_MAX, &window));   // one tap: no gap at all
  EXPECT_EQ(window, 1);
}

TEST(WindowGeometry, SamePadsOfHugeStrides) {
  // ceil(in / stride) without in + stride - 1: one window, padded to fit.
  const AxisPads pads = SamePads(5, INT64_MAX, 3, true);
  EXPECT_EQ(pads.begin + pads.end, 0);
  EXPECT_EQ(FloorWindowCount(5, 3, INT64_MAX), 1);
  const AxisPads one = SamePads(1, INT64_MAX, 3, false);
  EXPECT_EQ(one.begin, 1);
  EXPECT_EQ(one.end, 1);
}

TEST(WindowGeometry, SamePadsGiveCeilOfInputOverStride) {
  // For every small case: the padded axis holds exactly ceil(in / stride) windows.
  for (int64_t in = 1; in <= 9; ++in) {
    for (int64_t stride = 1; stride <= 3; ++stride) {
      for (int64_t window = 1; window <= 7; ++window) {
        for (bool extra_at_end : {false, true}) {
          const AxisPads pads = SamePads(in, stride, window, extra_at_end);
          EXPECT_GE(pads.begin, 0);
          EXPECT_LE(pads.end - pads.begin, extra_at_end ? 1 : 0);
          EXPECT_GE(pads.end - pads.begin, extra_at_end ? 0 : -1);
          EXPECT_EQ(FloorWindowCount(in + pads.begin + pads.end, window, stride), (in + stride - 1) / stride)
              << "in " << in << " stride " << stride << " window " << window;
        }
      }
    }
  }
}

TEST(WindowGeometry, SamePadsPutTheOddPadByMode) {
  // in 5, stride 1, window 4: 3 pads in all.
  const AxisPads upper = SamePads(5, 1, 4, /*extra_at_end=*/true);
  EXPECT_EQ(upper.begin, 1);
  EXPECT_EQ(upper.end, 2);
  const AxisPads lower = SamePads(5, 1, 4, /*extra_at_end=*/false);
  EXPECT_EQ(lower.begin, 2);
  EXPECT_EQ(lower.end, 1);
  // A window that the strided input already covers needs no pads.
  const AxisPads none = SamePads(7, 3, 1, true);
  EXPECT_EQ(none.begin, 0);
  EXPECT_EQ(none.end, 0);
}

TEST(WindowGeometry, FloorWindowCountKeepsWholeWindowsOnly) {
  EXPECT_EQ(FloorWindowCount(5, 5, 1), 1);
  EXPECT_EQ(FloorWindowCount(7, 3, 2), 3);
  EXPECT_EQ(FloorWindowCount(8, 3, 2), 3);  // the fourth window would need one more input
  EXPECT_EQ(FloorWindowCount(9, 3, 2), 4);
}

}  // namespace
}  // namespace onnxflow
