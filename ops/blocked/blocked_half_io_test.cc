// The blocked kernels on float16 activations (a float16 model's blocked values): BlockedMaxPool,
// BlockedAveragePool, the global pools, BlockedResize, BlockedBatchNormalization and BlockedShape
// take a float16 X and give Y in its type, FromBlocked widens it to a float Y. They compute in float, so each runs on a float16
// X and on the same values as float, on every compiled Highway target, and the float16 Y must be
// FloatToHalf of the float Y, bit for bit (FromBlocked's float Y: the float run's, bit for bit).
// Inputs have pad lanes (channels not a multiple of 16), negatives, and for the pools +inf and
// +-60000 (near float16's largest, 65504); what the kernels do not take is refused by name.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
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
using blocked_test::ToBlockedRef;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Y of com.onnxflow `op` on X, with `set_up` adding its attributes and other inputs.
Result<Tensor> RunOn(const std::string& op, const Tensor& x, const std::function<void(OpTest&)>& set_up,
                     int threads = 1) {
  OpTest test(op, 1, "com.onnxflow");
  test.Input(x);
  set_up(test);
  test.Threads(threads);
  return RunOne(test);
}

// `op` on the float16 X gives FloatToHalf of what it gives on the float X; returns the float Y.
Tensor ExpectHalfIsFloatNarrowed(const std::string& op, const HalfInput& x, const std::function<void(OpTest&)>& set_up,
                                 int threads = 1) {
  Result<Tensor> from_float = RunOn(op, x.widened, set_up, threads);
  Result<Tensor> from_half = RunOn(op, x.half, set_up, threads);
  EXPECT_TRUE(from_float.ok()) << from_float.status().ToString();
  EXPECT_TRUE(from_half.ok()) << from_half.status().ToString();
  if (!from_float.ok() || !from_half.ok()) return Tensor();
  EXPECT_EQ(from_float->dtype(), DataType::kFloat);
  EXPECT_TRUE(SameBits(Narrowed(*from_float), *from_half));
  return *from_float;
}

// How many values of float `y` are `value`, and how many float16 cannot hold (the narrowing has
// to round them: a kernel computing or rounding in some other way than float, then FloatToHalf,
// would differ on them).
int64_t CountOf(const Tensor& y, float value) {
  int64_t n = 0;
  for (int64_t i = 0; i < y.size(); ++i) n += y.data<float>()[i] == value;
  return n;
}
int64_t CountInexact(const Tensor& y) {
  int64_t n = 0;
  for (int64_t i = 0; i < y.size(); ++i) n += HalfToFloat(FloatToHalf(y.data<float>()[i])) != y.data<float>()[i];
  return n;
}

struct PoolCase {
  std::string op;  // MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool
  Shape x;
  std::vector<int64_t> kernel, strides, pads;
  int64_t ceil_mode = 0, count_include_pad = 0;
  std::vector<int64_t> dilations;
  int threads = 1;
};

// The float Y of the pool, after checking the float16 one against it. X holds +inf, 60000 and
// -60000 in its first channel block, in rows 0 and 1 (a dilated window may skip either), and
// negatives.
Tensor RunPoolCase(const PoolCase& cs) {
  const int64_t pixels = cs.x[2] * cs.x[3], w = cs.x[3];
  const HalfInput x = BlockedHalfInput(cs.x, 21, {{3, kInf}, {w + 4, kInf}, {pixels + 5, 60000.0f},
                                                  {pixels + w + 6, 60000.0f}, {2 * pixels + 1, -60000.0f}});
  return ExpectHalfIsFloatNarrowed("Blocked" + cs.op, x, [&](OpTest& t) {
    if (cs.kernel.empty()) return;  // a global pool
    t.Attr("kernel_shape", cs.kernel);
    if (!cs.strides.empty()) t.Attr("strides", cs.strides);
    if (!cs.pads.empty()) t.Attr("pads", cs.pads);
    if (!cs.dilations.empty()) t.Attr("dilations", cs.dilations);
    t.Attr("ceil_mode", cs.ceil_mode);
    if (cs.op == "AveragePool") t.Attr("count_include_pad", cs.count_include_pad);
  }, cs.threads);
}

class BlockedHalfIoTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(BlockedHalfIoTest);

// Max of halves is one of them: exact. The special values reach Y (+inf, and 60000, which no
// window of the first block holds with anything larger).
TEST_P(BlockedHalfIoTest, MaxPoolsGiveTheFloatMaxima) {
  const std::vector<PoolCase> cases = {
      // 3x3 of stride 2 and 1 (one pass, columns carried over), pads, pad lanes.
      {"MaxPool", {1, 24, 13, 13}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
      {"MaxPool", {1, 16, 20, 23}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      // The two passes: 3x2 windows, unequal strides, asymmetric pads, ceil_mode, dilations, two
      // images on two cores.
      {"MaxPool", {2, 40, 11, 12}, {3, 2}, {1, 2}, {1, 0, 1, 1}, 1, 0, {}, 2},
      {"MaxPool", {1, 24, 11, 12}, {3, 2}, {2, 2}, {2, 1, 2, 1}, 1, 0, {2, 3}},
      {"GlobalMaxPool", {2, 24, 5, 7}},
  };
  for (const PoolCase& cs : cases) {
    SCOPED_TRACE(cs.op + " X " + ShapeToString(cs.x));
    const Tensor y = RunPoolCase(cs);
    ASSERT_TRUE(y.defined());
    EXPECT_GT(CountOf(y, kInf), 0);
    EXPECT_GT(CountOf(y, 60000.0f), 0);
    EXPECT_EQ(CountInexact(y), 0);  // the float maxima are float16 values
  }
}

// Means in float, rounded once: the float16 Y is the float Y rounded to nearest even, and most of
// the float means need that rounding.
TEST_P(BlockedHalfIoTest, AveragePoolsRoundTheFloatMeans) {
  const std::vector<PoolCase> cases = {
      {"AveragePool", {1, 24, 9, 9}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      // ceil_mode with pads counted, pad lanes, 3x3 of stride 2.
      {"AveragePool", {1, 40, 12, 17}, {3, 3}, {2, 2}, {0, 1, 1, 0}, 1, 1},
      // The two passes: dilated 2x3 windows, pads counted, two cores.
      {"AveragePool", {2, 16, 10, 9}, {2, 3}, {2, 1}, {1, 1, 1, 1}, 0, 1, {2, 2}, 2},
      {"AveragePool", {1, 24, 7, 8}, {3, 2}, {2, 3}, {1, 0, 0, 1}, 1, 0},
      {"GlobalAveragePool", {2, 40, 7, 7}},
  };
  for (const PoolCase& cs : cases) {
    SCOPED_TRACE(cs.op + " X " + ShapeToString(cs.x));
    const Tensor y = RunPoolCase(cs);
    ASSERT_TRUE(y.defined());
    EXPECT_GT(CountOf(y, kInf), 0);  // the windows over +inf
    EXPECT_GT(CountInexact(y), y.size() / 4);
  }
}

struct ResizeCase {
  std::string mode, coordinate;
  Shape x;
  int threads = 1;
};

// BlockedResize by 2 (scales) and to `sizes`; nearest copies (exact), linear rounds the float
// result. BlockedShape only reads X's shape: the same for float16.
TEST_P(BlockedHalfIoTest, ResizeCopiesOrRoundsTheFloatResult) {
  const std::vector<ResizeCase> cases = {
      {"nearest", "half_pixel", {1, 24, 5, 6}},
      {"nearest", "asymmetric", {2, 40, 4, 3}, 2},
      {"linear", "align_corners", {1, 24, 5, 6}},
      {"linear", "half_pixel", {2, 40, 6, 5}, 2},
      {"linear", "asymmetric", {1, 16, 3, 4}},
  };
  for (const ResizeCase& cs : cases) {
    SCOPED_TRACE(cs.mode + " " + cs.coordinate + " X " + ShapeToString(cs.x));
    const HalfInput x = BlockedHalfInput(cs.x, 22, {{7, 60000.0f}, {cs.x[2] * cs.x[3] + 2, -60000.0f}});
    const auto attrs = [&](OpTest& t) {
      t.Attr("mode", cs.mode).Attr("coordinate_transformation_mode", cs.coordinate).Attr("channels", cs.x[1]);
    };
    const Tensor by_two = ExpectHalfIsFloatNarrowed("BlockedResize", x, [&](OpTest& t) {
      t.Input(Tensor::FromVector<float>({4}, {1, 1, 2, 2}));
      attrs(t);
    }, cs.threads);
    ASSERT_TRUE(by_two.defined());
    EXPECT_EQ(by_two.shape(), BlockedShape({cs.x[0], cs.x[1], 2 * cs.x[2], 2 * cs.x[3]}));
    if (cs.mode == "nearest") {
      EXPECT_EQ(CountInexact(by_two), 0);  // copies of float16 values
    } else {
      EXPECT_GT(CountInexact(by_two), by_two.size() / 4);
    }
    // Sizes not a multiple of the input's: another scale per axis.
    ExpectHalfIsFloatNarrowed("BlockedResize", x, [&](OpTest& t) {
      t.AbsentInput().Input(Tensor::FromVector<int64_t>({4}, {cs.x[0], cs.x[1], 2 * cs.x[2] + 1, 3 * cs.x[3] - 1}));
      attrs(t);
    }, cs.threads);
  }
  const HalfInput x = BlockedHalfInput({1, 21, 5, 6}, 23);
  for (const Tensor* in : {&x.half, &x.widened}) {
    Result<Tensor> dims = RunOn("BlockedShape", *in, [](OpTest& t) { t.Attr("channels", int64_t{21}); });
    ASSERT_TRUE(dims.ok()) << dims.status().ToString();
    EXPECT_TRUE(SameBits(Tensor::FromVector<int64_t>({4}, {1, 21, 5, 6}), *dims));
  }
}

// BlockedBatchNormalization's affine map (with a PRelu's slopes, input 5, which stay float, and
// the fused activation) in float on the widened X, rounded once; pad lanes, two cores. 60000 times
// a scale past 1.1 overflows float16: infinity, as FloatToHalf of the float result.
TEST_P(BlockedHalfIoTest, BatchNormRoundsTheFloatMap) {
  struct NormCase {
    Shape x;
    bool slope;
    std::string activation;
    int threads;
  };
  for (const NormCase& cs : std::vector<NormCase>{{{2, 40, 5, 7}, false, "LeakyRelu", 1},
                                                  {{1, 32, 24, 24}, true, "Relu", 2},
                                                  {{1, 24, 3, 5}, true, "", 1}}) {
    SCOPED_TRACE("X " + ShapeToString(cs.x));
    const int64_t c = cs.x[1];
    const HalfInput x = BlockedHalfInput(cs.x, 25, {{3, kInf}, {4, 60000.0f}, {cs.x[2] * cs.x[3] + 1, -60000.0f}});
    std::vector<float> var = Random(c, 29);
    for (float& v : var) v = std::fabs(v) + 0.1f;
    const Tensor y = ExpectHalfIsFloatNarrowed("BlockedBatchNormalization", x, [&](OpTest& t) {
      for (int i = 1; i < 4; ++i) t.Input(Tensor::FromVector<float>({c}, Random(c, 25 + i))).ConstantInput(i);
      t.Input(Tensor::FromVector<float>({c}, var)).ConstantInput(4);
      if (cs.slope) t.Input(Tensor::FromVector<float>({c}, Random(c, 30))).ConstantInput(5);
      t.Attr("epsilon", 1e-3f);
      if (!cs.activation.empty()) t.Attr("activation", cs.activation);
      if (cs.activation == "LeakyRelu") t.Attr("activation_alpha", 0.25f);
    }, cs.threads);
    ASSERT_TRUE(y.defined());
    EXPECT_GT(CountInexact(y), y.size() / 4);
  }
}

// FromBlocked widens float16 to its float Y, exactly: the float run's bits (a -0 stays -0, +inf
// +inf), with and without the pad lanes dropped; whole 16 x 16 tiles, partial ones, and more
// than one run of pixels.
TEST_P(BlockedHalfIoTest, FromBlockedWidensExactly) {
  for (const Shape& shape : {Shape{1, 16, 1, 1}, Shape{2, 21, 37, 41}, Shape{1, 48, 17, 3}, Shape{2, 32, 16, 16},
                             Shape{1, 40, 9, 2}}) {
    SCOPED_TRACE("X " + ShapeToString(shape));
    const HalfInput x = BlockedHalfInput(shape, 24, {{0, -0.0f}, {1, kInf}, {2, 60000.0f}});
    for (int64_t channels : {shape[1], int64_t{0}}) {
      const auto set_up = [&](OpTest& t) {
        if (channels > 0) t.Attr("channels", channels);
      };
      Result<Tensor> from_float = RunOn("FromBlocked", x.widened, set_up, 2);
      Result<Tensor> from_half = RunOn("FromBlocked", x.half, set_up, 2);
      ASSERT_TRUE(from_float.ok()) << from_float.status().ToString();
      ASSERT_TRUE(from_half.ok()) << from_half.status().ToString();
      EXPECT_TRUE(SameBits(*from_float, *from_half));
      EXPECT_EQ(from_half->dim(1), channels > 0 ? channels : x.half.dim(1) * kChannelBlock);
      EXPECT_TRUE(std::signbit(from_half->data<float>()[0]) && from_half->data<float>()[0] == 0.0f);
      EXPECT_EQ(from_half->data<float>()[1], kInf);
      // output_type FLOAT16: the same planes in float16 (a float16 model's plain values), from
      // either type of X, runs of 1024 pixels narrowed one plane at a time.
      const auto to_half = [&](OpTest& t) {
        set_up(t);
        t.Attr("output_type", int64_t{10});
      };
      for (const Tensor* in : {&x.half, &x.widened}) {
        Result<Tensor> narrowed = RunOn("FromBlocked", *in, to_half, 2);
        ASSERT_TRUE(narrowed.ok()) << narrowed.status().ToString();
        EXPECT_TRUE(SameBits(Narrowed(*from_float), *narrowed));
      }
    }
  }
}

// X of a type none of them takes is refused by name (not read as floats); ToBlocked still takes
// float only.
TEST(BlockedHalfIoRefusalTest, RefusesOtherTypes) {
  const Tensor ints(DataType::kInt32, {1, 1, 4, 4, 16});
  for (const std::string op : {"BlockedMaxPool", "BlockedAveragePool"}) {
    EXPECT_TRUE(Refused(RunOn(op, ints, [](OpTest& t) { t.Attr("kernel_shape", std::vector<int64_t>{2, 2}); }),
                        StatusCode::kInvalidArgument, op + ": input 'X' must be float or float16, got int32"));
  }
  for (const std::string op : {"BlockedGlobalMaxPool", "BlockedGlobalAveragePool", "FromBlocked"}) {
    EXPECT_TRUE(Refused(RunOn(op, ints, [](OpTest&) {}), StatusCode::kInvalidArgument,
                        op + ": input 'X' must be float or float16, got int32"));
  }
  EXPECT_TRUE(Refused(RunOn("BlockedResize", ints,
                            [](OpTest& t) {
                              t.Input(Tensor::FromVector<float>({4}, {1, 1, 2, 2})).Attr("channels", int64_t{16});
                            }),
                      StatusCode::kInvalidArgument, "BlockedResize: input 'X' must be float or float16, got int32"));
  EXPECT_TRUE(Refused(RunOn("BlockedBatchNormalization", ints,
                            [](OpTest& t) {
                              for (int i = 1; i < 5; ++i) t.Input(Tensor(DataType::kFloat, {16})).ConstantInput(i);
                            }),
                      StatusCode::kInvalidArgument,
                      "BlockedBatchNormalization: input 'X' must be float or float16, got int32"));
  EXPECT_TRUE(Refused(RunOn("ToBlocked", Tensor(DataType::kFloat16, {1, 16, 2, 2}), [](OpTest&) {}),
                      StatusCode::kInvalidArgument, "ToBlocked: input 'X' must be float"));
  // FromBlocked writes float or float16; ToBlocked float only.
  EXPECT_TRUE(Refused(RunOn("FromBlocked", Tensor(DataType::kFloat, {1, 1, 2, 2, 16}),
                            [](OpTest& t) { t.Attr("output_type", int64_t{11}); }),
                      StatusCode::kInvalidArgument, "FromBlocked: output_type must be FLOAT (1) or FLOAT16 (10), got 11"));
  EXPECT_TRUE(Refused(RunOn("ToBlocked", Tensor(DataType::kFloat, {1, 16, 2, 2}),
                            [](OpTest& t) { t.Attr("output_type", int64_t{10}); }),
                      StatusCode::kInvalidArgument, "ToBlocked: output_type must be FLOAT (1), got 10"));
}

}  // namespace
}  // namespace onnxflow
