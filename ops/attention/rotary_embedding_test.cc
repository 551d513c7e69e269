#include <vector>

#include <gtest/gtest.h>

#include "ops/attention/register.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

const std::vector<float> kCos = {0.5f, 0.0f}, kSin = {0.25f, 1.0f};

Result<std::vector<Value>> RunRope(const Tensor& x, const Tensor& cos, const Tensor& sin, int64_t interleaved,
                                   const Tensor* position_ids = nullptr, int64_t rotary_dim = 0, int64_t heads = 0) {
  OpTest test("RotaryEmbedding", 23);
  test.Input(x).Input(cos).Input(sin);
  if (position_ids != nullptr) test.Input(*position_ids);
  test.Attr("interleaved", interleaved);
  if (rotary_dim != 0) test.Attr("rotary_embedding_dim", rotary_dim);
  if (heads != 0) test.Attr("num_heads", heads);
  return test.Run(RegisterAttentionKernels);
}

TEST(RotaryEmbedding, HalvesHandComputed) {
  auto out = RunRope(F({1, 1, 1, 4}, {1, 2, 3, 4}), F({1, 1, 2}, kCos), F({1, 1, 2}, kSin), 0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // pairs (1, 3) and (2, 4)
  EXPECT_TRUE(TensorsNear(F({1, 1, 1, 4}, {0.5f * 1 - 0.25f * 3, 0 * 2 - 1 * 4, 0.25f * 1 + 0.5f * 3, 1 * 2 + 0 * 4}),
                          (*out)[0].tensor()));
}

TEST(RotaryEmbedding, InterleavedHandComputed) {
  auto out = RunRope(F({1, 1, 1, 4}, {1, 2, 3, 4}), F({1, 1, 2}, kCos), F({1, 1, 2}, kSin), 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // pairs (1, 2) and (3, 4)
  EXPECT_TRUE(TensorsNear(F({1, 1, 1, 4}, {0.5f * 1 - 0.25f * 2, 0.25f * 1 + 0.5f * 2, 0 * 3 - 1 * 4, 1 * 3 + 0 * 4}),
                          (*out)[0].tensor()));
}

TEST(RotaryEmbedding, PartialRotationWithPositionIds) {
  // Cache rows 0..2; the token at position 2 uses row 2 = (cos 0.5, sin 0.25). Only the first two
  // numbers of the head rotate.
  const Tensor cos = F({3, 1}, {9, 9, 0.5f}), sin = F({3, 1}, {9, 9, 0.25f});
  const Tensor pos = Tensor::FromVector<int64_t>({1, 1}, {2});
  auto out = RunRope(F({1, 1, 1, 4}, {1, 2, 3, 4}), cos, sin, 0, &pos, 2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 1, 1, 4}, {0.5f - 0.5f, 0.25f + 1.0f, 3, 4}), (*out)[0].tensor()));
}

TEST(RotaryEmbedding, ThreeDInputMatchesFourD) {
  // (B=1, S=2, H=2, D=2) packed as (1, 2, 4); the 4D form is (1, 2 heads, 2 seq, 2).
  const std::vector<float> packed = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> heads_first = {1, 2, 5, 6, 3, 4, 7, 8};
  const Tensor cos = F({1, 2, 1}, {0.5f, 0.0f}), sin = F({1, 2, 1}, {0.25f, 1.0f});
  auto a = RunRope(F({1, 2, 4}, packed), cos, sin, 0, nullptr, 0, 2);
  auto b = RunRope(F({1, 2, 2, 2}, heads_first), cos, sin, 0);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
  const float* pa = (*a)[0].tensor().data<float>();
  const float* pb = (*b)[0].tensor().data<float>();
  for (int s = 0; s < 2; ++s)
    for (int h = 0; h < 2; ++h)
      for (int e = 0; e < 2; ++e) EXPECT_FLOAT_EQ(pb[(h * 2 + s) * 2 + e], pa[(s * 2 + h) * 2 + e]);
}

TEST(RotaryEmbedding, Float16AndBFloat16) {
  auto half = [](std::vector<float> v) {
    std::vector<Float16> h;
    for (float f : v) h.push_back(Float16{FloatToHalf(f)});
    return h;
  };
  auto out = RunRope(Tensor::FromVector<Float16>({1, 1, 1, 4}, half({1, 2, 3, 4})),
                     Tensor::FromVector<Float16>({1, 1, 2}, half(kCos)), Tensor::FromVector<Float16>({1, 1, 2}, half(kSin)), 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<Float16>({1, 1, 1, 4}, half({0, 1.25f, -4, 3})), (*out)[0].tensor()));

  auto bf = [](std::vector<float> v) {
    std::vector<BFloat16> h;
    for (float f : v) h.push_back(BFloat16{FloatToBFloat16(f)});
    return h;
  };
  auto out_bf = RunRope(Tensor::FromVector<BFloat16>({1, 1, 1, 4}, bf({1, 2, 3, 4})),
                        Tensor::FromVector<BFloat16>({1, 1, 2}, bf(kCos)),
                        Tensor::FromVector<BFloat16>({1, 1, 2}, bf(kSin)), 1);
  ASSERT_TRUE(out_bf.ok()) << out_bf.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<BFloat16>({1, 1, 1, 4}, bf({0, 1.25f, -4, 3})), (*out_bf)[0].tensor()));
}

TEST(RotaryEmbedding, Errors) {
  const Tensor x = F({1, 1, 1, 4}, {1, 2, 3, 4});
  const Tensor cos = F({3, 2}, {1, 1, 1, 1, 1, 1}), sin = cos;
  const Tensor bad_pos = Tensor::FromVector<int64_t>({1, 1}, {3});
  EXPECT_EQ(StatusCode::kOutOfRange, RunRope(x, cos, sin, 0, &bad_pos).status().code());
  const Tensor neg_pos = Tensor::FromVector<int64_t>({1, 1}, {-1});
  EXPECT_EQ(StatusCode::kOutOfRange, RunRope(x, cos, sin, 0, &neg_pos).status().code());
  // cache width must be rotary_dim / 2
  EXPECT_EQ(StatusCode::kInvalidArgument,
            RunRope(x, F({1, 1, 1}, {1}), F({1, 1, 1}, {1}), 0).status().code());
  // 3D input needs num_heads
  EXPECT_EQ(StatusCode::kInvalidArgument,
            RunRope(F({1, 1, 4}, {1, 2, 3, 4}), F({1, 1, 2}, kCos), F({1, 1, 2}, kSin), 0).status().code());
}

}  // namespace
}  // namespace onnxflow
