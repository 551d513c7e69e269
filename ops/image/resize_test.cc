#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/image/register.h"
#include "ops/image/resize_bilinear.h"
#include "ops/image/resize_rows.h"
#include "ops/image/resize_tables.h"
#include "ops/framework/every_target.h"

namespace onnxflow {
namespace {

class ResizeRows : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(ResizeRows);

Tensor F32(Shape shape, std::vector<float> v) { return Tensor::FromVector<float>(std::move(shape), v); }
Tensor I64(Shape shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(std::move(shape), v); }

Result<Tensor> RunOne(OpTest& t) {
  auto out = t.Run(RegisterImageKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

// ---- hand-computed values (the ONNX operator documentation's worked examples) ----

TEST(Resize, UpsampleLinearHalfPixel) {
  OpTest t("Resize", 19);
  t.Attr("mode", std::string("linear"));
  t.Input(F32({1, 1, 2, 2}, {1, 2, 3, 4})).AbsentInput().Input(F32({4}, {1, 1, 2, 2}));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({1, 1, 4, 4}, {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25,
                                             3.75, 4}),
                          *y));
}

TEST(Resize, DownsampleLinearAndAlignCorners) {
  {
    OpTest t("Resize", 13);
    t.Attr("mode", std::string("linear"));
    t.Input(F32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})).AbsentInput().Input(F32({4}, {1, 1, 0.6f, 0.6f}));
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 2}, {2.6666665f, 4.3333331f}), *y));
  }
  {
    OpTest t("Resize", 13);
    t.Attr("mode", std::string("linear")).Attr("coordinate_transformation_mode", std::string("align_corners"));
    t.Input(F32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})).AbsentInput().Input(F32({4}, {1, 1, 0.6f, 0.6f}));
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 2}, {1, 3.142857f}), *y));
  }
}

TEST(Resize, DownsampleCubic) {
  OpTest t("Resize", 19);
  t.Attr("mode", std::string("cubic"));
  std::vector<float> data(16);
  for (int i = 0; i < 16; ++i) data[i] = static_cast<float>(i + 1);
  t.Input(F32({1, 1, 4, 4}, data)).AbsentInput().Input(F32({4}, {1, 1, 0.8f, 0.8f}));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({1, 1, 3, 3}, {1.47119141f, 2.78125f, 4.08251953f, 6.71142578f, 8.02148438f,
                                             9.32275391f, 11.91650391f, 13.2265625f, 14.52783203f}),
                          *y, 1e-5, 1e-5));
}

TEST(Resize, NearestUpsampleAllVersions) {
  const Tensor expected = F32({1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  const Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor scales = F32({4}, {1, 1, 2, 3});
  {
    OpTest t("Upsample", 7);
    t.Attr("scales", std::vector<float>{1, 1, 2, 3}).Input(x);
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(expected, *y));
  }
  for (int opset : {9, 10}) {
    OpTest t(opset == 9 ? "Upsample" : "Resize", opset);
    t.Input(x).Input(scales);
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(expected, *y));
  }
  for (int opset : {11, 13, 18, 19}) {
    OpTest t("Resize", opset);
    t.Input(x).Input(F32({0}, {})).Input(scales);
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(expected, *y));
  }
}

TEST(Resize, UpsampleAndResize10LinearUseAsymmetricCoordinates) {
  // x = o / 2; the last position (1.5) clamps its right neighbour to the edge.
  const Tensor expected = F32({1, 1, 4, 4}, {1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 3, 3.5f, 4, 4, 3, 3.5f, 4, 4});
  for (int opset : {9, 10}) {
    OpTest t(opset == 9 ? "Upsample" : "Resize", opset);
    t.Attr("mode", std::string("linear"));
    t.Input(F32({1, 1, 2, 2}, {1, 2, 3, 4})).Input(F32({4}, {1, 1, 2, 2}));
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsNear(expected, *y));
  }
  // Resize-10 nearest downsampling takes ceil(o / scale): 0, 1.67, 3.33 -> 0, 2, 4.
  OpTest t("Resize", 10);
  t.Input(F32({5}, {10, 20, 30, 40, 50})).Input(F32({1}, {0.6f}));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(F32({3}, {10, 30, 50}), *y));
}

TEST(Resize, NearestTfCropAndResizeExtrapolatesOnInts) {
  OpTest t("Resize", 19);
  t.Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize")).Attr("extrapolation_value", 7.0f);
  t.Input(Tensor::FromVector<int64_t>({4}, {0, 1, 2, 3})).Input(F32({2}, {0.4f, 1.2f})).AbsentInput();
  t.Input(I64({1}, {3}));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  // Coordinates 1.2, 2.4, 3.6 (outside): nearest 1, 2, then the extrapolation value.
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({3}, {1, 2, 7}), *y));
}

TEST(Resize, NearestModesOnOneAxis) {
  // 4 -> 8 with asymmetric coordinates: x = o / 2 hits every half.
  const Tensor x = F32({4}, {10, 20, 30, 40});
  struct Case { const char* mode; std::vector<float> expected; };
  const Case cases[] = {
      {"round_prefer_floor", {10, 10, 20, 20, 30, 30, 40, 40}},
      {"round_prefer_ceil", {10, 20, 20, 30, 30, 40, 40, 40}},
      {"floor", {10, 10, 20, 20, 30, 30, 40, 40}},
      {"ceil", {10, 20, 20, 30, 30, 40, 40, 40}},
  };
  for (const auto& c : cases) {
    OpTest t("Resize", 19);
    t.Attr("nearest_mode", std::string(c.mode)).Attr("coordinate_transformation_mode", std::string("asymmetric"));
    t.Input(x).AbsentInput().AbsentInput().Input(I64({1}, {8}));
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(F32({8}, c.expected), *y)) << c.mode;
  }
}

TEST(Resize, NearestStringsAndBools) {
  OpTest t("Resize", 19);
  t.Input(Tensor::FromVector<std::string>({1, 2}, {"a", "b"})).AbsentInput().Input(F32({2}, {2, 2}));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<std::string>({2, 4}, {"a", "a", "b", "b", "a", "a", "b", "b"}), *y));

  OpTest b("Resize", 19);
  b.Input(Tensor::FromVector<bool>({2}, {true, false})).AbsentInput().Input(F32({1}, {1.5f}));
  auto yb = RunOne(b);
  ASSERT_TRUE(yb.ok()) << yb.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<bool>({3}, {true, true, false}), *yb));
}

// A channels-last image upsampled in H and W (the quantized layout's FPN upsampling): rows of the
// last axis copied whole. Integer factors under half_pixel and round_prefer_floor pick o / s.
TEST(Resize, NearestKeepsTheLastAxisWhole) {
  const Shape in = {1, 3, 2, 5};
  std::vector<uint8_t> data(30);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  OpTest t("Resize", 19);
  t.Input(Tensor::FromVector<uint8_t>(in, data)).AbsentInput().Input(F32({4}, {1, 2, 3, 1}));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  std::vector<uint8_t> expected;
  for (int64_t h = 0; h < 6; ++h) {
    for (int64_t w = 0; w < 6; ++w) {
      for (int64_t c = 0; c < 5; ++c) expected.push_back(data[((h / 2) * 2 + w / 3) * 5 + c]);
    }
  }
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({1, 6, 6, 5}, expected), *y));
}

TEST(Resize, KeepAspectRatioAndAxes) {
  std::vector<float> data(16);
  for (int i = 0; i < 16; ++i) data[i] = static_cast<float>(i + 1);
  {
    OpTest t("Resize", 18);
    t.Attr("keep_aspect_ratio_policy", std::string("not_larger")).Attr("axes", std::vector<int64_t>{2, 3});
    t.Input(F32({1, 1, 4, 4}, data)).AbsentInput().AbsentInput().Input(I64({2}, {7, 8}));
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_EQ(y->shape(), (Shape{1, 1, 7, 7}));
  }
  {
    OpTest t("Resize", 18);
    t.Attr("keep_aspect_ratio_policy", std::string("not_smaller")).Attr("axes", std::vector<int64_t>{-1, 2});
    t.Input(F32({1, 1, 4, 4}, data)).AbsentInput().AbsentInput().Input(I64({2}, {1, 3}));
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_EQ(y->shape(), (Shape{1, 1, 3, 3}));
  }
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  // One axis 0..3, roi [0.4, 1.2] of (len-1)=3 -> x = 1.2 + o * 2.4 / 2 for 3 outputs: 1.2, 2.4, 3.6 (outside).
  OpTest t("Resize", 13);
  t.Attr("mode", std::string("linear")).Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
  t.Attr("extrapolation_value", 10.0f);
  t.Input(F32({4}, {0, 1, 2, 3})).Input(F32({2}, {0.4f, 1.2f})).AbsentInput().Input(I64({1}, {3}));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({3}, {1.2f, 2.4f, 10}), *y, 1e-5, 1e-5));
}

// ---- a brute-force reference: the ONNX reference algorithm, one output element at a time ----

struct RefOptions {
  std::string mode = "linear";
  std::string coord = "half_pixel";
  double a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
};

double RefCoordinate(const RefOptions& o, double x, double in, double scale, int64_t out_int) {
  const double out = scale * in;
  if (o.coord == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (o.coord == "asymmetric") return x / scale;
  if (o.coord == "align_corners") return out == 1 ? 0 : x * (in - 1) / (out - 1);
  if (o.coord == "pytorch_half_pixel") return out_int > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (o.coord == "half_pixel_symmetric") {
    const double adj = static_cast<double>(out_int) / out;
    return in / 2 * (1 - adj) + (x + 0.5) / scale - 0.5;
  }
  ADD_FAILURE() << o.coord;
  return 0;
}

std::vector<double> RefCoeffs(const RefOptions& o, double ratio, double scale) {
  auto cubic = [&](double x) {
    x = std::abs(x);
    const double A = o.a;
    if (x <= 1) return (A + 2) * x * x * x - (A + 3) * x * x + 1;
    if (x < 2) return A * x * x * x - 5 * A * x * x + 8 * A * x - 4 * A;
    return 0.0;
  };
  std::vector<double> c;
  if (o.mode == "linear" && !o.antialias) return {1 - ratio, ratio};
  if (o.mode == "cubic" && !o.antialias) {
    for (double d : {ratio + 1, ratio, 1 - ratio, 2 - ratio}) c.push_back(cubic(d));
    return c;
  }
  const double s = std::min(scale, 1.0);
  const int start = static_cast<int>(std::floor((o.mode == "linear" ? -1 : -2) / s)) + 1;
  double sum = 0;
  for (int i = start; i < 2 - start; ++i) {
    const double arg = (i - ratio) * s;
    c.push_back(o.mode == "linear" ? std::clamp(1 - std::abs(arg), 0.0, 1.0) : cubic(arg));
    sum += c.back();
  }
  for (auto& v : c) v /= sum;
  return c;
}

// The n indices nearest to x among the edge-padded axis, ties to the smaller one.
std::vector<int64_t> RefNeighbours(double x, int64_t n, int64_t len) {
  const int64_t pad = (n + 1) / 2;
  std::vector<int64_t> all;
  // (Measured without shifting x by the padding, which would round ties away at large x.)
  for (int64_t i = -pad; i < len + pad; ++i) all.push_back(i);
  std::stable_sort(all.begin(), all.end(), [&](int64_t a, int64_t b) {
    const double da = std::abs(x - static_cast<double>(a)), db = std::abs(x - static_cast<double>(b));
    return da != db ? da < db : a < b;
  });
  all.resize(static_cast<size_t>(n));
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<float> ReferenceResize(const std::vector<float>& data, const Shape& in, const Shape& out,
                                   const std::vector<double>& scales, const RefOptions& o) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * in[d + 1];
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
  std::function<double(int64_t, int64_t)> interp = [&](int64_t d, int64_t offset) -> double {
    if (d == rank) return data[offset];
    if (in[d] == out[d] && scales[d] == 1.0) return interp(d + 1, offset + pos[d] * strides[d]);
    const double x = RefCoordinate(o, static_cast<double>(pos[d]), static_cast<double>(in[d]), scales[d], out[d]);
    const double x0 = std::floor(x);
    const double ratio = x == x0 ? 1.0 : x - x0;
    std::vector<double> c = RefCoeffs(o, ratio, scales[d]);
    const auto idx = RefNeighbours(x, static_cast<int64_t>(c.size()), in[d]);
    if (o.exclude_outside) {
      double sum = 0;
      for (size_t k = 0; k < c.size(); ++k) {
        if (idx[k] < 0 || idx[k] >= in[d]) c[k] = 0;
        sum += c[k];
      }
      for (auto& v : c) v /= sum;
    }
    double acc = 0;
    for (size_t k = 0; k < c.size(); ++k) {
      const int64_t i = std::clamp<int64_t>(idx[k], 0, in[d] - 1);
      acc += c[k] * interp(d + 1, offset + i * strides[d]);
    }
    return acc;
  };
  std::vector<float> result;
  int64_t total = 1;
  for (auto v : out) total *= v;
  for (int64_t e = 0; e < total; ++e) {
    int64_t rest = e;
    for (int64_t d = rank - 1; d >= 0; --d) {
      pos[d] = rest % out[d];
      rest /= out[d];
    }
    result.push_back(static_cast<float>(interp(0, 0)));
  }
  return result;
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

TEST(Resize, MatchesReferenceOverModesAndOddSizes) {
  const Shape in = {2, 3, 7, 5};
  const std::vector<float> data = Random(2 * 3 * 7 * 5, 7);
  const std::vector<Shape> outs = {{2, 3, 11, 4}, {2, 3, 3, 9}, {2, 3, 1, 1}, {2, 3, 17, 13}};
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
      for (bool exclude : {false, true}) {
        for (bool antialias : {false, true}) {
          for (const Shape& out : outs) {
            RefOptions o;
            o.mode = mode;
            o.coord = coord;
            o.exclude_outside = exclude;
            o.antialias = antialias;
            std::vector<double> scales;
            for (size_t d = 0; d < in.size(); ++d) {
              scales.push_back(static_cast<double>(out[d]) / static_cast<double>(in[d]));
            }
            OpTest t("Resize", 19);
            t.Attr("mode", std::string(mode)).Attr("coordinate_transformation_mode", std::string(coord));
            t.Attr("exclude_outside", int64_t{exclude}).Attr("antialias", int64_t{antialias});
            t.Input(F32(in, data)).AbsentInput().AbsentInput().Input(I64({4}, out));
            auto y = RunOne(t);
            ASSERT_TRUE(y.ok()) << y.status().ToString();
            const auto expected = ReferenceResize(data, in, out, scales, o);
            EXPECT_TRUE(TensorsNear(F32(out, expected), *y, 1e-4, 1e-5))
                << mode << " " << coord << " exclude=" << exclude << " antialias=" << antialias << " out "
                << ShapeToString(out);
          }
        }
      }
    }
  }
}

TEST(Resize, ThreadedLargeBilinearMatchesSingleThread) {
  const Shape in = {1, 3, 67, 129};
  const Shape out = {1, 3, 131, 257};
  const std::vector<float> data = Random(3 * 67 * 129, 3);
  Tensor results[2];
  for (int threads : {1, 2}) {
    OpTest t("Resize", 19);
    t.Attr("mode", std::string("linear")).Threads(threads);
    t.Input(F32(in, data)).AbsentInput().AbsentInput().Input(I64({4}, out));
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    results[threads - 1] = *y;
  }
  EXPECT_TRUE(TensorsEqual(results[0], results[1]));
  RefOptions o;
  std::vector<double> scales = {1, 1, 131.0 / 67, 257.0 / 129};
  // Float bilinear works out coordinates in float, as ONNX Runtime does (resize_bilinear.h): at
  // coordinate ~130 that is ~4e-6 of a pixel, times gradients of up to 4 per pixel in this data.
  EXPECT_TRUE(TensorsNear(F32(out, ReferenceResize(data, in, out, scales, o)), results[0], 1e-4, 3e-5));
}

TEST(Resize, EveryNumericTypeLinear) {
  // [[10, 20], [30, 40]] upsampled 2x: the half-pixel bilinear result has quarter steps.
  const std::vector<float> expected = {10, 12.5, 17.5, 20, 15, 17.5, 22.5, 25, 25, 27.5, 32.5, 35, 30, 32.5, 37.5, 40};
  auto run = [&](Tensor x) {
    OpTest t("Resize", 19);
    t.Attr("mode", std::string("linear"));
    t.Input(std::move(x)).AbsentInput().Input(F32({2}, {2, 2}));
    return RunOne(t);
  };
  {
    auto y = run(Tensor::FromVector<double>({2, 2}, {10, 20, 30, 40}));
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({4, 4}, std::vector<double>(expected.begin(), expected.end())),
                            *y));
  }
  {
    std::vector<Float16> in, ex;
    for (float v : {10.f, 20.f, 30.f, 40.f}) in.push_back(Float16{FloatToHalf(v)});
    for (float v : expected) ex.push_back(Float16{FloatToHalf(v)});
    auto y = run(Tensor::FromVector<Float16>({2, 2}, in));
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<Float16>({4, 4}, ex), *y, 1e-3, 1e-3));
  }
  {
    std::vector<BFloat16> in, ex;
    for (float v : {10.f, 20.f, 30.f, 40.f}) in.push_back(BFloat16{FloatToBFloat16(v)});
    for (float v : expected) ex.push_back(BFloat16{FloatToBFloat16(v)});
    auto y = run(Tensor::FromVector<BFloat16>({2, 2}, in));
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<BFloat16>({4, 4}, ex), *y, 1e-2, 1e-2));
  }
  {
    // Integers round half to even after interpolating: 12.5 -> 12, 17.5 -> 18, 27.5 -> 28, 32.5 -> 32.
    auto y = run(Tensor::FromVector<int32_t>({2, 2}, {10, 20, 30, 40}));
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({4, 4}, {10, 12, 18, 20, 15, 18, 22, 25, 25, 28, 32, 35, 30,
                                                                   32, 38, 40}),
                             *y));
  }
  {
    auto y = run(Tensor::FromVector<uint8_t>({2, 2}, {0, 255, 255, 0}));
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(y->dtype(), DataType::kUint8);
    EXPECT_EQ(y->data<uint8_t>()[0], 0);
    EXPECT_EQ(y->data<uint8_t>()[3], 255);
  }
}

TEST(Resize, InvalidInputsReturnErrors) {
  const Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  {
    OpTest t("Resize", 19);  // scales of the wrong length
    t.Input(x).AbsentInput().Input(F32({2}, {2, 2}));
    EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "'scales' has 2 values, expected 4 for input shape [1,1,2,2]"));
  }
  {
    OpTest t("Resize", 19);  // negative sizes
    t.Input(x).AbsentInput().AbsentInput().Input(I64({4}, {1, 1, -2, 2}));
    EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "'sizes' [1,1,-2,2] has a negative size"));
  }
  {
    OpTest t("Resize", 19);  // both scales and sizes
    t.Input(x).AbsentInput().Input(F32({4}, {1, 1, 2, 2})).Input(I64({4}, {1, 1, 4, 4}));
    EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "only one of 'scales' and 'sizes' may be given"));
  }
  {
    OpTest t("Resize", 19);  // neither
    t.Input(x);
    EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "one of 'scales' and 'sizes' must be given"));
  }
  {
    OpTest t("Resize", 19);  // zero scale
    t.Input(x).AbsentInput().Input(F32({4}, {1, 1, 0, 2}));
    EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "'scales' value 0.000000 at 2 is not a positive number"));
  }
  {
    OpTest t("Resize", 19);  // roi of the wrong length
    t.Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
    t.Input(x).Input(F32({3}, {0, 0, 1})).Input(F32({4}, {1, 1, 2, 2}));
    EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "'roi' has 3 values, expected 8 (starts then ends of each resized axis)"));
  }
  {
    OpTest t("Resize", 19);  // repeated axis
    t.Attr("axes", std::vector<int64_t>{2, -2});
    t.Input(x).AbsentInput().Input(F32({2}, {2, 2}));
    EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "axes [2,-2] repeats axis -2"));
  }
  {
    OpTest t("Resize", 19);  // bad mode is refused at load
    t.Attr("mode", std::string("area"));
    t.Input(x).AbsentInput().Input(F32({4}, {1, 1, 2, 2}));
    EXPECT_TRUE(Refused(t.Run(RegisterImageKernels), StatusCode::kInvalidArgument, "unknown mode 'area' (expected nearest, linear or cubic)"));
  }
}

// ---- float bilinear in ONNX Runtime's arithmetic (resize_bilinear.h) ----

// ONNX Runtime's formula written out with every product and sum stored to a volatile float, so
// the compiler cannot fuse a multiply and an add into one rounding.
float RoundedBilinear(const std::vector<float>& x, int64_t iw, const image::BilinearAxis& rows,
                      const image::BilinearAxis& cols, int64_t r, int64_t c) {
  volatile float wa = cols.w_lo[c] * rows.w_lo[r], wb = cols.w_hi[c] * rows.w_lo[r];
  volatile float wc = cols.w_lo[c] * rows.w_hi[r], wd = cols.w_hi[c] * rows.w_hi[r];
  volatile float a = wa * x[rows.lo[r] * iw + cols.lo[c]], b = wb * x[rows.lo[r] * iw + cols.hi[c]];
  volatile float cc = wc * x[rows.hi[r] * iw + cols.lo[c]], d = wd * x[rows.hi[r] * iw + cols.hi[c]];
  volatile float s = a + b;
  s = s + cc;
  s = s + d;
  return s;
}

TEST(Resize, BilinearAxisFollowsOnnxRuntimesCoordinates) {
  // 2x up, half_pixel: -0.25 clamps to 0 (all weight on pixel 0), then 0.25, 0.75, ...; the last
  // output's coordinate clamps to the last pixel, where lo == hi and both weigh 0.5.
  const image::BilinearAxis a = image::BuildBilinearAxis(image::CoordinateMode::kHalfPixel, 3, 6, 2.0f);
  EXPECT_EQ(a.lo, (std::vector<int32_t>{0, 0, 0, 1, 1, 2}));
  EXPECT_EQ(a.hi, (std::vector<int32_t>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(a.w_lo, (std::vector<float>{1.0f, 0.75f, 0.25f, 0.75f, 0.25f, 0.5f}));
  EXPECT_EQ(a.w_hi, (std::vector<float>{0.0f, 0.25f, 0.75f, 0.25f, 0.75f, 0.5f}));
  // An unresized axis keeps its coordinates; its last row goes through the 0.5/0.5 rule too.
  const image::BilinearAxis same = image::BuildBilinearAxis(image::CoordinateMode::kHalfPixel, 2, 2, 1.0f);
  EXPECT_EQ(same.w_lo, (std::vector<float>{1.0f, 0.5f}));
  // align_corners 4 -> 3: x * 3 / 2.
  const image::BilinearAxis ac = image::BuildBilinearAxis(image::CoordinateMode::kAlignCorners, 4, 3, 0.75f);
  EXPECT_EQ(ac.lo, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(ac.w_hi, (std::vector<float>{0.0f, 0.5f, 0.5f}));
}

TEST(Resize, FloatBilinearRoundsAsOnnxRuntimeDoes) {
  const Shape in{1, 2, 5, 7};
  const std::vector<float> data = Random(70, 5);
  struct Case {
    const char* mode;
    image::CoordinateMode coordinate;
    int64_t oh, ow;
  };
  for (const Case& c : {Case{"half_pixel", image::CoordinateMode::kHalfPixel, 9, 12},
                        Case{"pytorch_half_pixel", image::CoordinateMode::kPytorchHalfPixel, 10, 3},
                        Case{"asymmetric", image::CoordinateMode::kAsymmetric, 5, 19},
                        Case{"align_corners", image::CoordinateMode::kAlignCorners, 8, 7}}) {
    OpTest t("Resize", 13);
    t.Attr("mode", std::string("linear")).Attr("coordinate_transformation_mode", std::string(c.mode));
    t.Input(F32(in, data)).AbsentInput().AbsentInput().Input(I64({4}, {1, 2, c.oh, c.ow}));
    auto y = RunOne(t);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    const auto rows = image::BuildBilinearAxis(c.coordinate, 5, c.oh, static_cast<float>(c.oh) / 5.0f);
    const auto cols = image::BuildBilinearAxis(c.coordinate, 7, c.ow, static_cast<float>(c.ow) / 7.0f);
    for (int64_t p = 0; p < 2; ++p) {
      const std::vector<float> plane(data.begin() + p * 35, data.begin() + (p + 1) * 35);
      for (int64_t r = 0; r < c.oh; ++r) {
        for (int64_t col = 0; col < c.ow; ++col) {
          const float got = y->data<float>()[(p * c.oh + r) * c.ow + col];
          ASSERT_EQ(got, RoundedBilinear(plane, 7, rows, cols, r, col)) << c.mode << " " << p << " " << r << " " << col;
        }
      }
    }
  }
}

// Upscales (the lanes' columns in one vector's reach: permutes), exact 2x downscales (pairs:
// interleaved loads) and everything else (gathers), in the coordinate modes that shape them.
TEST_P(ResizeRows, BilinearRowHasTheScalarBitsOnEveryTarget) {
  const std::vector<float> pool = Random(2 * 1031, 13);
  for (const auto mode : {image::CoordinateMode::kHalfPixel, image::CoordinateMode::kAsymmetric,
                          image::CoordinateMode::kAlignCorners}) {
    for (int64_t in : {1, 2, 7, 64, 1030, 1031}) {
      for (int64_t out : {1, 5, 16, 32, 33, 128, 515, 2062}) {
        const auto x = image::BuildBilinearAxis(mode, in, out, static_cast<float>(out) / static_cast<float>(in));
        std::vector<float> a(static_cast<size_t>(out)), b(static_cast<size_t>(out));
        image::BilinearRowF32(pool.data(), pool.data() + 1031, 0.375f, 0.625f, x, a.data());
        image::BilinearRowScalar(pool.data(), pool.data() + 1031, 0.375f, 0.625f, x, b.data());
        for (int64_t i = 0; i < out; ++i) {
          ASSERT_EQ(a[i], b[i]) << static_cast<int>(mode) << ": " << in << " -> " << out << " at " << i;
        }
      }
    }
  }
}

// The channel-blocked row (BlockedResize's): each of a pixel's 16 channels has the bits the
// plain row gives that channel's plane, on every target.
TEST_P(ResizeRows, BlockedBilinearRowHasThePlainRowsBits) {
  constexpr int64_t kBlock = 16, kIn = 37;
  const std::vector<float> pool = Random(2 * kIn * kBlock, 17);
  for (int64_t out : {1, 5, 74}) {
    const auto x = image::BuildBilinearAxis(image::CoordinateMode::kPytorchHalfPixel, kIn, out,
                                            static_cast<float>(out) / static_cast<float>(kIn));
    std::vector<float> blocked(static_cast<size_t>(out * kBlock));
    image::BilinearBlockedRowF32(pool.data(), pool.data() + kIn * kBlock, 0.375f, 0.625f, x, kBlock, blocked.data());
    for (int64_t c = 0; c < kBlock; ++c) {
      std::vector<float> lo(kIn), hi(kIn), plain(static_cast<size_t>(out));
      for (int64_t i = 0; i < kIn; ++i) {
        lo[i] = pool[i * kBlock + c];
        hi[i] = pool[(kIn + i) * kBlock + c];
      }
      image::BilinearRowScalar(lo.data(), hi.data(), 0.375f, 0.625f, x, plain.data());
      for (int64_t i = 0; i < out; ++i) ASSERT_EQ(blocked[i * kBlock + c], plain[i]) << out << " at " << i << ", " << c;
    }
  }
}

TEST_P(ResizeRows, SimdMatchesScalarOverSizesAndOffsets) {
  const std::vector<float> pool = Random(4096, 11);
  for (int64_t taps : {1, 2, 3, 4, 7}) {
    for (int64_t n : {1, 3, 17, 1000, 1031}) {
      for (int64_t misalign : {0, 1, 3}) {
        std::vector<const float*> rows;
        std::vector<float> w;
        for (int64_t k = 0; k < taps; ++k) {
          rows.push_back(pool.data() + misalign + k * 5);
          w.push_back(0.25f * static_cast<float>(k + 1) - 0.5f);
        }
        std::vector<float> a(static_cast<size_t>(n + 1)), b(static_cast<size_t>(n + 1));
        image::WeightedRowSum(rows.data(), w.data(), taps, n, a.data() + 1);
        image::WeightedRowSumScalar(rows.data(), w.data(), taps, n, b.data() + 1);
        for (int64_t i = 0; i <= n; ++i) ASSERT_NEAR(a[i], b[i], 1e-5) << taps << " " << n << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace onnxflow
