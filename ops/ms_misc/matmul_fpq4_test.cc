// MatMulFpQ4: hand-built MLAS blobs of both block types (scale, zero point and nibble order seen in
// the result), a constant blob (dequantized and packed at load) against the same blob at run, and
// the refusals.
#include <gtest/gtest.h>

#include <cstring>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

// One block of 32 values q[0..31] (value l in byte l's low nibble, l + 16 in its high nibble).
void AppendBlock(std::vector<uint8_t>* blob, float scale, int zero_point, const std::vector<int>& q) {
  uint8_t s[4];
  std::memcpy(s, &scale, 4);
  blob->insert(blob->end(), s, s + 4);
  if (zero_point >= 0) blob->push_back(static_cast<uint8_t>(zero_point));
  for (int l = 0; l < 16; ++l) blob->push_back(static_cast<uint8_t>(q[l] | (q[l + 16] << 4)));
}

OpTest FpQ4(Tensor a, std::vector<uint8_t> blob, int64_t k, int64_t n, int64_t type) {
  OpTest t("MatMulFpQ4", 1, kMsDomain);
  const int64_t bytes = static_cast<int64_t>(blob.size());
  t.Input(std::move(a))
      .Input(Tensor::FromVector<uint8_t>({bytes}, blob))
      .Input(Tensor::FromVector<int64_t>({2}, {k, n}));
  t.Attr("blk_quant_type", type);
  return t;
}

TEST(MatMulFpQ4, ZeroPointBlocksHandComputed) {
  // B [3, 2] (K = 3, one short block per column). Column 0: scale 0.5, zero point 3, q = 4, 5, 0 ->
  // 0.5, 1, -1.5. Column 1: scale 2, zero point 8, q = 8, 9, 15 -> 0, 2, 14.
  std::vector<uint8_t> blob;
  std::vector<int> q0(32, 0), q1(32, 0);
  q0[0] = 4, q0[1] = 5, q0[2] = 0;
  q1[0] = 8, q1[1] = 9, q1[2] = 15;
  AppendBlock(&blob, 0.5f, 3, q0);
  AppendBlock(&blob, 2.0f, 8, q1);
  // A = [[1, 2, 3]]: (0.5 + 2 - 4.5, 0 + 4 + 42) = (-2, 46).
  auto out = FpQ4(Tensor::FromVector<float>({1, 3}, {1, 2, 3}), blob, 3, 2, 1).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 2}, {-2, 46}), (*out)[0].tensor()));
}

TEST(MatMulFpQ4, SymmetricBlocksReadTheHighNibbleAsValuePlusSixteen) {
  // K = 33: two blocks in one column. Block 0: scale 1, q[16] = 9 (high nibble of byte 0) -> +1,
  // every other q = 8 -> 0. Block 1: scale -0.5, q[0] = 0 -> (0 - 8) * -0.5 = 4.
  std::vector<uint8_t> blob;
  std::vector<int> q(32, 8), r(32, 8);
  q[16] = 9;
  r[0] = 0;
  AppendBlock(&blob, 1.0f, -1, q);
  AppendBlock(&blob, -0.5f, -1, r);
  std::vector<float> a(33, 0.0f);
  a[16] = 3, a[32] = 0.25f, a[5] = 100;  // a[5] meets a 0 weight
  auto out = FpQ4(Tensor::FromVector<float>({33}, a), blob, 33, 1, 0).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1}, {3 * 1 + 0.25f * 4}), (*out)[0].tensor()));
}

TEST(MatMulFpQ4, ConstantBlobMatchesTheBlobAtRun) {
  std::vector<uint8_t> blob;
  for (int col = 0; col < 3; ++col) {
    for (int blk = 0; blk < 2; ++blk) {
      std::vector<int> q(32);
      for (int l = 0; l < 32; ++l) q[l] = (l * 5 + col * 3 + blk) % 16;
      AppendBlock(&blob, 0.125f * (col + 1), 7 + blk, q);
    }
  }
  std::vector<float> a(4 * 50);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.5f;
  const Tensor at = Tensor::FromVector<float>({2, 2, 50}, a);
  auto runtime = FpQ4(at, blob, 50, 3, 1).Run(RegisterMsMiscKernels);
  OpTest constant = FpQ4(at, blob, 50, 3, 1);
  constant.ConstantInput(1).ConstantInput(2);
  auto loaded = constant.Run(RegisterMsMiscKernels);
  ASSERT_TRUE(runtime.ok()) << runtime.status().ToString();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*runtime)[0].tensor().shape(), (Shape{2, 2, 3}));
  // Values are multiples of 1/16 well inside float's exact range: every order of sums is exact.
  EXPECT_TRUE(TensorsEqual((*runtime)[0].tensor(), (*loaded)[0].tensor()));
}

TEST(MatMulFpQ4, EmptyKGivesZeros) {
  auto out = FpQ4(Tensor::FromVector<float>({2, 0}, {}), {}, 0, 3, 1).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 3}, std::vector<float>(6, 0.0f)), (*out)[0].tensor()));
}

TEST(MatMulFpQ4, RefusesMalformedBlobsAndShapes) {
  std::vector<uint8_t> blob;
  AppendBlock(&blob, 1.0f, 8, std::vector<int>(32, 8));  // one Zp8 block: K <= 32, N = 1
  const Tensor a = Tensor::FromVector<float>({1, 4}, {1, 2, 3, 4});
  auto run = [](OpTest t) { return t.Run(RegisterMsMiscKernels); };
  EXPECT_TRUE(run(FpQ4(a, blob, 4, 1, 1)).ok());
  EXPECT_TRUE(Refused(run(FpQ4(a, blob, 4, 1, 0)), StatusCode::kInvalidArgument, "input 'B' holds 21 bytes"));
  EXPECT_TRUE(Refused(run(FpQ4(a, blob, 4, 2, 1)), StatusCode::kInvalidArgument, "input 'B' holds 21 bytes"));
  EXPECT_TRUE(Refused(run(FpQ4(a, blob, -4, 1, 1)), StatusCode::kInvalidArgument, "input 'B_shape'"));
  EXPECT_TRUE(Refused(run(FpQ4(a, blob, INT64_MAX, INT64_MAX, 1)), StatusCode::kInvalidArgument, "more than int64"));
  EXPECT_TRUE(Refused(run(FpQ4(Tensor::FromVector<float>({1, 5}, {1, 2, 3, 4, 5}), blob, 4, 1, 1)),
                      StatusCode::kInvalidArgument, "inner dimensions differ"));
  // K = 0 with an empty blob promises an output of 2^40 columns: the run's tensor limit refuses it.
  EXPECT_TRUE(Refused(run(FpQ4(Tensor::FromVector<float>({1, 0}, {}), {}, 0, int64_t{1} << 40, 1)),
                      StatusCode::kResourceExhausted, "max_tensor_bytes"));
  OpTest shape3("MatMulFpQ4", 1, kMsDomain);
  shape3.Input(a).Input(Tensor::FromVector<uint8_t>({21}, blob)).Input(Tensor::FromVector<int64_t>({3}, {4, 1, 1}));
  EXPECT_TRUE(Refused(run(shape3), StatusCode::kInvalidArgument, "input 'B_shape' must be int64 [2]"));
  OpTest a64("MatMulFpQ4", 1, kMsDomain);
  a64.Input(Tensor::FromVector<double>({1, 4}, {1, 2, 3, 4}))
      .Input(Tensor::FromVector<uint8_t>({21}, blob))
      .Input(Tensor::FromVector<int64_t>({2}, {4, 1}));
  EXPECT_TRUE(Refused(run(a64), StatusCode::kInvalidArgument, "input 'A' must be float"));
}

}  // namespace
}  // namespace onnxflow
