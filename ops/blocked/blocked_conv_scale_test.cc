// BlockedConv's X_SCALE (a squeeze-and-excitation gate, graph/channel_scale_fusion.h): the output
// is the convolution of X times its channels' factors. On a small map of many channels the kernel
// multiplies X as it reads it (the same float products a Mul before it makes: bit for bit); on a
// large map of few channels it scales the weights per image instead (other roundings: within a few
// ulps). Float and float16 X, float and float16 factors, one and two cores, a residual, two images;
// and the shapes it refuses.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/blocked_test_util.h"
#include "ops/framework/every_target.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using blocked_test::BlockedHalfInput;
using blocked_test::Random;
using blocked_test::RunOne;
using blocked_test::SameBits;
using blocked_test::ToBlockedRef;

struct ScaleCase {
  int64_t n, c, m, h, w;
  int threads = 1;
  bool residual = false;
};

// BlockedConv 1 x 1 of the case on blocked X, with X_SCALE `scale` when given.
Result<Tensor> RunScaled(const ScaleCase& s, const Tensor& x, const Tensor* scale) {
  OpTest test("BlockedConv", 1, "com.onnxflow");
  test.Input(x)
      .Input(Tensor::FromVector<float>({s.m, s.c, 1, 1}, Random(s.m * s.c, 2)))
      .ConstantInput(1)
      .Input(Tensor::FromVector<float>({s.m}, Random(s.m, 3)))
      .ConstantInput(2);
  if (s.residual) {
    test.Input(ToBlockedRef(Tensor::FromVector<float>({s.n, s.m, s.h, s.w}, Random(s.n * s.m * s.h * s.w, 4))));
  } else {
    test.AbsentInput();
  }
  if (scale != nullptr) test.AbsentInput().Input(*scale);
  test.Attr("activation", std::string("Relu"));
  test.Threads(s.threads);
  return RunOne(test);
}

// Factors [n, blocks, 1, 1, 16] in (0, 1), the pad lanes 7 (they meet zero weights).
std::vector<float> Factors(const ScaleCase& s) {
  const int64_t blocks = (s.c + kChannelBlock - 1) / kChannelBlock;
  std::vector<float> f = Random(s.n * blocks * kChannelBlock, 5, 0.5f);
  for (int64_t i = 0; i < static_cast<int64_t>(f.size()); ++i) {
    if ((i % (blocks * kChannelBlock)) >= s.c) f[static_cast<size_t>(i)] = 7.0f;
    f[static_cast<size_t>(i)] *= 0.5f;
  }
  return f;
}

// Blocked X times the factors, as a Mul of X by the gate computes it in float.
Tensor ScaledX(const ScaleCase& s, const Tensor& x_float, const std::vector<float>& f) {
  const int64_t pixels = s.h * s.w;
  std::vector<float> v(x_float.data<float>(), x_float.data<float>() + x_float.size());
  for (int64_t i = 0; i < x_float.size(); ++i) {
    const int64_t lane = i % kChannelBlock, block = i / (pixels * kChannelBlock);  // over (n, block)
    v[static_cast<size_t>(i)] *= f[static_cast<size_t>(block * kChannelBlock + lane)];
  }
  return Tensor::FromVector<float>(x_float.shape(), v);
}

void ExpectScaled(const ScaleCase& s, bool exact) {
  SCOPED_TRACE("N " + std::to_string(s.n) + " C " + std::to_string(s.c) + " M " + std::to_string(s.m) + " " +
               std::to_string(s.h) + "x" + std::to_string(s.w) + " threads " + std::to_string(s.threads));
  const Shape nchw = {s.n, s.c, s.h, s.w};
  const blocked_test::HalfInput x = BlockedHalfInput(nchw, 1);
  const std::vector<float> f = Factors(s);
  const int64_t blocks = (s.c + kChannelBlock - 1) / kChannelBlock;
  const Shape scale_shape = {s.n, blocks, 1, 1, kChannelBlock};
  const Result<Tensor> want = RunScaled(s, ScaledX(s, x.widened, f), nullptr);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const SixteenBitValues f16 = RoundToSixteenBits(f, DataType::kFloat16, scale_shape);
  const Tensor f32 = Tensor::FromVector<float>(scale_shape, f);
  const Result<Tensor> want_f16 = RunScaled(s, ScaledX(s, x.widened, f16.widened), nullptr);
  ASSERT_TRUE(want_f16.ok()) << want_f16.status().ToString();
  for (const Tensor* xs : {&x.widened, &x.half}) {
    for (const Tensor* scale : {&f32, &f16.tensor}) {
      SCOPED_TRACE(std::string("X ") + DataTypeName(xs->dtype()) + ", X_SCALE " + DataTypeName(scale->dtype()));
      const Result<Tensor> got = RunScaled(s, *xs, scale);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      const Tensor& expected = scale == &f32 ? *want : *want_f16;
      if (exact) {
        EXPECT_TRUE(SameBits(expected, *got));
      } else {
        EXPECT_TRUE(TensorsNear(expected, *got, 1e-5, 1e-5));
      }
    }
  }
}

class BlockedConvScaleTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(BlockedConvScaleTest);

// 9 pixels of 256 channels: X is scaled as it is read.
TEST_P(BlockedConvScaleTest, SmallMapScalesX) {
  ExpectScaled({1, 256, 128, 3, 3}, true);
  ExpectScaled({2, 200, 80, 3, 4, 2, true}, true);
}

// 1600 pixels of 32 channels: the weights are scaled, per image.
TEST_P(BlockedConvScaleTest, LargeMapScalesWeights) {
  ExpectScaled({1, 32, 16, 40, 40}, false);
  ExpectScaled({2, 40, 24, 20, 30, 2, true}, false);
}

TEST(BlockedConvScaleRefusalTest, RefusesAScaleOfAnotherShape) {
  const ScaleCase s{1, 32, 16, 4, 4};
  const blocked_test::HalfInput x = BlockedHalfInput({1, 32, 4, 4}, 1);
  for (const Shape& shape : {Shape{1, 2, 4, 4, 16}, Shape{1, 1, 1, 1, 16}, Shape{2, 2, 1, 1, 16}}) {
    const Tensor scale(DataType::kFloat, shape);
    const Result<Tensor> y = RunScaled(s, x.widened, &scale);
    ASSERT_FALSE(y.ok());
    EXPECT_NE(y.status().ToString().find("input 'X_SCALE' must be float or float16 [1,2,1,1,16]"), std::string::npos)
        << y.status().ToString();
  }
  const Tensor ints(DataType::kInt32, {1, 2, 1, 1, 16});
  const Result<Tensor> y = RunScaled(s, x.widened, &ints);
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().ToString().find("X_SCALE"), std::string::npos) << y.status().ToString();
}

}  // namespace
}  // namespace onnxflow
