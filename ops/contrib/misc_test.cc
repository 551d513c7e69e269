#include <gtest/gtest.h>

#include "ops/framework/registry.h"
#include "ops/framework/domains.h"
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

}  // namespace
}  // namespace onnxflow
