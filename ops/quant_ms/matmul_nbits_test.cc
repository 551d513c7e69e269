// MatMulNBits against dequantize-then-multiply in double, over the paths: one row (the float
// kernel), several rows (the GEMM over dequantized panels), accuracy_level 4 (the int8 kernel on
// AVX-512 VNNI and, for 4-bit weights, AVX2; any row count), block sizes 16 to 256, K not a multiple of the block, packed and
// float zero points, none (8), bias, 2 threads.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/every_target.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace {

// Every path is SIMD (matmul_nbits-inl.h): the float row kernel, the GEMM panels' decoding, the
// int8 kernel (the AVX-512 target on a CPU with VNNI; float elsewhere).
class MatMulNBitsSimd : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(MatMulNBitsSimd);

enum class Zp { kNone, kPacked, kFloat };

// values rounded to half precision in place when `half`, and the tensor of them (float16 then).
Tensor Floats(Shape shape, std::vector<float>& values, bool half) {
  if (!half) return Tensor::FromVector<float>(std::move(shape), values);
  std::vector<Float16> h;
  for (float& v : values) {
    h.push_back(Float16{FloatToHalf(v)});
    v = HalfToFloat(h.back().bits);
  }
  return Tensor::FromVector<Float16>(std::move(shape), h);
}

float Element(const Tensor& y, int64_t i) {
  return y.dtype() == DataType::kFloat16 ? HalfToFloat(y.data<Float16>()[i].bits) : y.data<float>()[i];
}

void Check(int64_t m, int64_t k, int64_t n, int64_t block, Zp zp, bool bias, int threads, int64_t accuracy = 0,
           bool half = false, int bits = 4) {
  std::mt19937 rng(static_cast<uint32_t>(m * 131 + k * 7 + n + block + bits));
  std::uniform_real_distribution<float> uni(-1, 1);
  const int per = 8 / bits, top = (1 << bits) - 1;
  const int64_t blocks = (k + block - 1) / block, blob = block / per;
  std::vector<uint8_t> qv(n * blocks * block, 0);  // the values, zero past k
  std::vector<uint8_t> b(n * blocks * blob, 0);    // per bytes, the lowest bits first
  for (int64_t j = 0; j < n; ++j)
    for (int64_t e = 0; e < k; ++e) {
      const uint8_t q = rng() & top;
      qv[j * blocks * block + e] = q;
      b[j * blocks * blob + e / per] |= q << ((e % per) * bits);
    }
  std::vector<float> scales(n * blocks), zf(n * blocks, static_cast<float>(1 << (bits - 1))), a(m * k), bias_v(n);
  for (auto& s : scales) s = 0.01f + 0.05f * std::abs(uni(rng));
  for (auto& x : a) x = uni(rng);
  for (auto& x : bias_v) x = uni(rng);
  const int64_t zp_bytes = (blocks + per - 1) / per;
  std::vector<uint8_t> zpacked(n * zp_bytes, 0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const uint8_t z = rng() & top;
      if (zp == Zp::kPacked) {
        zf[j * blocks + blk] = z;
        zpacked[j * zp_bytes + blk / per] |= z << ((blk % per) * bits);
      } else if (zp == Zp::kFloat) {
        zf[j * blocks + blk] = static_cast<float>(z) + 0.25f;
      }
    }
  OpTest test("MatMulNBits", 1, "com.microsoft");
  test.Attr("K", k).Attr("N", n).Attr("bits", int64_t{bits}).Attr("block_size", block).Attr("accuracy_level", accuracy);
  test.Input(Floats({m, k}, a, half))
      .Input(Tensor::FromVector<uint8_t>({n, blocks, blob}, b))
      .Input(Floats({n * blocks}, scales, half));
  if (zp == Zp::kPacked) test.Input(Tensor::FromVector<uint8_t>({n * zp_bytes}, zpacked));
  else if (zp == Zp::kFloat) test.Input(Floats({n * blocks}, zf, half));
  else if (bias) test.AbsentInput();
  if (bias) test.AbsentInput().Input(Floats({n}, bias_v, half));
  test.ConstantInput(1).ConstantInput(2);
  if (zp != Zp::kNone) test.ConstantInput(3);
  test.Threads(threads);
  auto out = test.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{m, n}));
  ASSERT_EQ(y.dtype(), half ? DataType::kFloat16 : DataType::kFloat);
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
      // A float16 Y is rounded once more: half a unit in its last place.
      const double tol = (accuracy == 4 ? wsum / 254 + 1e-5 : 1e-5 * mag + 1e-6) + (half ? std::abs(s) * 0x1p-11 : 0);
      ASSERT_NEAR(Element(y, i * n + j), s, tol)
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

// Up to 31 rows: four at a time, each slice of B decoded once for four rows; a partial last four
// (2, 3, 5, 7 rows), columns past the last whole four, K not a multiple of the block, every
// zero-point kind, 8 and 2 bits, float16, and column chunks split over two threads.
TEST_P(MatMulNBitsSimd, FewRowsFourAtATime) {
  Check(2, 96, 13, 32, Zp::kPacked, false, 1);
  Check(3, 256, 37, 16, Zp::kFloat, true, 2);
  Check(5, 512, 70, 64, Zp::kNone, true, 1);
  Check(8, 300, 21, 32, Zp::kPacked, false, 2);
  Check(7, 256, 37, 32, Zp::kNone, false, 1, 0, false, 8);
  Check(6, 256, 37, 16, Zp::kFloat, false, 2, 0, false, 2);
  Check(3, 96, 13, 16, Zp::kPacked, true, 1, 0, true);
}

// From 32 rows: the GEMM over dequantized panels.
TEST_P(MatMulNBitsSimd, ManyRowsThroughTheGemm) {
  Check(33, 300, 70, 32, Zp::kPacked, true, 1);  // the GEMM's K blocks of 150 start inside a group
  Check(33, 128, 65, 16, Zp::kFloat, false, 2);
  // Blocks of B in whole groups are dequantized straight into the strips (PanelStrips): K in
  // several GEMM blocks, a last vector of 6 live columns and a strip's zero padding after it;
  // 8 bits; 2 bits with blocks of 16 inside a group of 64 (the scale changes within a group).
  Check(40, 4096, 70, 64, Zp::kPacked, true, 2);
  Check(32, 256, 37, 32, Zp::kNone, false, 1, 0, false, 8);
  Check(32, 256, 37, 16, Zp::kFloat, false, 1, 0, false, 2);
}

// 8- and 2-bit weights: one and four values a byte. Blocks of 16 and 32 lie inside one 2-bit
// group of 64 values; K not a multiple of the block. accuracy_level 4 runs the int8 kernel for 8
// bits (two lines per step; every zero-point kind, rows in pairs and alone), float for 2.
TEST_P(MatMulNBitsSimd, EightAndTwoBits) {
  for (int bits : {8, 2}) {
    Check(1, 256, 37, 32, Zp::kPacked, true, 1, 0, false, bits);
    Check(1, 200, 9, 16, Zp::kNone, false, 2, 4, false, bits);
    Check(3, 256, 70, 32, Zp::kPacked, true, 1, 4, false, bits);
    Check(2, 128, 20, 64, Zp::kFloat, false, 2, 4, false, bits);
    Check(1, 512, 20, 128, Zp::kFloat, false, 1, 0, false, bits);
    Check(32, 300, 40, 64, Zp::kPacked, true, 2, 0, false, bits);  // the GEMM's panels, decoded by column
    Check(5, 96, 13, 16, Zp::kNone, false, 1, 4, true, bits);      // float16
  }
}

// q4f16 models: A, scales, float zero points and bias in float16, Y in float16 (computed in float).
TEST_P(MatMulNBitsSimd, Float16Inputs) {
  Check(1, 256, 37, 32, Zp::kPacked, true, 1, 0, true);
  Check(5, 200, 40, 64, Zp::kFloat, true, 2, 0, true);
  Check(3, 384, 33, 128, Zp::kNone, false, 1, 4, true);
}

// MatMulBnb4: B's flat N x K codes, two a byte with the first in the high nibble; a weight is
// codebook[code] * absmax of its block.
void CheckBnb4(int64_t m, int64_t k, int64_t n, int64_t block, int64_t quant_type, int threads, bool half = false) {
  static const float kFp4[16] = {0, 0.0625f / 12, 8.f / 12, 1, 4.f / 12, 6.f / 12, 2.f / 12, 3.f / 12,
                                 -0.f, -0.0625f / 12, -8.f / 12, -1, -4.f / 12, -6.f / 12, -2.f / 12, -3.f / 12};
  static const float kNf4[16] = {-1.f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                                 -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.f,
                                 0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                                 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                                 0.7229568362236023f, 1.f};
  const float* book = quant_type == 0 ? kFp4 : kNf4;
  std::mt19937 rng(static_cast<uint32_t>(m * 31 + k + n * 3 + block + quant_type));
  std::uniform_real_distribution<float> uni(-1, 1);
  std::vector<uint8_t> codes(n * k), b((n * k + 1) / 2, 0);
  for (int64_t i = 0; i < n * k; ++i) {
    codes[i] = rng() & 15;
    b[i / 2] |= (i & 1) ? codes[i] : codes[i] << 4;
  }
  std::vector<float> absmax(n * k / block), a(m * k);
  for (auto& x : absmax) x = 0.1f + std::abs(uni(rng));
  for (auto& x : a) x = uni(rng);
  OpTest test("MatMulBnb4", 1, "com.microsoft");
  test.Attr("K", k).Attr("N", n).Attr("block_size", block).Attr("quant_type", quant_type);
  test.Input(Floats({m, k}, a, half))
      .Input(Tensor::FromVector<uint8_t>({static_cast<int64_t>(b.size())}, b))
      .Input(Floats({static_cast<int64_t>(absmax.size())}, absmax, half));
  test.ConstantInput(1).ConstantInput(2).Threads(threads);
  auto out = test.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{m, n}));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, mag = 0;
      for (int64_t e = 0; e < k; ++e) {
        const double w = double(book[codes[j * k + e]]) * absmax[(j * k + e) / block];
        s += a[i * k + e] * w;
        mag += std::abs(a[i * k + e] * w);
      }
      ASSERT_NEAR(Element(y, i * n + j), s, 1e-5 * mag + 1e-6 + (half ? std::abs(s) * 0x1p-11 : 0))
          << "bnb4 type " << quant_type << " m " << m << " k " << k << " n " << n << " at " << i << "," << j;
    }
}

TEST_P(MatMulNBitsSimd, Bnb4Codebooks) {
  CheckBnb4(1, 256, 37, 64, 1, 1);        // NF4, one row: the row kernel
  CheckBnb4(1, 128, 9, 16, 0, 2);         // FP4, blocks of 16
  CheckBnb4(6, 320, 40, 64, 1, 2);        // a few rows: four at a time
  CheckBnb4(32, 320, 40, 64, 1, 2);       // the GEMM's panels
  CheckBnb4(5, 192, 20, 32, 0, 1, true);  // float16
}

TEST(MatMulBnb4, RefusesWhatItDoesNotRun) {
  auto run = [](int64_t k, int64_t block, int64_t quant_type, int64_t trans_b) {
    OpTest t("MatMulBnb4", 1, "com.microsoft");
    t.Attr("K", k).Attr("N", int64_t{2}).Attr("block_size", block).Attr("quant_type", quant_type);
    if (trans_b >= 0) t.Attr("transB", trans_b);
    t.Input(Tensor::FromVector<float>({1, k}, std::vector<float>(k)))
        .Input(Tensor::FromVector<uint8_t>({k}, std::vector<uint8_t>(k)))
        .Input(Tensor::FromVector<float>({2 * k / block}, std::vector<float>(2 * k / block, 1.f)));
    return t.Run(RegisterQuantMsKernels).status().ToString();
  };
  EXPECT_NE(run(64, 32, 2, -1).find("quant_type must be 0 (FP4) or 1 (NF4), got 2"), std::string::npos);
  EXPECT_NE(run(64, 32, 1, 0).find("transB = 0"), std::string::npos);
  EXPECT_NE(run(48, 32, 1, -1).find("block_size 32 (only a power of 2 from 16 that divides K = 48)"),
            std::string::npos);
  EXPECT_EQ(run(64, 32, 1, 1), "Ok");
  // A K from a hostile model that would overflow N * K is refused before anything is sized by it.
  OpTest huge("MatMulBnb4", 1, "com.microsoft");
  huge.Attr("K", int64_t{1} << 40).Attr("N", int64_t{1} << 40).Attr("block_size", int64_t{64}).Attr("quant_type", int64_t{1});
  huge.Input(Tensor::FromVector<float>({1, 4}, std::vector<float>(4)))
      .Input(Tensor::FromVector<uint8_t>({2}, {0, 0}))
      .Input(Tensor::FromVector<float>({1}, {1.f}))
      .ConstantInput(1)
      .ConstantInput(2);
  EXPECT_NE(huge.Run(RegisterQuantMsKernels).status().ToString().find("below 2^31"), std::string::npos);
}

TEST(MatMulNBits, RefusesWhatItDoesNotRun) {
  OpTest bits("MatMulNBits", 1, "com.microsoft");
  bits.Attr("K", int64_t{32}).Attr("N", int64_t{1}).Attr("bits", int64_t{3}).Attr("block_size", int64_t{32});
  bits.Input(Tensor::FromVector<float>({1, 32}, std::vector<float>(32)))
      .Input(Tensor::FromVector<uint8_t>({1, 1, 16}, std::vector<uint8_t>(16)))
      .Input(Tensor::FromVector<float>({1}, {1.f}));
  auto r = bits.Run(RegisterQuantMsKernels);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("bits = 3 (2, 4 and 8 run)"), std::string::npos) << r.status().ToString();

  OpTest shape("MatMulNBits", 1, "com.microsoft");
  shape.Attr("K", int64_t{32}).Attr("N", int64_t{2}).Attr("block_size", int64_t{32});
  shape.Input(Tensor::FromVector<float>({1, 32}, std::vector<float>(32)))
      .Input(Tensor::FromVector<uint8_t>({1, 1, 16}, std::vector<uint8_t>(16)))
      .Input(Tensor::FromVector<float>({2}, {1.f, 1.f}));
  r = shape.Run(RegisterQuantMsKernels);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("input 'B' must be uint8 with N * ceil(K / block_size) * block_size * bits / 8 = 32"),
            std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace onnxflow
