#include <gtest/gtest.h>

#include "ops/framework/registry.h"
#include "ops/framework/domains.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/register_all.h"

namespace onnxflow {
namespace {

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

TEST(GatherBlockQuantized, FourBitRowsWithDefaultZeroPoint) {
  // Two rows of 16 values (8 bytes each), one block per row; nibbles low first.
  std::vector<uint8_t> data(16);
  for (int i = 0; i < 8; ++i) data[i] = static_cast<uint8_t>((9 << 4) | 8);  // row 0: 8, 9, 8, 9 ...
  for (int i = 8; i < 16; ++i) data[i] = static_cast<uint8_t>((0 << 4) | 15);  // row 1: 15, 0, ...
  OpTest test("GatherBlockQuantized", 1, kMsDomain);
  test.Input(Tensor::FromVector<uint8_t>({2, 8}, data))
      .Input(Tensor::FromVector<int64_t>({1}, {1}))
      .Input(F({2, 1}, {2.0f, 0.5f}))
      .Attr("block_size", int64_t{16})
      .Attr("quantize_axis", int64_t{1});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> expected;
  for (int i = 0; i < 8; ++i) {
    expected.push_back((15 - 8) * 0.5f);
    expected.push_back((0 - 8) * 0.5f);
  }
  EXPECT_TRUE(TensorsNear(F({1, 16}, expected), (*out)[0].tensor()));
}

// values as a float16 or bfloat16 tensor (exact for the values used here).
Tensor Sixteen(Shape shape, const std::vector<float>& values, DataType type) {
  if (type == DataType::kFloat16) {
    std::vector<Float16> h;
    for (float v : values) h.push_back(Float16{FloatToHalf(v)});
    return Tensor::FromVector<Float16>(std::move(shape), h);
  }
  std::vector<BFloat16> h;
  for (float v : values) h.push_back(BFloat16{FloatToBFloat16(v)});
  return Tensor::FromVector<BFloat16>(std::move(shape), h);
}

// q4f16 embeddings: float16 (or bfloat16) scales give values of that type, each block's scale
// read from the 16-bit table as it is needed.
TEST(GatherBlockQuantized, SixteenBitScalesGiveSixteenBitValues) {
  std::vector<uint8_t> data(32);
  for (int i = 0; i < 32; ++i) data[i] = static_cast<uint8_t>(((i + 3) % 16) << 4 | (i % 16));
  const std::vector<float> scale_values = {2.0f, 0.5f, 0.25f, 4.0f};  // [2, 2]: two blocks of 16 a row
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    OpTest test("GatherBlockQuantized", 1, kMsDomain);
    test.Input(Tensor::FromVector<uint8_t>({2, 16}, data))
        .Input(Tensor::FromVector<int64_t>({1}, {1}))
        .Input(Sixteen({2, 2}, scale_values, type))
        .Attr("block_size", int64_t{16});
    auto out = test.Run(RegisterAllKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    std::vector<float> expected;
    for (int e = 0; e < 32; ++e) {
      const uint8_t byte = data[16 + e / 2];
      const int q = e % 2 == 0 ? byte & 15 : byte >> 4;
      expected.push_back(static_cast<float>(q - 8) * scale_values[2 + e / 16]);
    }
    ASSERT_EQ((*out)[0].tensor().dtype(), type);
    EXPECT_TRUE(TensorsNear(Sixteen({1, 32}, expected, type), (*out)[0].tensor(), 0.0, 0.0));
  }
}

TEST(GatherBlockQuantized, EightBitWithZeroPoints) {
  std::vector<uint8_t> data(32);
  for (int i = 0; i < 32; ++i) data[i] = static_cast<uint8_t>(i);
  OpTest test("GatherBlockQuantized", 1, kMsDomain);
  test.Input(Tensor::FromVector<uint8_t>({2, 16}, data))
      .Input(Tensor::FromVector<int32_t>({2}, {1, 0}))
      .Input(F({2, 1}, {1.0f, 2.0f}))
      .Input(Tensor::FromVector<uint8_t>({2, 1}, {0, 16}))
      .Attr("block_size", int64_t{16})
      .Attr("bits", int64_t{8});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> expected;
  for (int i = 0; i < 16; ++i) expected.push_back((16 + i - 16) * 2.0f);
  for (int i = 0; i < 16; ++i) expected.push_back(static_cast<float>(i));
  EXPECT_TRUE(TensorsNear(F({2, 16}, expected), (*out)[0].tensor()));
}

// Three blocks a row: 4-bit zero points take two bytes a row (the second half-used), as ONNX
// Runtime packs them, not 1.5 bytes a row packed through.
TEST(GatherBlockQuantized, FourBitZeroPointsArePackedPerRow) {
  std::vector<uint8_t> data(2 * 24);
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 24; ++i) data[r * 24 + i] = static_cast<uint8_t>(((2 * i + 1 + r) % 16) << 4 | (2 * i + r) % 16);
  // Row 0's zero points 1, 2, 3; row 1's 4, 5, 6.
  const std::vector<uint8_t> zp = {2 << 4 | 1, 3, 5 << 4 | 4, 6};
  OpTest test("GatherBlockQuantized", 1, kMsDomain);
  test.Input(Tensor::FromVector<uint8_t>({2, 24}, data))
      .Input(Tensor::FromVector<int64_t>({2}, {1, 0}))
      .Input(F({2, 3}, {1, 2, 4, 8, 16, 32}))
      .Input(Tensor::FromVector<uint8_t>({2, 2}, zp))
      .Attr("block_size", int64_t{16});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> expected;
  for (int r : {1, 0})
    for (int e = 0; e < 48; ++e) {
      const int blk = e / 16, zero = 3 * r + blk + 1;
      const float scale = static_cast<float>(1 << (3 * r + blk));
      expected.push_back(static_cast<float>((e + r) % 16 - zero) * scale);
    }
  EXPECT_TRUE(TensorsNear(F({2, 48}, expected), (*out)[0].tensor()));
}

TEST(GatherBlockQuantized, TwoBitValuesFourAByteLowestFirst) {
  // One row of 16 values: byte b holds values 4b .. 4b + 3, the lowest bits first.
  const std::vector<uint8_t> data = {0xE4, 0x1B, 0xE4, 0x1B};  // 0 1 2 3, 3 2 1 0, ...
  OpTest test("GatherBlockQuantized", 1, kMsDomain);
  test.Input(Tensor::FromVector<uint8_t>({1, 4}, data))
      .Input(Tensor::FromVector<int64_t>({1}, {0}))
      .Input(F({1, 1}, {0.5f}))
      .Attr("block_size", int64_t{16})
      .Attr("bits", int64_t{2});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // Default zero point 2^(bits - 1) = 2.
  std::vector<float> expected;
  for (int b = 0; b < 4; ++b)
    for (int i = 0; i < 4; ++i) expected.push_back(static_cast<float>((b % 2 ? 3 - i : i) - 2) * 0.5f);
  EXPECT_TRUE(TensorsNear(F({1, 16}, expected), (*out)[0].tensor()));
}

// int4 / uint4 data hold one value per element; zero points have data's type, default 0. Here
// quantized along axis 0 and gathered along axis 1.
TEST(GatherBlockQuantized, Int4AndUint4DataAlongEitherAxis) {
  for (DataType type : {DataType::kInt4, DataType::kUint4}) {
    const bool is_signed = type == DataType::kInt4;
    std::vector<int> q(32 * 3);
    for (int i = 0; i < 32 * 3; ++i) q[i] = (i * 5) % 16 - (is_signed ? 8 : 0);
    auto tensor = [&](Shape shape, const std::vector<int>& v) {
      if (is_signed) {
        std::vector<Int4> t;
        for (int x : v) t.push_back(Int4{static_cast<int8_t>(x)});
        return Tensor::FromVector<Int4>(std::move(shape), t);
      }
      std::vector<UInt4> t;
      for (int x : v) t.push_back(UInt4{static_cast<uint8_t>(x)});
      return Tensor::FromVector<UInt4>(std::move(shape), t);
    };
    const std::vector<int> zp = {1, -2, 3, 0, 2, -1};  // [2 blocks, 3 columns]
    std::vector<int> zq = zp;
    if (!is_signed)
      for (int& z : zq) z += 2;
    for (bool with_zp : {false, true}) {
      OpTest test("GatherBlockQuantized", 1, kMsDomain);
      test.Input(tensor({32, 3}, q))
          .Input(Tensor::FromVector<int32_t>({1}, {2}))
          .Input(F({2, 3}, {1, 2, 3, 4, 5, 6}))
          .Attr("block_size", int64_t{16})
          .Attr("gather_axis", int64_t{1})
          .Attr("quantize_axis", int64_t{0});
      if (with_zp) test.Input(tensor({2, 3}, zq));
      auto out = test.Run(RegisterAllKernels);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      std::vector<float> expected;
      for (int r = 0; r < 32; ++r) {
        const int s = (r / 16) * 3 + 2;
        expected.push_back(static_cast<float>(q[r * 3 + 2] - (with_zp ? zq[s] : 0)) * static_cast<float>(s + 1));
      }
      EXPECT_TRUE(TensorsNear(F({32, 1}, expected), (*out)[0].tensor())) << DataTypeName(type) << " zp " << with_zp;
    }
  }
}

// Wrong data types and zero points of the wrong shape are refused with what was expected.
TEST(GatherBlockQuantized, RefusesDataAndZeroPointsItCannotRead) {
  OpTest data("GatherBlockQuantized", 1, kMsDomain);
  data.Input(Tensor::FromVector<int8_t>({1, 16}, std::vector<int8_t>(16, 0)))
      .Input(Tensor::FromVector<int64_t>({1}, {0}))
      .Input(F({1, 1}, {1.0f}))
      .Attr("block_size", int64_t{16});
  EXPECT_TRUE(Refused(data.Run(RegisterAllKernels).status(), StatusCode::kInvalidArgument,
                      "GatherBlockQuantized: data must be uint8, int4 or uint4, got int8"));
  // Two rows of three 4-bit blocks: zero points [2, 2] bytes, not the 3 bytes of a flat packing.
  OpTest zp("GatherBlockQuantized", 1, kMsDomain);
  zp.Input(Tensor::FromVector<uint8_t>({2, 24}, std::vector<uint8_t>(48, 0)))
      .Input(Tensor::FromVector<int64_t>({1}, {0}))
      .Input(F({2, 3}, {1, 1, 1, 1, 1, 1}))
      .Input(Tensor::FromVector<uint8_t>({3}, {0, 0, 0}))
      .Attr("block_size", int64_t{16});
  EXPECT_TRUE(Refused(zp.Run(RegisterAllKernels).status(), StatusCode::kInvalidArgument,
                      "GatherBlockQuantized: zero_points must be uint8 [2,2], got uint8 [3]"));
}

TEST(GatherBlockQuantized, OutOfRangeIndexIsRefused) {
  OpTest test("GatherBlockQuantized", 1, kMsDomain);
  test.Input(Tensor::FromVector<uint8_t>({1, 8}, std::vector<uint8_t>(8, 0)))
      .Input(Tensor::FromVector<int64_t>({1}, {3}))
      .Input(F({1, 1}, {1.0f}))
      .Attr("block_size", int64_t{16});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("index 3 is out of range"), std::string::npos) << out.status().message();
}

TEST(Range, DeltaDefaultsToOne) {
  OpTest test("Range", 1, kMsDomain);
  test.Input(Tensor::FromVector<int32_t>({}, {2})).Input(Tensor::FromVector<int32_t>({}, {5}));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.shape(), Shape({3}));
  EXPECT_EQ(y.data<int32_t>()[0], 2);
  EXPECT_EQ(y.data<int32_t>()[2], 4);
}

TEST(Range, FloatWithNegativeDelta) {
  OpTest test("Range", 1, kMsDomain);
  test.Input(F({}, {1.0f})).Input(F({}, {0.0f})).Input(F({}, {-0.25f}));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({4}, {1, 0.75f, 0.5f, 0.25f}), (*out)[0].tensor()));
}

TEST(Inverse, BatchOfTwoWithPivoting) {
  OpTest test("Inverse", 1, kMsDomain);
  test.Input(F({2, 2, 2}, {0, 1, 2, 0, 4, 7, 2, 6}));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2, 2, 2}, {0, 0.5f, 1, 0, 0.6f, -0.7f, -0.2f, 0.4f}), (*out)[0].tensor(), 1e-5, 1e-6));
}

TEST(Inverse, SingularIsRefused) {
  OpTest test("Inverse", 1, kMsDomain);
  test.Input(F({2, 2}, {1, 2, 2, 4}));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("matrix 0 is singular"), std::string::npos) << out.status().message();
}

TEST(Trilu, ContribDomainLowerWithK) {
  OpTest test("Trilu", 1, kMsDomain);
  test.Input(F({2, 2}, {1, 2, 3, 4})).Attr("upper", int64_t{0});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2, 2}, {1, 0, 3, 4}), (*out)[0].tensor()));
}

TEST(NhwcMaxPool, TwoByTwoStrideTwoOverChannels) {
  // (1, 2, 2, 2) channels last: channel 0 = 1, 5, 3, 2; channel 1 = -1, -5, -3, -2.
  OpTest test("NhwcMaxPool", 1, kMsDomain);
  test.Input(Tensor::FromVector<int8_t>({1, 2, 2, 2}, {1, -1, 5, -5, 3, -3, 2, -2}))
      .Attr("kernel_shape", std::vector<int64_t>{2, 2})
      .Attr("strides", std::vector<int64_t>{2, 2});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.shape(), Shape({1, 1, 1, 2}));
  EXPECT_EQ(y.data<int8_t>()[0], 5);
  EXPECT_EQ(y.data<int8_t>()[1], -1);
}

TEST(NhwcMaxPool, PadsAreSkipped) {
  OpTest test("NhwcMaxPool", 1, kMsDomain);
  test.Input(Tensor::FromVector<uint8_t>({1, 1, 3, 1}, {7, 1, 9}))
      .Attr("kernel_shape", std::vector<int64_t>{1, 2})
      .Attr("pads", std::vector<int64_t>{0, 1, 0, 0});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.shape(), Shape({1, 1, 3, 1}));
  EXPECT_EQ(y.data<uint8_t>()[0], 7);
  EXPECT_EQ(y.data<uint8_t>()[1], 7);
  EXPECT_EQ(y.data<uint8_t>()[2], 9);
}

// NhwcMaxPool is MaxPool with the channels last: the same answers over strides, dilations, pads,
// ceil_mode and auto_pad, and the same refusals of hostile attributes (a stride of 0 divided by
// zero; a kernel of 2^40 over pads as long walked every tap).
TEST(NhwcMaxPool, IsMaxPoolWithChannelsLast) {
  const int64_t c = 3, h = 5, w = 6;
  std::vector<float> nchw(c * h * w), nhwc(c * h * w);
  for (int64_t i = 0; i < c * h * w; ++i) nchw[i] = static_cast<float>((i * 37) % 23) - 11.0f;
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t p = 0; p < h * w; ++p) nhwc[p * c + ch] = nchw[ch * h * w + p];
  }
  const int64_t t40 = int64_t{1} << 40;
  struct Geometry {
    std::vector<int64_t> kernel, strides, dilations, pads;
    int64_t ceil;
    const char* auto_pad;
  };
  const Geometry cases[] = {
      {{2, 3}, {2, 1}, {1, 2}, {1, 0, 0, 1}, 1, "NOTSET"},
      {{3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 0, "SAME_UPPER"},
      {{t40, 2}, {t40, 1}, {1, 1}, {t40 - 1, 0, t40, 0}, 0, "NOTSET"},
  };
  for (const Geometry& g : cases) {
    auto attrs = [&](OpTest& t) {
      t.Attr("kernel_shape", g.kernel).Attr("strides", g.strides).Attr("dilations", g.dilations)
          .Attr("ceil_mode", g.ceil).Attr("auto_pad", std::string(g.auto_pad));
      if (std::string(g.auto_pad) == "NOTSET") t.Attr("pads", g.pads);
    };
    OpTest plain("MaxPool", 22);
    plain.Input(Tensor::FromVector<float>({1, c, h, w}, nchw));
    attrs(plain);
    auto want = plain.Run(RegisterAllKernels);
    OpTest last("NhwcMaxPool", 1, kMsDomain);
    last.Input(Tensor::FromVector<float>({1, h, w, c}, nhwc));
    attrs(last);
    auto got = last.Run(RegisterAllKernels);
    ASSERT_TRUE(want.ok() && got.ok()) << want.status().ToString() << " " << got.status().ToString();
    const Tensor& y = (*want)[0].tensor();
    const Tensor& z = (*got)[0].tensor();
    const int64_t oh = y.dim(2), ow = y.dim(3);
    ASSERT_EQ(z.shape(), Shape({1, oh, ow, c}));
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < oh * ow; ++p) EXPECT_EQ(z.data<float>()[p * c + ch], y.data<float>()[ch * oh * ow + p]);
    }
  }
  OpTest zero("NhwcMaxPool", 1, kMsDomain);
  zero.Input(Tensor::FromVector<float>({1, 1, 2, 1}, {1, 2}))
      .Attr("kernel_shape", std::vector<int64_t>{1, 1}).Attr("strides", std::vector<int64_t>{1, 0});
  EXPECT_TRUE(Refused(zero.Run(RegisterAllKernels), StatusCode::kInvalidArgument, "strides must be positive"));
}

}  // namespace
}  // namespace onnxflow
