// MatMulNBits against dequantize-then-multiply in double, over the paths: one row (the float
// kernel), several rows (the GEMM over dequantized panels), accuracy_level 4 (the int8 kernel on
// AVX-512 VNNI, any row count), block sizes 16 to 256, K not a multiple of the block, packed and
// float zero points, none (8), bias, 2 threads.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/every_target.h"
#include "ops/framework/testing.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace {

// Every path is SIMD (matmul_nbits-inl.h): the float row kernel, the GEMM panels' decoding, the
// int8 kernel (the AVX-512 target on a CPU with VNNI; float elsewhere).
class MatMulNBitsSimd : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(MatMulNBitsSimd);

enum class Zp { kNone, kPacked, kFloat };

void Check(int64_t m, int64_t k, int64_t n, int64_t block, Zp zp, bool bias, int threads, int64_t accuracy = 0) {
  std::mt19937 rng(static_cast<uint32_t>(m * 131 + k * 7 + n + block));
  std::uniform_real_distribution<float> uni(-1, 1);
  const int64_t blocks = (k + block - 1) / block, blob = block / 2;
  std::vector<uint8_t> qv(n * blocks * block, 0);  // 4-bit values, zero past k
  std::vector<uint8_t> b(n * blocks * blob, 0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t e = 0; e < k; ++e) {
      const uint8_t q = rng() & 15;
      qv[j * blocks * block + e] = q;
      b[j * blocks * blob + e / 2] |= (e & 1) ? q << 4 : q;
    }
  std::vector<float> scales(n * blocks), zf(n * blocks, 8.f), a(m * k), bias_v(n);
  for (auto& s : scales) s = 0.01f + 0.05f * std::abs(uni(rng));
  for (auto& x : a) x = uni(rng);
  for (auto& x : bias_v) x = uni(rng);
  const int64_t zp_bytes = (blocks + 1) / 2;
  std::vector<uint8_t> zpacked(n * zp_bytes, 0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const uint8_t z = rng() & 15;
      if (zp == Zp::kPacked) {
        zf[j * blocks + blk] = z;
        zpacked[j * zp_bytes + blk / 2] |= (blk & 1) ? z << 4 : z;
      } else if (zp == Zp::kFloat) {
        zf[j * blocks + blk] = static_cast<float>(z) + 0.25f;
      }
    }
  OpTest test("MatMulNBits", 1, "com.microsoft");
  test.Attr("K", k).Attr("N", n).Attr("bits", int64_t{4}).Attr("block_size", block);
  test.Input(Tensor::FromVector<float>({m, k}, a))
      .Input(Tensor::FromVector<uint8_t>({n, blocks, blob}, b))
      .Input(Tensor::FromVector<float>({n * blocks}, scales));
  if (zp == Zp::kPacked) test.Input(Tensor::FromVector<uint8_t>({n * zp_bytes}, zpacked));
  else if (zp == Zp::kFloat) test.Input(Tensor::FromVector<float>({n * blocks}, zf));
  else if (bias) test.AbsentInput();
  if (bias) test.AbsentInput().Input(Tensor::FromVector<float>({n}, bias_v));
  test.ConstantInput(1).ConstantInput(2);
  if (zp != Zp::kNone) test.ConstantInput(3);
  test.Threads(threads);
  auto out = test.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{m, n}));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias ? bias_v[j] : 0.0, mag = 0, wsum = 0;
      for (int64_t e = 0; e < k; ++e) {
        const int64_t blk = e / block;
        const double w = (double(qv[j * blocks * block + e]) - zf[j * blocks + blk]) * scales[j * blocks + blk];
        s += a[i * k + e] * w;
        mag += std::abs(a[i * k + e] * w);
        wsum += std::abs(w);
      }
      // accuracy_level 4 may round A to int8 per block: at most half a step (max|a| / 254) each.
      const double tol = accuracy == 4 ? wsum / 254 + 1e-5 : 1e-5 * mag + 1e-6;
      ASSERT_NEAR(y.data<float>()[i * n + j], s, tol)
          << "m " << m << " k " << k << " n " << n << " block " << block << " at " << i << "," << j;
    }
}

TEST_P(MatMulNBitsSimd, AllBlockSizes) {
  for (int64_t block : {16, 32, 64, 128}) Check(1, 256, 37, block, Zp::kNone, false, 1);
  Check(1, 200, 9, 32, Zp::kPacked, true, 1);   // K not a multiple of the block
  Check(1, 48, 5, 16, Zp::kFloat, false, 1);    // an odd number of 16-blocks
  Check(1, 1024, 300, 64, Zp::kPacked, true, 2);
}

TEST_P(MatMulNBitsSimd, AccuracyLevel4QuantizesAToInt8) {
  // The VNNI kernel where the CPU has it (else the float one): quads of groups, a group count not a multiple of 4,
  // blocks of 32, 64 and 128, all zero-point kinds.
  Check(1, 4096 / 8, 64, 32, Zp::kPacked, true, 1, 4);
  Check(1, 96, 7, 32, Zp::kNone, false, 1, 4);
  Check(1, 200, 13, 64, Zp::kFloat, false, 2, 4);
  Check(2, 384, 33, 128, Zp::kPacked, false, 1, 4);
  // Every row count runs the int8 kernel (rows in pairs and one alone), over panels of 64 columns
  // and a last one of 1 to 3 vectors; block 16; one zero point for all of B (none given: 8).
  Check(7, 300, 70, 32, Zp::kPacked, true, 1, 4);
  Check(5, 512, 200, 16, Zp::kNone, true, 2, 4);
  Check(4, 256, 130, 64, Zp::kFloat, true, 2, 4);
  Check(3, 2048, 48, 256, Zp::kPacked, false, 1, 4);
}

TEST_P(MatMulNBitsSimd, SeveralRowsThroughTheGemm) {
  Check(2, 96, 13, 32, Zp::kPacked, false, 1);  // below the GEMM threshold: row kernel per row
  Check(7, 300, 70, 32, Zp::kPacked, true, 1);  // the GEMM's K blocks of 150 start inside a group
  Check(33, 128, 65, 16, Zp::kFloat, false, 2);
  Check(5, 512, 40, 128, Zp::kNone, true, 2);
}

TEST(MatMulNBits, RefusesWhatItDoesNotRun) {
  OpTest bits("MatMulNBits", 1, "com.microsoft");
  bits.Attr("K", int64_t{32}).Attr("N", int64_t{1}).Attr("bits", int64_t{3}).Attr("block_size", int64_t{32});
  bits.Input(Tensor::FromVector<float>({1, 32}, std::vector<float>(32)))
      .Input(Tensor::FromVector<uint8_t>({1, 1, 16}, std::vector<uint8_t>(16)))
      .Input(Tensor::FromVector<float>({1}, {1.f}));
  auto r = bits.Run(RegisterQuantMsKernels);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("bits = 3 (only 4)"), std::string::npos) << r.status().ToString();

  OpTest shape("MatMulNBits", 1, "com.microsoft");
  shape.Attr("K", int64_t{32}).Attr("N", int64_t{2}).Attr("block_size", int64_t{32});
  shape.Input(Tensor::FromVector<float>({1, 32}, std::vector<float>(32)))
      .Input(Tensor::FromVector<uint8_t>({1, 1, 16}, std::vector<uint8_t>(16)))
      .Input(Tensor::FromVector<float>({2}, {1.f, 1.f}));
  r = shape.Run(RegisterQuantMsKernels);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("input 'B' must be uint8 with N * ceil(K / block_size) * block_size / 2 = 32"),
            std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace onnxflow
