// BlockedDepthwiseConv on float16 activations (graph/blocked_half.h): X float16 or float, Y of its
// output_type. The rows sum in float on the widened X in the order they do for float, so on every
// compiled target a float16 Y must be FloatToHalf of the float run on the same (float16-rounded)
// values, bit for bit, and a float Y from a float16 X the float run itself: through the wide
// interiors (3x3, 5x5, 7x7 at stride 1 and 2), the 4-pixel runs (dilated), the masked border
// pixels, maps too narrow for an interior, pad lanes and two threads. What it does not take is
// refused by name.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/blocked_test_util.h"
#include "ops/framework/every_target.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using blocked_test::BlockedHalfInput;
using blocked_test::HalfInput;
using blocked_test::Narrowed;
using blocked_test::Random;
using blocked_test::RunOne;
using blocked_test::SameBits;

constexpr int64_t kFloat16 = static_cast<int64_t>(DataType::kFloat16);

struct HalfDepthwiseCase {
  Shape x;
  std::vector<int64_t> kernel, strides, pads, dilations;
  std::string activation;
  int threads = 1;
  bool half_weights = false;  // W in float16, as a float16 model's (widened at load)
};

// BlockedDepthwiseConv of the case on X, writing Y of `y_type`. Weights of a few significant bits
// and a bias, the same for every run of a case.
Result<Tensor> RunDepthwise(const HalfDepthwiseCase& cs, const Tensor& x, int64_t y_type) {
  const int64_t channels = cs.x[1];
  const Shape w_shape = {channels, 1, cs.kernel[0], cs.kernel[1]};
  std::vector<float> w = Random(ElementCount(w_shape), 41);
  for (float& v : w) v = static_cast<float>(static_cast<int>(v * 64)) / 64;
  OpTest test("BlockedDepthwiseConv", 1, "com.onnxflow");
  test.Input(x);
  test.Input(cs.half_weights ? RoundToSixteenBits(w, DataType::kFloat16, w_shape).tensor
                             : Tensor::FromVector<float>(w_shape, w));
  test.ConstantInput(1).Input(Tensor::FromVector<float>({channels}, Random(channels, 42))).ConstantInput(2);
  test.Attr("group", channels);
  if (!cs.strides.empty()) test.Attr("strides", cs.strides);
  if (!cs.pads.empty()) test.Attr("pads", cs.pads);
  if (!cs.dilations.empty()) test.Attr("dilations", cs.dilations);
  if (!cs.activation.empty()) test.Attr("activation", cs.activation);
  if (y_type != 1) test.Attr("output_type", y_type);
  test.Threads(cs.threads);
  return RunOne(test);
}

// Each float of `y` cut to float16 toward zero: the bits a store that truncates would give.
Tensor Truncated(const Tensor& y) {
  std::vector<Float16> h(static_cast<size_t>(y.size()));
  for (size_t i = 0; i < h.size(); ++i) {
    const float v = y.data<float>()[i];
    uint16_t bits = FloatToHalf(v);
    if (std::fabs(HalfToFloat(bits)) > std::fabs(v)) --bits;  // rounded away from zero: one step back
    h[i].bits = bits;
  }
  return Tensor::FromVector<Float16>(y.shape(), h);
}

void ExpectHalfIsFloatNarrowed(const HalfDepthwiseCase& cs) {
  SCOPED_TRACE("X " + ShapeToString(cs.x) + " kernel " + ShapeToString(cs.kernel));
  // Near float16's largest and below its smallest normal in the first block: widened exactly.
  const HalfInput x = BlockedHalfInput(cs.x, 43, {{5, 60000.0f}, {cs.x[3] + 2, -60000.0f}, {7, 3e-6f}});
  const Result<Tensor> y_float = RunDepthwise(cs, x.widened, 1);
  const Result<Tensor> y_half = RunDepthwise(cs, x.half, kFloat16);
  ASSERT_TRUE(y_float.ok()) << y_float.status().ToString();
  ASSERT_TRUE(y_half.ok()) << y_half.status().ToString();
  ASSERT_EQ(y_float->dtype(), DataType::kFloat);
  ASSERT_EQ(y_half->dtype(), DataType::kFloat16);
  EXPECT_TRUE(SameBits(Narrowed(*y_float), *y_half));
  // The rounding is real: most sums are not float16 numbers, so a store that rounds otherwise
  // (toward zero, here) gives other bits.
  int64_t inexact = 0;
  for (int64_t i = 0; i < y_float->size(); ++i) {
    const float v = y_float->data<float>()[i];
    inexact += HalfToFloat(FloatToHalf(v)) != v;
  }
  EXPECT_GT(inexact, y_float->size() / 4);
  EXPECT_FALSE(SameBits(Truncated(*y_float), *y_half));
  // One side float16, the other float: the same sums.
  const Result<Tensor> from_float = RunDepthwise(cs, x.widened, kFloat16);
  ASSERT_TRUE(from_float.ok()) << from_float.status().ToString();
  EXPECT_TRUE(SameBits(*y_half, *from_float));
  const Result<Tensor> to_float = RunDepthwise(cs, x.half, 1);
  ASSERT_TRUE(to_float.ok()) << to_float.status().ToString();
  EXPECT_TRUE(SameBits(*y_float, *to_float));
}

class BlockedDepthwiseHalfTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(BlockedDepthwiseHalfTest);

TEST_P(BlockedDepthwiseHalfTest, RowsRoundTheFloatSums) {
  // MobileNet's 3x3 at stride 1 and 2 (the wide interior), ReLU6, pad lanes (24, 40 channels).
  ExpectHalfIsFloatNarrowed({{1, 24, 12, 21}, {3, 3}, {}, {1, 1, 1, 1}, {}, "Clip"});
  ExpectHalfIsFloatNarrowed({{2, 40, 15, 14}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, "Relu"});
  // EfficientNet's 5x5 with SiLU, MobileNetV3's with HardSwish at stride 2, ConvNeXt's 7x7.
  ExpectHalfIsFloatNarrowed({{1, 32, 14, 23}, {5, 5}, {}, {2, 2, 2, 2}, {}, "Swish"});
  ExpectHalfIsFloatNarrowed({{1, 72, 13, 29}, {5, 5}, {2, 2}, {2, 2, 2, 2}, {}, "HardSwish"});
  ExpectHalfIsFloatNarrowed({{1, 16, 10, 27}, {7, 7}, {}, {3, 3, 3, 3}});
  // The 4-pixel runs (a dilated window), asymmetric pads; a map narrower than any interior run
  // (every column masked); float16 weights; many rows over two threads.
  ExpectHalfIsFloatNarrowed({{1, 24, 11, 17}, {5, 5}, {1, 2}, {2, 0, 1, 3}, {1, 2}});
  ExpectHalfIsFloatNarrowed({{1, 16, 3, 2}, {3, 3}, {}, {1, 1, 1, 1}, {}, "", 1, true});
  ExpectHalfIsFloatNarrowed({{1, 64, 28, 28}, {3, 3}, {}, {1, 1, 1, 1}, {}, "Relu", 2, true});
}

TEST(BlockedDepthwiseHalfRefusalTest, RefusesWhatItDoesNotTake) {
  const HalfDepthwiseCase cs{{1, 16, 4, 4}, {3, 3}, {}, {1, 1, 1, 1}};
  const HalfInput x = BlockedHalfInput(cs.x, 44);
  EXPECT_TRUE(Refused(RunDepthwise(cs, x.half, static_cast<int64_t>(DataType::kInt32)), StatusCode::kInvalidArgument,
                      "BlockedDepthwiseConv: output_type must be FLOAT (1) or FLOAT16 (10), got 6"));
  EXPECT_TRUE(Refused(RunDepthwise(cs, Tensor(DataType::kInt32, {1, 1, 4, 4, 16}), 1), StatusCode::kInvalidArgument,
                      "BlockedDepthwiseConv: input 'X' must be float or float16, got int32"));
}

}  // namespace
}  // namespace onnxflow
