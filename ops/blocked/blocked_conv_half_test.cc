// BlockedConv on float16 activations (graph/blocked_half.h): X, and Y with Z and INTO, float16.
// The tiles compute in float on the widened values in the order they do for float, so on every
// compiled target a float16 run must give FloatToHalf of the float run on the same (float16-rounded)
// values, bit for bit: on the direct tiles (pointwise, strided, dilated, grouped, several chunks
// of input blocks, the rows of several tasks) and on Winograd's, with residuals, a joined
// Concat's INTO, and two threads. Mixed types (X float and Y float16, and back) are the same
// arithmetic too; what BlockedConv does not take is refused with the input named.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/blocked_test_util.h"
#include "ops/framework/every_target.h"
#include "ops/framework/shape.h"
#include "ops/framework/testing.h"
#include "ops/math/conv_geometry.h"

namespace onnxflow {
namespace {

using blocked_test::BlockedHalfInput;
using blocked_test::HalfInput;
using blocked_test::Narrowed;
using blocked_test::Random;
using blocked_test::RunOne;
using blocked_test::SameBits;

constexpr int64_t kFloat16 = static_cast<int64_t>(DataType::kFloat16);

struct HalfConvCase {
  Shape x, w;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group = 1;
  bool residual = false;
  std::string activation;
  int threads = 1;
  bool half_weights = false;  // W in float16, as a float16 model's (Winograd transforms it per task)
};

struct ConvInputs {
  HalfInput x, z;
  Tensor w, b;
  Shape y_nchw;
};

ConvInputs MakeInputs(const HalfConvCase& cs) {
  ConvAttributes attrs;
  attrs.strides = cs.strides;
  attrs.pads = cs.pads;
  attrs.dilations = cs.dilations;
  attrs.group = cs.group;
  ConvInputs in;
  in.y_nchw = ComputeConvGeometry(attrs, cs.x, cs.w).value().output_shape();
  in.x = BlockedHalfInput(cs.x, 31);
  in.z = BlockedHalfInput(in.y_nchw, 32);
  // Weights of a few significant bits: each product is exact in float, so the sums are what
  // differ between orders of adding, the thing this test holds fixed.
  std::vector<float> w = Random(ElementCount(cs.w), 33);
  for (float& v : w) v = static_cast<float>(static_cast<int>(v * 64)) / 64;
  in.w = cs.half_weights ? RoundToSixteenBits(w, DataType::kFloat16, cs.w).tensor : Tensor::FromVector<float>(cs.w, w);
  in.b = Tensor::FromVector<float>({cs.w[0]}, Random(cs.w[0], 34));
  return in;
}

// BlockedConv of the case on X (and Z), writing Y of `y_type`.
Result<Tensor> RunConv(const HalfConvCase& cs, const ConvInputs& in, const Tensor& x, const Tensor* z,
                       int64_t y_type) {
  OpTest test("BlockedConv", 1, "com.onnxflow");
  test.Input(x).Input(in.w).ConstantInput(1).Input(in.b).ConstantInput(2);
  if (z != nullptr) test.Input(*z);
  if (!cs.strides.empty()) test.Attr("strides", cs.strides);
  if (!cs.pads.empty()) test.Attr("pads", cs.pads);
  if (!cs.dilations.empty()) test.Attr("dilations", cs.dilations);
  if (cs.group != 1) test.Attr("group", cs.group);
  if (!cs.activation.empty()) test.Attr("activation", cs.activation);
  if (y_type != 1) test.Attr("output_type", y_type);
  test.Threads(cs.threads);
  return RunOne(test);
}

void ExpectHalfIsFloatNarrowed(const HalfConvCase& cs) {
  SCOPED_TRACE("X " + ShapeToString(cs.x) + " W " + ShapeToString(cs.w));
  const ConvInputs in = MakeInputs(cs);
  const Result<Tensor> y_float = RunConv(cs, in, in.x.widened, cs.residual ? &in.z.widened : nullptr, 1);
  const Result<Tensor> y_half = RunConv(cs, in, in.x.half, cs.residual ? &in.z.half : nullptr, kFloat16);
  ASSERT_TRUE(y_float.ok()) << y_float.status().ToString();
  ASSERT_TRUE(y_half.ok()) << y_half.status().ToString();
  ASSERT_EQ(y_half->dtype(), DataType::kFloat16);
  EXPECT_TRUE(SameBits(Narrowed(*y_float), *y_half));
  // The rounding is real: most sums are not float16 numbers.
  int64_t inexact = 0;
  for (int64_t i = 0; i < y_float->size(); ++i) {
    const float v = y_float->data<float>()[i];
    inexact += HalfToFloat(FloatToHalf(v)) != v;
  }
  EXPECT_GT(inexact, y_float->size() / 4);
  // One side float16, the other float: the same sums.
  const Result<Tensor> from_float = RunConv(cs, in, in.x.widened, cs.residual ? &in.z.half : nullptr, kFloat16);
  ASSERT_TRUE(from_float.ok()) << from_float.status().ToString();
  EXPECT_TRUE(SameBits(*y_half, *from_float));
  const Result<Tensor> to_float = RunConv(cs, in, in.x.half, cs.residual ? &in.z.widened : nullptr, 1);
  ASSERT_TRUE(to_float.ok()) << to_float.status().ToString();
  EXPECT_TRUE(SameBits(*y_float, *to_float));
}

class BlockedConvHalfTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(BlockedConvHalfTest);

TEST_P(BlockedConvHalfTest, DirectTilesRoundTheFloatSums) {
  ExpectHalfIsFloatNarrowed({{1, 32, 5, 7}, {40, 32, 1, 1}});                                  // pointwise, pad lanes
  ExpectHalfIsFloatNarrowed({{2, 48, 4, 3}, {32, 48, 1, 1}, {}, {}, {}, 1, true, "Relu"});      // residual
  ExpectHalfIsFloatNarrowed({{1, 32, 9, 8}, {80, 32, 3, 3}, {2, 2}, {1, 1, 1, 1}});             // strided, 2 groups
  ExpectHalfIsFloatNarrowed({{1, 16, 9, 9}, {16, 16, 3, 3}, {}, {2, 2, 2, 2}, {2, 2}, 1, true});  // dilated
  ExpectHalfIsFloatNarrowed({{1, 32, 7, 6}, {32, 4, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 8});       // grouped
  // 16 input blocks of 3x3 weights: two chunks, the second adding into the first's float sums.
  ExpectHalfIsFloatNarrowed({{1, 256, 6, 5}, {32, 256, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 1, true, "Relu"});
  // Many tasks over rows (two threads): each widens only the rows it reads.
  ExpectHalfIsFloatNarrowed({{1, 32, 40, 37}, {64, 32, 3, 3}, {2, 2}, {1, 0, 0, 1}, {}, 1, true, "", 2});
  ExpectHalfIsFloatNarrowed({{1, 32, 30, 33}, {32, 32, 1, 1}, {}, {}, {}, 1, false, "Sigmoid", 2});
}

TEST_P(BlockedConvHalfTest, WinogradRoundsTheFloatSums) {
  ExpectHalfIsFloatNarrowed({{1, 32, 9, 11}, {32, 32, 3, 3}, {}, {1, 1, 1, 1}});
  ExpectHalfIsFloatNarrowed({{1, 16, 12, 10}, {48, 16, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, true, "Relu"});
  ExpectHalfIsFloatNarrowed({{2, 32, 17, 14}, {64, 32, 3, 3}, {}, {0, 1, 1, 0}, {}, 1, true, "", 2});
  // Float16 weights and a V past a quarter of kMaxWholeImageV (484 tiles of 2 input blocks): the
  // image in parts, each part's V transformed from float16 X where it is used.
  ExpectHalfIsFloatNarrowed({{1, 32, 88, 88}, {32, 32, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, true, "Relu", 2, true});
}

// A Concat joined into two convolutions (graph/blocked_layout.cc): the second writes its blocks
// into the float16 tensor the first wrote, passed as INTO.
TEST_P(BlockedConvHalfTest, WritesItsBlocksIntoAHalfJoinedTensor) {
  const HalfConvCase cs{{1, 32, 5, 6}, {16, 32, 1, 1}};
  const ConvInputs in = MakeInputs(cs);
  const HalfInput into = BlockedHalfInput({1, 48, 5, 6}, 35);
  for (int64_t y_type : {int64_t{1}, kFloat16}) {
    OpTest test("BlockedConv", 1, "com.onnxflow");
    test.Input(y_type == 1 ? in.x.widened : in.x.half).Input(in.w).ConstantInput(1).Input(in.b).ConstantInput(2);
    test.AbsentInput().Input(y_type == 1 ? into.widened : into.half);
    test.Attr("out_blocks", int64_t{3}).Attr("out_block_offset", int64_t{1});
    if (y_type != 1) test.Attr("output_type", y_type);
    Result<Tensor> y = RunOne(test);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    ASSERT_EQ(y->shape(), (Shape{1, 3, 5, 6, 16}));
    if (y_type == 1) continue;
    OpTest float_test("BlockedConv", 1, "com.onnxflow");
    float_test.Input(in.x.widened).Input(in.w).ConstantInput(1).Input(in.b).ConstantInput(2);
    float_test.AbsentInput().Input(into.widened).Attr("out_blocks", int64_t{3}).Attr("out_block_offset", int64_t{1});
    Result<Tensor> y_float = RunOne(float_test);
    ASSERT_TRUE(y_float.ok()) << y_float.status().ToString();
    // Blocks 0 and 2 are INTO's float16 values, block 1 the rounded sums.
    EXPECT_TRUE(SameBits(Narrowed(*y_float), *y));
  }
}

TEST(BlockedConvHalfRefusalTest, RefusesWhatItDoesNotTake) {
  const HalfConvCase cs{{1, 32, 5, 6}, {16, 32, 3, 3}, {}, {1, 1, 1, 1}};
  const ConvInputs in = MakeInputs(cs);
  // Z of another type than Y.
  Result<Tensor> z_float = RunConv(cs, in, in.x.half, &in.z.widened, kFloat16);
  ASSERT_FALSE(z_float.ok());
  EXPECT_NE(z_float.status().ToString().find("residual 'Z' must be float16"), std::string::npos)
      << z_float.status().ToString();
  // output_type neither FLOAT nor FLOAT16.
  Result<Tensor> int_y = RunConv(cs, in, in.x.half, nullptr, static_cast<int64_t>(DataType::kInt32));
  ASSERT_FALSE(int_y.ok());
  EXPECT_NE(int_y.status().ToString().find("output_type must be FLOAT (1) or FLOAT16 (10)"), std::string::npos)
      << int_y.status().ToString();
  // A stem reads the plain image, in float only.
  const HalfConvCase stem{{1, 3, 8, 8}, {16, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}};
  const ConvInputs stem_in = MakeInputs(stem);
  OpTest test("BlockedConv", 1, "com.onnxflow");
  test.Input(RoundToSixteenBits(std::vector<float>(64 * 3, 0.5f), DataType::kFloat16, {1, 3, 8, 8}).tensor)
      .Input(stem_in.w).ConstantInput(1)
      .Attr("strides", stem.strides).Attr("pads", stem.pads);
  Result<Tensor> y = RunOne(test);
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().ToString().find("input 'X' of a stem must be float"), std::string::npos) << y.status().ToString();
}

}  // namespace
}  // namespace onnxflow
