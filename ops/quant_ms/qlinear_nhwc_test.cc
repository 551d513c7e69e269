// The channels-last region's 8-bit ops: com.onnxflow MaxPoolNhwc against a direct loop over the
// window (pads, strides, dilations, ceil_mode, SAME pads, channel counts off the vector width, int8
// and uint8), and ByteLookup (VBMI and scalar tails) against the table read element by element.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/domains.h"
#include "ops/framework/every_target.h"
#include "ops/framework/testing.h"
#include "ops/quant_ms/channel_affine.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace {

class MaxPoolNhwcTarget : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(MaxPoolNhwcTarget);

struct PoolCase {
  int64_t h, w, c;
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool ceil, is_signed;
  std::string auto_pad = "NOTSET";
};

void RunPool(const PoolCase& p, std::mt19937& rng) {
  const int64_t n = 2;
  Tensor x(p.is_signed ? DataType::kInt8 : DataType::kUint8, {n, p.h, p.w, p.c});
  uint8_t* xd = static_cast<uint8_t*>(x.mutable_raw_data());
  for (int64_t i = 0; i < x.size(); ++i) xd[i] = static_cast<uint8_t>(rng());
  OpTest t("MaxPoolNhwc", 1, kOnnxflowDomain);
  t.Input(x).Attr("kernel_shape", p.kernel).Attr("strides", p.strides).Attr("dilations", p.dilations)
      .Attr("ceil_mode", int64_t{p.ceil}).Attr("auto_pad", p.auto_pad);
  if (p.auto_pad == "NOTSET") t.Attr("pads", p.pads);
  auto out = t.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.rank(), 4);
  // Output sizes and pads by the ONNX rules, spelled out again.
  int64_t begin[2], size[2];
  const int64_t in[2] = {p.h, p.w};
  for (int d = 0; d < 2; ++d) {
    const int64_t span = (p.kernel[d] - 1) * p.dilations[d] + 1;
    int64_t pb = p.pads[d], pe = p.pads[d + 2];
    if (p.auto_pad == "SAME_UPPER") {
      const int64_t o = (in[d] + p.strides[d] - 1) / p.strides[d];
      const int64_t total = std::max<int64_t>(0, (o - 1) * p.strides[d] + span - in[d]);
      pb = total / 2;
      pe = total - pb;
    }
    const int64_t room = in[d] + pb + pe - span;
    size[d] = (p.ceil ? (room + p.strides[d] - 1) / p.strides[d] : room / p.strides[d]) + 1;
    if (p.ceil && (size[d] - 1) * p.strides[d] >= in[d] + pb) --size[d];
    begin[d] = pb;
  }
  ASSERT_EQ(y.shape(), (Shape{n, size[0], size[1], p.c}));
  const uint8_t* yd = static_cast<const uint8_t*>(y.raw_data());
  auto value = [&](uint8_t b) { return p.is_signed ? int(static_cast<int8_t>(b)) : int(b); };
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oh = 0; oh < size[0]; ++oh) {
      for (int64_t ow = 0; ow < size[1]; ++ow) {
        for (int64_t c = 0; c < p.c; ++c) {
          int want = p.is_signed ? -128 : 0;
          for (int64_t kh = 0; kh < p.kernel[0]; ++kh) {
            for (int64_t kw = 0; kw < p.kernel[1]; ++kw) {
              const int64_t ih = oh * p.strides[0] - begin[0] + kh * p.dilations[0];
              const int64_t iw = ow * p.strides[1] - begin[1] + kw * p.dilations[1];
              if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
              want = std::max(want, value(xd[((b * p.h + ih) * p.w + iw) * p.c + c]));
            }
          }
          const int got = value(yd[((b * size[0] + oh) * size[1] + ow) * p.c + c]);
          ASSERT_EQ(got, want) << "at (" << b << ", " << oh << ", " << ow << ", " << c << ") c=" << p.c;
        }
      }
    }
  }
}

TEST_P(MaxPoolNhwcTarget, MatchesTheWindowMaximum) {
  std::mt19937 rng(7);
  const std::vector<PoolCase> cases = {
      {9, 9, 64, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, false},   // ResNet's stem pool
      {9, 9, 24, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, true},    // ShuffleNet's: 16-byte vectors
      {8, 7, 67, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, true},     // ceil_mode, odd channels
      {7, 9, 5, {2, 3}, {1, 2}, {2, 1}, {1, 0, 2, 3}, false, false},    // dilation, asymmetric pads
      {6, 6, 130, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, true, "SAME_UPPER"},
  };
  for (const PoolCase& p : cases) RunPool(p, rng);
}

TEST(MaxPoolNhwc, RefusesMalformedInputs) {
  OpTest rank("MaxPoolNhwc", 1, kOnnxflowDomain);
  rank.Input(Tensor(DataType::kUint8, {1, 4, 4})).Attr("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_TRUE(Refused(rank.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument, "rank 4"));
  OpTest big("MaxPoolNhwc", 1, kOnnxflowDomain);
  big.Input(Tensor(DataType::kUint8, {1, 2, 2, 4})).Attr("kernel_shape", std::vector<int64_t>{3, 3});
  EXPECT_TRUE(Refused(big.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument, "larger than"));
  OpTest type("MaxPoolNhwc", 1, kOnnxflowDomain);
  type.Input(Tensor(DataType::kFloat, {1, 4, 4, 4})).Attr("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_TRUE(Refused(type.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument, "int8 or uint8"));
  OpTest zero("MaxPoolNhwc", 1, kOnnxflowDomain);
  zero.Input(Tensor(DataType::kUint8, {1, 4, 4, 4})).Attr("kernel_shape", std::vector<int64_t>{0, 2});
  EXPECT_TRUE(Refused(zero.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument, "positive"));
}

TEST(ByteLookup, ReadsTheTableByBitPattern) {
  std::mt19937 rng(3);
  for (int64_t n : {int64_t{1}, int64_t{63}, int64_t{64}, int64_t{200}, int64_t{1000}}) {
    Tensor x(DataType::kInt8, {n});
    Tensor table(DataType::kUint8, {256});
    for (int64_t i = 0; i < n; ++i) x.mutable_data<int8_t>()[i] = static_cast<int8_t>(rng());
    for (int i = 0; i < 256; ++i) table.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(rng());
    OpTest t("ByteLookup", 1, kOnnxflowDomain);
    t.Input(x).Input(table);
    auto out = t.Run(RegisterQuantMsKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& y = (*out)[0].tensor();
    ASSERT_EQ(y.dtype(), DataType::kUint8);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(y.data<uint8_t>()[i], table.data<uint8_t>()[static_cast<uint8_t>(x.data<int8_t>()[i])]) << i;
    }
  }
  OpTest bad("ByteLookup", 1, kOnnxflowDomain);
  bad.Input(Tensor(DataType::kUint8, {4})).Input(Tensor(DataType::kUint8, {255}));
  EXPECT_TRUE(Refused(bad.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument, "256"));
}

// A table per channel ([C, 256]) along `axis`: channel-major runs long enough for ApplyByteTable,
// short ones element by element, channels-last (axis 3 or -1); X's axis not of C channels refused.
TEST(ByteLookup, ReadsTheRowOfEachElementsChannel) {
  std::mt19937 rng(5);
  struct Case {
    std::vector<int64_t> shape;
    int64_t axis;
  };
  for (const Case& k : {Case{{2, 3, 5}, 1}, Case{{1, 3, 40}, 1}, Case{{2, 3, 70}, 1}, Case{{2, 4, 4, 3}, 3},
                        Case{{1, 2, 5, 6}, -1}}) {
    Tensor x(DataType::kUint8, k.shape);
    const int64_t axis = k.axis < 0 ? k.axis + x.rank() : k.axis;
    const int64_t channels = k.shape[axis];
    Tensor table(DataType::kInt8, {channels, 256});
    for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(rng());
    for (int64_t i = 0; i < table.size(); ++i) table.mutable_data<int8_t>()[i] = static_cast<int8_t>(rng());
    OpTest t("ByteLookup", 1, kOnnxflowDomain);
    t.Input(x).Input(table).Attr("axis", k.axis);
    auto out = t.Run(RegisterQuantMsKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& y = (*out)[0].tensor();
    ASSERT_EQ(y.dtype(), DataType::kInt8);
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= k.shape[d];
    for (int64_t i = 0; i < x.size(); ++i) {
      const int64_t c = i / inner % channels;
      ASSERT_EQ(y.data<int8_t>()[i], table.data<int8_t>()[c * 256 + x.data<uint8_t>()[i]]) << i << " axis " << k.axis;
    }
  }
  OpTest bad("ByteLookup", 1, kOnnxflowDomain);
  bad.Input(Tensor(DataType::kUint8, {1, 3, 4})).Input(Tensor(DataType::kUint8, {4, 256})).Attr("axis", int64_t{1});
  EXPECT_TRUE(Refused(bad.Run(RegisterQuantMsKernels), StatusCode::kInvalidArgument, "per-channel"));
}

// ChannelAffineLastAxis (a per-channel lookup computed) on every target against the same float
// operations written out here: 37 channels (each target's vector tail), 70 pixels (past a tile
// of 32), signed and unsigned bytes both sides, exact .5 ties (xs 0.5, ys 1: half to even),
// a Relu's bound and a Clip's, values past the output range (saturation).
class ChannelAffineTarget : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(ChannelAffineTarget);

std::vector<float> AffineRowsForTest(int64_t channels, bool y_signed) {
  std::vector<float> p(kChannelAffineRows * channels);
  for (int64_t c = 0; c < channels; ++c) {
    auto at = [&](int row) -> float& { return p[row * channels + c]; };
    const bool ties = c % 3 == 0;
    at(kXz) = static_cast<float>(c % 7) - 3.0f;
    at(kXs) = ties ? 0.5f : 0.013f * static_cast<float>(c + 1);
    at(kS) = ties ? 1.0f : 0.75f + 0.031f * static_cast<float>(c);
    at(kB) = ties ? 0.0f : 0.2f - 0.017f * static_cast<float>(c);
    at(kLo) = c % 2 == 0 ? 0.0f : -std::numeric_limits<float>::infinity();
    at(kHi) = c % 5 == 0 ? 6.0f : std::numeric_limits<float>::infinity();
    at(kYs) = ties ? 1.0f : 0.02f + 0.001f * static_cast<float>(c);
    at(kYz) = static_cast<float>(c % 11) - (y_signed ? 5.0f : 0.0f);
    at(kBelow) = (y_signed ? -128.0f : 0.0f) - at(kYz);
    at(kAbove) = (y_signed ? 127.0f : 255.0f) - at(kYz);
  }
  return p;
}

int32_t AffineReference(int32_t x, const std::vector<float>& p, int64_t channels, int64_t c) {
  auto at = [&](int row) { return p[row * channels + c]; };
  const float v0 = (static_cast<float>(x) - at(kXz)) * at(kXs);
  const float v1 = v0 * at(kS);
  const float v2 = v1 + at(kB);
  const float v3 = std::min(std::max(v2, at(kLo)), at(kHi)) / at(kYs);
  const float v4 = std::min(std::max(v3, at(kBelow)), at(kAbove));
  return static_cast<int32_t>(std::nearbyint(v4)) + static_cast<int32_t>(at(kYz));
}

TEST_P(ChannelAffineTarget, MatchesTheOperationsWrittenOut) {
  const int64_t channels = 37, pixels = 70;
  std::vector<uint8_t> x(channels * pixels), y(channels * pixels);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 7 + i / 37);
  for (bool x_signed : {false, true}) {
    for (bool y_signed : {false, true}) {
      const std::vector<float> p = AffineRowsForTest(channels, y_signed);
      ChannelAffineLastAxis(x.data(), x_signed, p.data(), channels, pixels, y_signed, y.data());
      for (int64_t i = 0; i < channels * pixels; ++i) {
        const int32_t xi = x_signed ? static_cast<int8_t>(x[i]) : x[i];
        const int32_t want = AffineReference(xi, p, channels, i % channels);
        const int32_t got = y_signed ? static_cast<int8_t>(y[i]) : y[i];
        ASSERT_EQ(got, want) << "element " << i << " x_signed " << x_signed << " y_signed " << y_signed;
      }
    }
  }
}

// ByteLookup with Affine rows: channels-last, the rows that give every byte of the constant
// table compute the result; rows that miss one byte (the near miss: one entry changed) are not
// used, the table is read, its changed entry included.
TEST(ByteLookup, ComputesChannelsLastOnlyWhereTheRowsGiveTheTable) {
  const int64_t channels = 37;
  const std::vector<float> p = AffineRowsForTest(channels, false);
  Tensor table(DataType::kUint8, {channels, 256});
  for (int64_t c = 0; c < channels; ++c) {
    for (int b = 0; b < 256; ++b) table.mutable_data<uint8_t>()[c * 256 + b] = static_cast<uint8_t>(AffineReference(b, p, channels, c));
  }
  std::vector<float> rows(p.begin(), p.begin() + 7 * channels);  // xz, xs, s, b, lo, hi, ys, then yz
  rows.insert(rows.end(), p.begin() + kYz * channels, p.begin() + (kYz + 1) * channels);
  const Tensor affine = Tensor::FromVector<float>({8, channels}, rows);
  Tensor x(DataType::kUint8, {1, 4, 64, channels});
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i / channels % 256);
  for (bool changed : {false, true}) {
    Tensor t = table;
    if (changed) t.mutable_data<uint8_t>()[2 * 256 + 77] ^= 1;
    OpTest op("ByteLookup", 1, kOnnxflowDomain);
    op.Input(x).Input(t).Input(affine).ConstantInput(1).ConstantInput(2).Attr("axis", int64_t{3});
    auto out = op.Run(RegisterQuantMsKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const uint8_t* y = (*out)[0].tensor().data<uint8_t>();
    for (int64_t i = 0; i < x.size(); ++i) {
      const int64_t c = i % channels;
      ASSERT_EQ(y[i], t.data<uint8_t>()[c * 256 + x.data<uint8_t>()[i]]) << i << (changed ? " changed" : "");
    }
  }
}

}  // namespace
}  // namespace onnxflow
