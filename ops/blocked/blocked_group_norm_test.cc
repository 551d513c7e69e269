// BlockedGroupNormalization against the plain GroupNormalization-21 and InstanceNormalization
// kernels (ops/nn/instance_group_norm.cc) on every compiled Highway target, at 1 and 2 threads:
// groups inside a block, groups across blocks, pad lanes, a plane longer than the float run
// (kFloatRun) around a large mean, the fused SiLU; and the refusals.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/blocked_test_util.h"
#include "ops/blocked/register.h"
#include "ops/framework/every_target.h"
#include "ops/framework/shape.h"
#include "ops/framework/testing.h"
#include "ops/nn/register.h"

namespace onnxflow {
namespace {

using blocked_test::Random;
using blocked_test::RunOne;
using blocked_test::ToBlockedRef;

class BlockedGroupNormTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(BlockedGroupNormTest);




// GroupNormalization of NCHW x in double, rounded to float.
Tensor DoubleReference(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t groups) {
  const int64_t images = x.dim(0), channels = x.dim(1), pixels = x.dim(2) * x.dim(3);
  const int64_t size = channels / groups * pixels;
  Tensor y(DataType::kFloat, x.shape());
  for (int64_t g = 0; g < images * groups; ++g) {
    const float* in = x.data<float>() + g * size;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < size; ++i) mean += in[i];
    mean /= static_cast<double>(size);
    for (int64_t i = 0; i < size; ++i) var += (in[i] - mean) * (in[i] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(size) + 1e-6);
    for (int64_t i = 0; i < size; ++i) {
      const int64_t c = (g % groups) * (channels / groups) + i / pixels;
      y.mutable_data<float>()[g * size + i] =
          static_cast<float>((in[i] - mean) * inv * scale.data<float>()[c] + bias.data<float>()[c]);
    }
  }
  return y;
}

struct Case {
  Shape x;
  int64_t groups;  // 0: InstanceNormalization
  int threads;
  bool silu = false;
  float offset = 0.0f;  // added to every x: a mean far from 0 tests the two-pass variance
};

void RunCase(const Case& cs) {
  SCOPED_TRACE(ShapeToString(cs.x) + " groups " + std::to_string(cs.groups) + " threads " + std::to_string(cs.threads));
  const int64_t c = cs.x[1];
  const Tensor x = Tensor::FromVector<float>(cs.x, Random(ElementCount(cs.x), 31, cs.offset));
  const Tensor scale = Tensor::FromVector<float>({c}, Random(c, 32, 1.0f));
  const Tensor bias = Tensor::FromVector<float>({c}, Random(c, 33));
  OpTest plain(cs.groups == 0 ? "InstanceNormalization" : "GroupNormalization", cs.groups == 0 ? 22 : 21);
  OpTest blocked("BlockedGroupNormalization", 1, "com.onnxflow");
  plain.Input(x);
  blocked.Input(ToBlockedRef(x));
  for (OpTest* t : {&plain, &blocked}) {
    t->Input(scale).ConstantInput(1).Input(bias).ConstantInput(2).Attr("epsilon", 1e-6f).Threads(cs.threads);
  }
  if (cs.groups != 0) plain.Attr("num_groups", cs.groups);
  blocked.Attr("num_groups", cs.groups == 0 ? c : cs.groups);
  if (cs.silu) blocked.Attr("activation", std::string("Swish"));
  Result<Tensor> expected = RunOne(plain);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  if (cs.silu) {
    for (int64_t i = 0; i < expected->size(); ++i) {
      float& v = expected->mutable_data<float>()[i];
      v = v / (1.0f + std::exp(-v));
    }
  }
  Result<Tensor> actual = RunOne(blocked);
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  if (cs.offset != 0.0f) {
    // Around 100 the plain kernel's float x * a + b (b near -170) is itself 1.5e-4 off on some
    // targets: against the normalization in double instead, within the rounding of that form
    // (2e-5); a mean off by 1e-4 of itself would be 2e-2 off.
    *expected = DoubleReference(x, scale, bias, cs.groups);
    EXPECT_TRUE(TensorsNear(ToBlockedRef(*expected), *actual, 1e-4, 1e-4));
    return;
  }
  // Pad lanes must come out 0: ToBlockedRef's are.
  EXPECT_TRUE(TensorsNear(ToBlockedRef(*expected), *actual, 1e-5, 1e-5));
}

TEST_P(BlockedGroupNormTest, MatchesPlainNormalizations) {
  for (int threads : {1, 2}) {
    RunCase({{2, 40, 5, 7}, 8, threads});        // groups of 5 across block borders, 8 pad lanes
    RunCase({{1, 64, 32, 32}, 32, threads});     // Stable Diffusion's 32 groups, two channels each
    RunCase({{1, 96, 9, 11}, 3, threads});       // a group of two whole blocks
    RunCase({{2, 20, 6, 6}, 0, threads});        // InstanceNormalization, 12 pad lanes
    RunCase({{1, 32, 40, 40}, 4, threads, true});  // with the fused SiLU
    RunCase({{1, 16, 48, 48}, 2, threads, false, 100.0f});  // 2304 pixels around 100
  }
}

TEST(BlockedGroupNormRefusalTest, RefusesWhatItCannotRun) {
  OpTest uneven("BlockedGroupNormalization", 1, "com.onnxflow");
  uneven.Input(Tensor(DataType::kFloat, {1, 2, 2, 2, 16})).Attr("num_groups", int64_t{5});
  uneven.Input(Tensor(DataType::kFloat, {32})).ConstantInput(1).Input(Tensor(DataType::kFloat, {32})).ConstantInput(2);
  EXPECT_TRUE(Refused(RunOne(uneven), StatusCode::kInvalidArgument,
                      "BlockedGroupNormalization: num_groups = 5 must be positive and divide the 32 channels"));
  OpTest wrong_blocks("BlockedGroupNormalization", 1, "com.onnxflow");  // 16 channels' parameters, 2 blocks
  wrong_blocks.Input(Tensor(DataType::kFloat, {1, 2, 2, 2, 16})).Attr("num_groups", int64_t{4});
  wrong_blocks.Input(Tensor(DataType::kFloat, {16})).ConstantInput(1).Input(Tensor(DataType::kFloat, {16})).ConstantInput(2);
  EXPECT_TRUE(Refused(RunOne(wrong_blocks), StatusCode::kInvalidArgument, "has 2 channel blocks, its scale needs 1"));
  OpTest per_group("BlockedGroupNormalization", 1, "com.onnxflow");  // B not per channel
  per_group.Input(Tensor(DataType::kFloat, {1, 1, 2, 2, 16})).Attr("num_groups", int64_t{4});
  per_group.Input(Tensor(DataType::kFloat, {16})).ConstantInput(1).Input(Tensor(DataType::kFloat, {4})).ConstantInput(2);
  EXPECT_TRUE(Refused(RunOne(per_group), StatusCode::kInvalidArgument,
                      "BlockedGroupNormalization: B must be a constant float vector of the channels' length"));
}

}  // namespace
}  // namespace onnxflow
