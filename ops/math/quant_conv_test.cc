// QLinearConvNhwc (quant_conv.cc) against an int64 direct convolution (conv_geometry.h's
// DirectConv) requantized with the epilogue's float operations, over 1-D, 2-D and 3-D windows,
// strides, dilations, asymmetric pads, groups (depthwise included), uint8/int8 activations and
// weights, per-channel weight zero points, channel counts that are not multiples of 4 or 16, and
// packed (constant) against unpacked weights; on every compiled target.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/domains.h"
#include "ops/framework/every_target.h"
#include "ops/framework/testing.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/qgemm.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

class QuantConvNhwc : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(QuantConvNhwc);

struct Case {
  std::vector<int64_t> spatial, kernel, strides, dilations, pads;
  int64_t batch, c, m, group;
  bool x_signed, w_signed, y_signed, w_zero, constant_w;
  int threads;
  bool constant_w_zero = false;  // with constant_w: the depthwise kernel packs W - w_zero at load
  // Weight zero points: random (w_zero) unless this is set, then this value in every channel.
  int32_t w_zero_value = -1000;
  float w_scale_max = 0.01f;  // w_scale drawn from [0.001, this]: large values saturate every output
  int32_t w_every_7th = -1000;  // unless -1000: every 7th weight is this value
};

// Element at NCHW index `i` of a tensor of channels-first shape `s`, as its NHWC index.
int64_t NhwcIndex(const Shape& s, int64_t i) {
  const int64_t channels = s[1];
  int64_t plane = 1;
  for (size_t d = 2; d < s.size(); ++d) plane *= s[d];
  const int64_t n = i / (channels * plane), c = (i / plane) % channels, p = i % plane;
  return (n * plane + p) * channels + c;
}

Tensor Bytes(bool is_signed, const Shape& shape, const std::vector<int32_t>& v) {
  Tensor t(is_signed ? DataType::kInt8 : DataType::kUint8, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (is_signed) t.mutable_data<int8_t>()[i] = static_cast<int8_t>(v[i]);
    else t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
  }
  return t;
}

void RunCase(const Case& c, std::mt19937& rng) {
  const int64_t nd = static_cast<int64_t>(c.spatial.size());
  Shape x_nchw = {c.batch, c.c};
  x_nchw.insert(x_nchw.end(), c.spatial.begin(), c.spatial.end());
  Shape w_shape = {c.m, c.c / c.group};
  w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
  ConvAttributes attrs;
  attrs.kernel_shape = c.kernel;
  attrs.strides = c.strides;
  attrs.dilations = c.dilations;
  attrs.pads = c.pads;
  attrs.group = c.group;
  auto geometry = ComputeConvGeometry(attrs, x_nchw, w_shape);
  ASSERT_TRUE(geometry.ok()) << geometry.status().ToString();
  const ConvGeometry& g = *geometry;

  auto value = [&](bool s) { return std::uniform_int_distribution<int>(s ? -128 : 0, s ? 127 : 255)(rng); };
  std::vector<int32_t> x(ElementCount(x_nchw)), w(ElementCount(w_shape)), wz(c.m, 0), bias(c.m);
  for (auto& v : x) v = value(c.x_signed);
  for (auto& v : w) v = value(c.w_signed);
  if (c.w_every_7th != -1000) for (size_t j = 0; j < w.size(); j += 7) w[j] = c.w_every_7th;
  if (c.w_zero) for (auto& v : wz) v = c.w_zero_value != -1000 ? c.w_zero_value : value(c.w_signed);
  for (auto& v : bias) v = std::uniform_int_distribution<int>(-5000, 5000)(rng);
  const int32_t xz = value(c.x_signed), yz = value(c.y_signed);
  std::vector<float> ws(c.m);
  for (auto& v : ws) v = std::uniform_real_distribution<float>(0.001f, c.w_scale_max)(rng);
  const float xs = 0.05f, ys = 0.5f + 0.01f * static_cast<float>(c.kernel.size());

  std::vector<int64_t> acc(ElementCount(g.output_shape()));
  std::vector<int64_t> x64(x.begin(), x.end()), w64(w.begin(), w.end()), wz64(wz.begin(), wz.end()),
      b64(bias.begin(), bias.end());
  DirectConv<int64_t, int64_t, int64_t>(g, x64.data(), w64.data(), b64.data(), xz, wz64.data(), acc.data());

  std::vector<int32_t> x_nhwc(x.size());
  for (size_t i = 0; i < x.size(); ++i) x_nhwc[NhwcIndex(x_nchw, static_cast<int64_t>(i))] = x[i];
  Shape x_shape = {c.batch};
  x_shape.insert(x_shape.end(), c.spatial.begin(), c.spatial.end());
  x_shape.push_back(c.c);

  OpTest t("QLinearConvNhwc", 1, kOnnxflowDomain);
  t.Input(Bytes(c.x_signed, x_shape, x_nhwc))
      .Input(Tensor::Scalar<float>(xs))
      .Input(Bytes(c.x_signed, {}, {xz}))
      .Input(Bytes(c.w_signed, w_shape, w))
      .Input(Tensor::FromVector<float>({c.m}, ws))
      .Input(c.w_zero ? Bytes(c.w_signed, {c.m}, wz) : Bytes(c.w_signed, {}, {0}))
      .Input(Tensor::Scalar<float>(ys))
      .Input(Bytes(c.y_signed, {}, {yz}))
      .Input(Tensor::FromVector<int32_t>({c.m}, bias))
      .Attr("kernel_shape", c.kernel)
      .Attr("strides", c.strides)
      .Attr("dilations", c.dilations)
      .Attr("pads", c.pads)
      .Attr("group", c.group)
      .Threads(c.threads);
  if (c.constant_w) t.ConstantInput(3);
  if (c.constant_w_zero) t.ConstantInput(5);
  auto out = t.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  Shape want_shape = {c.batch};
  want_shape.insert(want_shape.end(), g.out_spatial.begin(), g.out_spatial.end());
  want_shape.push_back(c.m);
  ASSERT_EQ(y.shape(), want_shape);
  const Shape y_nchw = g.output_shape();
  const int64_t plane = g.out_size();
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t m = (static_cast<int64_t>(i) / plane) % c.m;
    // The epilogue's float operations: float(acc) * (x_scale * w_scale / y_scale), half to even.
    const float multiplier = xs * ws[m] / ys;
    const float r = std::nearbyint(static_cast<float>(acc[i]) * multiplier) + static_cast<float>(yz);
    const int32_t want = static_cast<int32_t>(std::min(c.y_signed ? 127.0f : 255.0f, std::max(c.y_signed ? -128.0f : 0.0f, r)));
    const int64_t at = NhwcIndex(y_nchw, static_cast<int64_t>(i));
    const int32_t got = c.y_signed ? y.data<int8_t>()[at] : y.data<uint8_t>()[at];
    ASSERT_EQ(got, want) << "nchw index " << i << " channel " << m << " nd=" << nd << " c=" << c.c << " m=" << c.m
                         << " group=" << c.group << " x" << (c.x_signed ? "s8" : "u8") << " w"
                         << (c.w_signed ? "s8" : "u8") << (c.w_zero ? " wz" : "") << (c.constant_w ? " packed" : "");
  }
}

TEST_P(QuantConvNhwc, MatchesDirectConvolution) {
  std::mt19937 rng(21);
  const std::vector<Case> cases = {
      // 1x1 stride 1, read in place (C a multiple of 4), and not (C = 6).
      {{5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 2, 8, 50, 1, false, true, false, false, true, 2},
      {{5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 6, 17, 1, false, true, true, false, false, 1},
      // 3x3 pad 1, stride 2, asymmetric pads, dilation 2; odd channel counts.
      {{9, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 5, 33, 1, false, true, false, false, true, 1},
      {{9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 2, 1}, 2, 16, 64, 1, true, true, false, true, true, 2},
      {{11, 10}, {3, 2}, {1, 2}, {2, 1}, {2, 1, 0, 3}, 1, 7, 3, 1, false, false, true, true, false, 1},
      // The stem's shape: 3 channels, 7x7 stride 2 pad 3.
      {{16, 16}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, 1, 3, 64, 1, false, true, false, false, true, 2},
      // Groups, depthwise, u8 weights with per-channel zero points.
      {{6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 12, 18, 3, false, true, false, true, true, 1},
      {{6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2, 8, 8, 8, true, false, false, true, true, 2},
      {{6, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 16, 8, 2, false, true, true, false, false, 1},
      // 1-D and 3-D.
      {{13}, {3}, {2}, {1}, {1, 2}, 2, 5, 9, 1, false, true, false, true, true, 1},
      {{4, 5, 3}, {2, 3, 1}, {1, 2, 1}, {1, 1, 2}, {0, 1, 1, 1, 0, 0}, 1, 4, 20, 2, true, true, true, false, true, 2},
      // MobileNetV2's 1x1 layers with uint8 weights and zero points (the zoo's u8u8 files): B's zero
      // points in the VNNI epilogue's per-tile path, A's row sums over K = 24 and 43 (no whole
      // 64-byte vector: 8 bytes at a time, then single bytes).
      {{12, 12}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 24, 96, 1, false, false, false, true, true, 2},
      {{7, 9}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 2, 43, 20, 1, false, false, true, true, false, 1},
      // Many rows (row blocks split over threads), N past one strip.
      {{28, 28}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 64, 100, 1, false, true, false, false, true, 2},
      // One thread: runs of 64 columns whole (the VNNI epilogue's 64-column store), then the rest;
      // int8 and uint8 results, B's zero points, and scales that saturate both ends.
      {{12, 12}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 32, 136, 1, false, true, false, false, true, 1},
      {{9, 10}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 2, 24, 130, 1, true, false, true, true, true, 1},
      {{9, 10}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 16, 64, 1, false, true, false, true, true, 1, false, -1000,
       1e6f},
      {{9, 10}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 16, 64, 1, false, true, true, false, true, 1, false, -1000,
       1e6f},
      // Windows read in the image (uint8 X, int8 W without zero points, a window row of whole
      // 4-byte groups): tiles of 6 and of 8 rows that end where an output row does, the border
      // rows gathered; stride 2 with a dilated height and asymmetric pads; 5x5; 1x3; batch 2 and
      // two threads; and an image no window fits inside (all gathered).
      {{9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2, 16, 64, 1, false, true, false, false, true, 1},
      {{9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2, 16, 80, 1, false, true, true, false, true, 2},
      {{11, 9}, {3, 3}, {2, 2}, {2, 1}, {2, 1, 1, 0}, 1, 8, 40, 1, false, true, true, false, true, 2},
      {{8, 8}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}, 1, 4, 20, 1, false, true, false, false, true, 1},
      {{7, 12}, {1, 3}, {1, 1}, {1, 1}, {0, 1, 0, 1}, 2, 12, 16, 1, false, true, false, false, true, 2},
      {{2, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 16, 32, 1, false, true, false, false, true, 1},
  };
  for (const Case& c : cases) RunCase(c, rng);
  if (QGemmUsesVnni()) {  // the AVX-512BW kernel too on a VNNI machine
    QGemmDisableVnniForTest(true);
    for (const Case& c : cases) RunCase(c, rng);
    QGemmDisableVnniForTest(false);
  }
}

// Depthwise (quant_depthwise.h) and channel multiplier 2 (still the per-group GEMM): channel
// counts around the vector widths (4, 8, 16 int32 lanes, pixel pairs below 4 vectors and blocks of
// 4 vectors), 3x3 and 5x5,
// strides 1 and 2, dilation 2, asymmetric pads, batch 2, every combination of 8-bit types, with
// and without per-channel weight zero points, W packed at load (with and without its zero points)
// and read at run.
TEST_P(QuantConvNhwc, DepthwiseMatchesDirectConvolution) {
  std::mt19937 rng(34);
  std::vector<Case> cases;
  int i = 0;
  auto add = [&](std::vector<int64_t> spatial, int64_t k, int64_t stride, int64_t dilation,
                 std::vector<int64_t> pads, int64_t batch, int64_t c, int64_t multiplier) {
    Case d{spatial, {k, k}, {stride, stride}, {dilation, dilation}, pads, batch, c, c * multiplier, c,
           (i & 1) != 0, (i & 2) != 0, (i & 4) != 0, (i % 3) != 0, i % 3 != 1, 1 + i % 2, i % 3 == 2};
    cases.push_back(d);
    ++i;
  };
  for (int64_t c : {1, 15, 16, 17, 32, 64, 136, 544}) {
    const std::vector<int64_t> spatial = c > 100 ? std::vector<int64_t>{6, 7} : std::vector<int64_t>{9, 11};
    add(spatial, 3, 1, 1, {1, 1, 1, 1}, 2, c, 1);
    add(spatial, 3, 2, 1, {1, 1, 1, 1}, 1, c, 1);
    add(spatial, 3, 2, 1, {0, 1, 1, 0}, 2, c, 1);
    add(spatial, 5, 1, 1, {2, 2, 2, 2}, 1, c, 1);
    add(spatial, 5, 2, 1, {2, 1, 0, 3}, 2, c, 1);
    add(spatial, 3, 1, 2, {2, 2, 2, 2}, 1, c, 1);
    add(spatial, 3, 2, 2, {1, 0, 2, 1}, 1, c, 1);
    add(spatial, 3, 1, 1, {1, 1, 1, 1}, 2, c, 2);
  }
  // A window wider than the padded image leaves no column whose taps are all inside (the pointer
  // loop's fast path is empty); MobileNetV2's 32 channels, two pixels at a time, an odd width.
  add({6, 7}, 5, 1, 2, {4, 4, 4, 4}, 1, 32, 1);
  add({5, 9}, 3, 1, 1, {1, 1, 1, 1}, 1, 32, 1);
  // Big enough to split output rows over 2 threads (ParallelFor's threshold).
  cases.push_back({{64, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2, 17, 17, 17, false, true, false, true, true, 2, true});
  cases.push_back({{40, 40}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 1, 1}, 1, 64, 64, 64, true, true, true, false, false, 2});
  // Every type combination on one shape, each with per-channel zero points and all three ways W
  // arrives.
  for (int types = 0; types < 8; ++types) {
    for (int arrives = 0; arrives < 3; ++arrives) {
      cases.push_back({{5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2, 20, 20, 20, (types & 1) != 0,
                       (types & 2) != 0, (types & 4) != 0, true, arrives != 0, 2, arrives == 2});
    }
  }
  for (const Case& c : cases) RunCase(c, rng);
}

// The depthwise VNNI path (quant_depthwise.h: 4 taps per vpdpbusd, on an AVX-512 VNNI CPU) stores
// w - w_zero as int8 where it fits (int8 weights with zero point 0, the zoo's u8s8 per-channel
// files; uint8 ones with zero point 128), else minus an offset per channel added back through the
// taps' sum of x (DepthwiseMatchesDirectConvolution's random zero points). Window sizes around its
// groups of 4 taps (1x3, 2x2, 3x3, 5x5: 3, 4, 9 and 25 taps), channel counts around its units of
// 64 and 32 channels (96 = 64 + 32, 144 = 64 + 64 + 16), every 8-bit type pair, outputs
// saturating at both ends (scales of up to 1e6 put float(acc) * multiplier past +-2^31); the edges
// of the int8 range: uint8 weights with zero point 127 (w - 127 = 128 for w = 255) and int8 with
// zero point 1 (-128 - 1) need the offset, 255 - 128 and -128 - 0 do not. Each also with VNNI off
// (the 16-bit path).
TEST_P(QuantConvNhwc, DepthwiseVnniPathMatchesDirectConvolution) {
  std::mt19937 rng(55);
  std::vector<Case> cases;
  int i = 0;
  auto add = [&](std::vector<int64_t> spatial, std::vector<int64_t> k, int64_t stride, std::vector<int64_t> pads,
                 int64_t c, bool w_signed, int32_t w_zero, float w_scale_max = 0.01f, int32_t w_every_7th = -1000) {
    Case d{spatial, k, {stride, stride}, {1, 1}, pads, 1 + i % 2, c, c, c, (i & 1) != 0, w_signed, (i & 2) != 0,
           true, i % 3 != 1, 1 + i % 2, i % 3 == 2, w_zero, w_scale_max, w_every_7th};
    cases.push_back(d);
    ++i;
  };
  for (int64_t c : {7, 32, 48, 96, 144}) {
    add({7, 9}, {3, 3}, 1, {1, 1, 1, 1}, c, true, 0);
    add({7, 9}, {3, 3}, 2, {0, 1, 1, 0}, c, false, 128);
    add({6, 5}, {2, 2}, 1, {0, 0, 1, 1}, c, true, 0);
    add({6, 5}, {1, 3}, 1, {0, 1, 0, 1}, c, false, 128);
    add({8, 8}, {5, 5}, 1, {2, 2, 2, 2}, c, true, 0);
  }
  for (int types = 0; types < 4; ++types) {
    i = types;  // x and y signedness
    add({5, 6}, {3, 3}, 1, {1, 1, 1, 1}, 40, true, 0, 1e6f);
    i = types;
    add({5, 6}, {3, 3}, 1, {1, 1, 1, 1}, 40, false, 128, 1e6f);
  }
  add({7, 9}, {3, 3}, 1, {1, 1, 1, 1}, 32, false, 127, 0.01f, 255);
  add({7, 9}, {3, 3}, 1, {1, 1, 1, 1}, 32, true, 1, 0.01f, -128);
  // The extremes that do fit: 255 - 128 and -128 - 0.
  add({7, 9}, {3, 3}, 1, {1, 1, 1, 1}, 32, false, 128, 0.01f, 255);
  add({7, 9}, {3, 3}, 1, {1, 1, 1, 1}, 32, true, 0, 0.01f, -128);
  for (const Case& c : cases) RunCase(c, rng);
  if (QGemmUsesVnni()) {
    QGemmDisableVnniForTest(true);
    for (const Case& c : cases) RunCase(c, rng);
    QGemmDisableVnniForTest(false);
  }
}

TEST(QuantConvNhwcErrors, RefusesMalformedInputs) {
  auto run = [](Shape x_shape, Shape w_shape, Tensor ws) {
    OpTest t("QLinearConvNhwc", 1, kOnnxflowDomain);
    t.Input(Tensor(DataType::kUint8, x_shape)).Input(Tensor::Scalar<float>(1.0f)).Input(Tensor::Scalar<uint8_t>(0))
        .Input(Tensor(DataType::kInt8, w_shape)).Input(std::move(ws)).Input(Tensor::Scalar<int8_t>(0))
        .Input(Tensor::Scalar<float>(1.0f)).Input(Tensor::Scalar<uint8_t>(0));
    return t.Run(RegisterMathKernels);
  };
  EXPECT_TRUE(Refused(run({1, 4, 4, 3}, {8, 4, 1, 1}, Tensor::Scalar<float>(1.0f)), StatusCode::kInvalidArgument,
                      "input channels"));
  EXPECT_TRUE(Refused(run({1, 4, 4, 4}, {8, 4, 1, 1}, Tensor::FromVector<float>({3}, {1, 1, 1})),
                      StatusCode::kInvalidArgument, "w_scale"));
  EXPECT_TRUE(Refused(run({4, 4}, {8, 4}, Tensor::Scalar<float>(1.0f)), StatusCode::kInvalidArgument, "rank"));
  EXPECT_TRUE(Refused(run({1, 2, 2, 4}, {8, 4, 3, 3}, Tensor::Scalar<float>(1.0f)), StatusCode::kInvalidArgument, ""));
}

}  // namespace
}  // namespace onnxflow
