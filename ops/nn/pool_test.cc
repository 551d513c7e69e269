// MaxPool, AveragePool, LpPool, the global pools, MaxUnpool and MaxRoiPool.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/every_target.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/nn/register.h"

namespace onnxflow {
namespace {

// The float fast path runs on the SIMD rows of pool_rows-inl.h: its tests run on every target.
class PoolFastPath : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(PoolFastPath);

struct Pool2D {
  int64_t kh, kw, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  bool ceil = false, include_pad = false;
};

int64_t OutDim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1, bool ceil) {
  const int64_t span = in + p0 + p1 - ((k - 1) * d + 1);
  int64_t out = ceil ? (span + s - 1) / s + 1 : span / s + 1;
  if (ceil && (out - 1) * s >= in + p0) --out;
  return out;
}

// Plain 2-D reference over one [H, W] plane: max or average.
std::vector<float> Reference(const std::vector<float>& x, int64_t h, int64_t w, const Pool2D& p, bool max,
                             int64_t* oh_out, int64_t* ow_out) {
  const int64_t oh = OutDim(h, p.kh, p.sh, p.dh, p.pt, p.pb, p.ceil);
  const int64_t ow = OutDim(w, p.kw, p.sw, p.dw, p.pl, p.pr, p.ceil);
  *oh_out = oh;
  *ow_out = ow;
  std::vector<float> y;
  for (int64_t i = 0; i < oh; ++i) {
    for (int64_t j = 0; j < ow; ++j) {
      double acc = max ? -INFINITY : 0;
      int64_t count = 0;
      for (int64_t a = 0; a < p.kh; ++a) {
        for (int64_t b = 0; b < p.kw; ++b) {
          const int64_t r = i * p.sh - p.pt + a * p.dh, c = j * p.sw - p.pl + b * p.dw;
          const bool inside = r >= 0 && r < h && c >= 0 && c < w;
          const bool in_padded = r < h + p.pb && c < w + p.pr;
          if (inside) acc = max ? std::max<double>(acc, x[r * w + c]) : acc + x[r * w + c];
          if (inside || (p.include_pad && in_padded)) ++count;
        }
      }
      y.push_back(static_cast<float>(max ? acc : acc / count));
    }
  }
  return y;
}

Result<std::vector<Value>> RunPool(const char* op, const Tensor& x, const Pool2D& p, int outputs = 1) {
  OpTest t(op, 22);
  t.Input(x)
      .Attr("kernel_shape", std::vector<int64_t>{p.kh, p.kw})
      .Attr("strides", std::vector<int64_t>{p.sh, p.sw})
      .Attr("dilations", std::vector<int64_t>{p.dh, p.dw})
      .Attr("pads", std::vector<int64_t>{p.pt, p.pl, p.pb, p.pr})
      .Attr("ceil_mode", int64_t{p.ceil})
      .Outputs(outputs);
  if (std::string(op) == "AveragePool") t.Attr("count_include_pad", int64_t{p.include_pad});
  return t.Run(RegisterNnKernels);
}

TEST(Pool, MaxAndAverageMatchReference) {
  const int64_t h = 9, w = 11;
  std::vector<float> x(h * w);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(i * 1.3f) * 5;
  const Pool2D cases[] = {
      {3, 3},
      {3, 3, 2, 2},
      {2, 3, 2, 1, 1, 1, 1, 1, 0, 1},
      {3, 2, 2, 3, 2, 1, 1, 0, 1, 1, true},
      {2, 2, 2, 2, 1, 1, 1, 1, 1, 1, true, true},
      {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true},
      {4, 4, 3, 3, 2, 2, 0, 0, 0, 0, true},
  };
  for (const Pool2D& p : cases) {
    for (bool max : {true, false}) {
      int64_t oh, ow;
      const std::vector<float> ref = Reference(x, h, w, p, max, &oh, &ow);
      auto out = RunPool(max ? "MaxPool" : "AveragePool", Tensor::FromVector<float>({1, 1, h, w}, x), p);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, oh, ow}, ref), (*out)[0].tensor()))
          << (max ? "max" : "avg") << " k " << p.kh << "x" << p.kw << " ceil " << p.ceil;
    }
  }
}

// The float fast path (no Indices, <= 2-D) against the generic loops (Indices requested, or double).
TEST(Pool, FastPathMatchesGenericPath) {
  for (int64_t w : {1, 5, 17, 40, 67}) {
    const int64_t h = 7;
    std::vector<float> x(2 * h * w);
    std::vector<double> xd(x.size());
    for (size_t i = 0; i < x.size(); ++i) xd[i] = x[i] = std::cos(i * 0.77f) * 3;
    for (const Pool2D& p : {Pool2D{3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, Pool2D{3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true},
                            Pool2D{2, 4, 1, 3, 1, 2, 0, 2, 1, 0, false, true}, Pool2D{1, 3, 1, 1, 1, 2}}) {
      if ((p.kw - 1) * p.dw + 1 > w + p.pl + p.pr) continue;
      auto fast = RunPool("MaxPool", Tensor::FromVector<float>({1, 2, h, w}, x), p);
      auto generic = RunPool("MaxPool", Tensor::FromVector<float>({1, 2, h, w}, x), p, 2);
      ASSERT_TRUE(fast.ok() && generic.ok()) << fast.status().ToString();
      EXPECT_TRUE(TensorsEqual((*generic)[0].tensor(), (*fast)[0].tensor())) << "w " << w;
      auto avg = RunPool("AveragePool", Tensor::FromVector<float>({1, 2, h, w}, x), p);
      auto avg_d = RunPool("AveragePool", Tensor::FromVector<double>({1, 2, h, w}, xd), p);
      ASSERT_TRUE(avg.ok() && avg_d.ok());
      const Tensor& d = (*avg_d)[0].tensor();
      std::vector<float> as_float(d.data<double>(), d.data<double>() + d.size());
      EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(d.shape(), as_float), (*avg)[0].tensor(), 1e-5, 1e-6)) << "w " << w;
    }
  }
}

// The SIMD fast path (pool_rows.h) against the scalar reference over odd widths (the vector tail,
// a single partial vector, whole vectors), pads, ceil_mode, strides 1, 2 and 3, dilations, tall
// kernels (more rows than the SIMD pass combines at once) and both count_include_pad settings.
TEST_P(PoolFastPath, SweepMatchesReference) {
  const Pool2D cases[] = {
      {3, 3, 2, 2},                                      // SqueezeNet / Inception
      {3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true},              // ceil_mode
      {3, 3, 2, 2, 1, 1, 1, 1, 1, 1},                    // ResNet stem
      {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true},        // pads + ceil + include_pad
      {2, 2, 2, 2},                                      // 2x2 stride 2
      {3, 3, 1, 1, 1, 1, 1, 1, 1, 1},                    // Inception branch pool
      {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true},
      {5, 4, 1, 1, 1, 1, 2, 1, 2, 2},                    // asymmetric, even kernel
      {7, 7, 1, 1, 1, 1, 0, 0, 1, 1},                    // Inception head average pool pads
      {1, 3, 1, 2, 1, 2, 0, 1, 0, 1},                    // dilation along the row, stride 2
      {2, 3, 2, 2, 2, 2, 1, 2, 0, 1, true},              // dilation both ways, stride 2
      {3, 3, 3, 3, 1, 1, 1, 1, 1, 1, true},              // stride 3: element-by-element columns
      {10, 2, 1, 2, 1, 1, 2, 0, 2, 1},                   // 10 rows: folded in two groups
  };
  for (int64_t w : {1, 2, 3, 7, 17, 111, 112}) {
    for (int64_t h : {1, 4, 11}) {
      std::vector<float> x(3 * h * w);
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(i * 0.61f + 0.3f) * 4;
      for (const Pool2D& p : cases) {
        if ((p.kw - 1) * p.dw + 1 > w + p.pl + p.pr || (p.kh - 1) * p.dh + 1 > h + p.pt + p.pb) continue;
        for (bool max : {true, false}) {
          int64_t oh, ow;
          std::vector<float> ref;
          for (int64_t c = 0; c < 3; ++c) {
            const std::vector<float> plane(x.begin() + c * h * w, x.begin() + (c + 1) * h * w);
            const std::vector<float> r = Reference(plane, h, w, p, max, &oh, &ow);
            ref.insert(ref.end(), r.begin(), r.end());
          }
          auto out = RunPool(max ? "MaxPool" : "AveragePool", Tensor::FromVector<float>({1, 3, h, w}, x), p);
          ASSERT_TRUE(out.ok()) << out.status().ToString();
          EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 3, oh, ow}, ref), (*out)[0].tensor(), 1e-5, 1e-5))
              << (max ? "max" : "avg") << " h " << h << " w " << w << " k " << p.kh << "x" << p.kw << " s " << p.sh
              << "x" << p.sw << " d " << p.dh << "x" << p.dw << " ceil " << p.ceil << " include_pad " << p.include_pad;
        }
      }
    }
  }
}

// 1-D pools take the same fast path (one row per plane).
TEST_P(PoolFastPath, OneDimensionalMatchesReference) {
  for (int64_t w : {1, 2, 3, 7, 17, 111, 112}) {
    std::vector<float> x(2 * w);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(i * 1.7f) * 3;
    for (bool max : {true, false}) {
      for (int64_t stride : {1, 2}) {
        if (w + 2 < 3) continue;
        OpTest t(max ? "MaxPool" : "AveragePool", 22);
        t.Input(Tensor::FromVector<float>({1, 2, w}, x))
            .Attr("kernel_shape", std::vector<int64_t>{3})
            .Attr("strides", std::vector<int64_t>{stride})
            .Attr("pads", std::vector<int64_t>{1, 1});
        auto out = t.Run(RegisterNnKernels);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        const Pool2D p{1, 3, 1, stride, 1, 1, 0, 1, 0, 1};
        int64_t oh, ow;
        std::vector<float> ref;
        for (int64_t c = 0; c < 2; ++c) {
          const std::vector<float> plane(x.begin() + c * w, x.begin() + (c + 1) * w);
          const std::vector<float> r = Reference(plane, 1, w, p, max, &oh, &ow);
          ref.insert(ref.end(), r.begin(), r.end());
        }
        EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 2, ow}, ref), (*out)[0].tensor(), 1e-5, 1e-5))
            << (max ? "max" : "avg") << " w " << w << " stride " << stride;
      }
    }
  }
}

// Split over two threads by output rows of all planes: the same result as one thread.
TEST(Pool, FastPathTwoThreadsMatchesOne) {
  const int64_t c = 24, h = 57, w = 57;
  std::vector<float> x(c * h * w);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(i * 0.113f) * 7;
  for (const char* op : {"MaxPool", "AveragePool"}) {
    std::vector<Tensor> outs;
    for (int threads : {1, 2}) {
      OpTest t(op, 22);
      t.Input(Tensor::FromVector<float>({2, c / 2, h, w}, x))
          .Attr("kernel_shape", std::vector<int64_t>{3, 3})
          .Attr("strides", std::vector<int64_t>{2, 2})
          .Attr("pads", std::vector<int64_t>{1, 1, 1, 1})
          .Threads(threads);
      auto out = t.Run(RegisterNnKernels);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      outs.push_back((*out)[0].tensor());
    }
    EXPECT_TRUE(TensorsEqual(outs[0], outs[1])) << op;
  }
}

TEST(Pool, MaxIndicesRowAndColumnMajor) {
  // One image of 2 channels, 2x3: argmax positions checked by hand.
  const Tensor x = Tensor::FromVector<float>({1, 2, 2, 3}, {1, 9, 2, 3, 4, 8, 7, 0, 1, 2, 3, 6});
  for (int64_t order : {0, 1}) {
    OpTest t("MaxPool", 12);
    t.Input(x).Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("storage_order", order).Outputs(2);
    auto out = t.Run(RegisterNnKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 2, 1, 2}, {9, 9, 7, 6}), (*out)[0].tensor()));
    // Channel 0: 9 at (0,1); the second window's max is also that 9. Channel 1: 7 at (0,0), 6 at (1,2).
    const std::vector<int64_t> expected = order == 0 ? std::vector<int64_t>{1, 1, 6, 11}
                                                     : std::vector<int64_t>{2, 2, 6, 11};
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({1, 2, 1, 2}, expected), (*out)[1].tensor())) << order;
  }
}

TEST(Pool, AutoPadAnd1DAnd3D) {
  // SAME_UPPER, 1-D: input 5, kernel 2, stride 2 -> out 3, pads [0, 1].
  OpTest t("MaxPool", 22);
  t.Input(Tensor::FromVector<float>({1, 1, 5}, {1, 5, 2, 4, 3}))
      .Attr("kernel_shape", std::vector<int64_t>{2}).Attr("strides", std::vector<int64_t>{2}).Attr("auto_pad", std::string("SAME_UPPER"));
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 3}, {5, 4, 3}), (*out)[0].tensor()));
  OpTest lower("AveragePool", 22);
  lower.Input(Tensor::FromVector<float>({1, 1, 5}, {1, 5, 2, 4, 3}))
      .Attr("kernel_shape", std::vector<int64_t>{2}).Attr("strides", std::vector<int64_t>{2}).Attr("auto_pad", std::string("SAME_LOWER"));
  auto lo = lower.Run(RegisterNnKernels);
  ASSERT_TRUE(lo.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, 3}, {1, 3.5f, 3.5f}), (*lo)[0].tensor()));
  // 3-D 2x2x2 average of 0..7 is 3.5.
  std::vector<float> v(8);
  for (int i = 0; i < 8; ++i) v[i] = i;
  OpTest t3("AveragePool", 22);
  t3.Input(Tensor::FromVector<float>({1, 1, 2, 2, 2}, v)).Attr("kernel_shape", std::vector<int64_t>{2, 2, 2});
  auto o3 = t3.Run(RegisterNnKernels);
  ASSERT_TRUE(o3.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, 1, 1, 1}, {3.5f}), (*o3)[0].tensor()));
}

// 8-bit max pooling runs through the float rows: the same bytes as the float pool of the same
// values, with padding, strides, dilation and ceil_mode, for int8 and uint8, and with Indices.
TEST(Pool, MaxPoolOfBytesEqualsTheFloatPool) {
  std::vector<uint8_t> u(2 * 3 * 9 * 11);
  std::vector<int8_t> s(u.size());
  std::vector<float> fu(u.size()), fs(u.size());
  for (size_t i = 0; i < u.size(); ++i) {
    u[i] = static_cast<uint8_t>((i * 73 + 11) % 256);
    s[i] = static_cast<int8_t>(static_cast<int>(u[i]) - 128);
    fu[i] = u[i];
    fs[i] = s[i];
  }
  const Shape shape = {2, 3, 9, 11};
  for (int with_indices : {0, 1}) {
    for (int ceil : {0, 1}) {
      auto pool = [&](Tensor x) {
        OpTest t("MaxPool", 12);
        t.Input(std::move(x)).Attr("kernel_shape", std::vector<int64_t>{3, 3})
            .Attr("strides", std::vector<int64_t>{2, 2}).Attr("pads", std::vector<int64_t>{1, 0, 1, 1})
            .Attr("dilations", std::vector<int64_t>{1, 2}).Attr("ceil_mode", int64_t{ceil});
        if (with_indices) t.Outputs(2);
        auto out = t.Run(RegisterNnKernels);
        EXPECT_TRUE(out.ok()) << out.status().ToString();
        return (*out)[0].tensor();
      };
      const Tensor yu = pool(Tensor::FromVector<uint8_t>(shape, u)), yfu = pool(Tensor::FromVector<float>(shape, fu));
      const Tensor ys = pool(Tensor::FromVector<int8_t>(shape, s)), yfs = pool(Tensor::FromVector<float>(shape, fs));
      ASSERT_EQ(yu.shape(), yfu.shape());
      for (int64_t i = 0; i < yu.size(); ++i) {
        ASSERT_EQ(float(yu.data<uint8_t>()[i]), yfu.data<float>()[i]) << i;
        ASSERT_EQ(float(ys.data<int8_t>()[i]), yfs.data<float>()[i]) << i;
      }
    }
  }
}

TEST(Pool, MaxPoolIntegerAndHalfTypes) {
  OpTest t("MaxPool", 12);
  t.Input(Tensor::FromVector<int8_t>({1, 1, 2, 2}, {-5, -3, -7, -4})).Attr("kernel_shape", std::vector<int64_t>{2, 2});
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int8_t>({1, 1, 1, 1}, {-3}), (*out)[0].tensor()));
  OpTest u("MaxPool", 12);
  u.Input(Tensor::FromVector<uint8_t>({1, 1, 3}, {200, 7, 255})).Attr("kernel_shape", std::vector<int64_t>{2});
  auto uo = u.Run(RegisterNnKernels);
  ASSERT_TRUE(uo.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({1, 1, 2}, {200, 255}), (*uo)[0].tensor()));
  OpTest h("AveragePool", 22);
  h.Input(Tensor::FromVector<Float16>({1, 1, 2}, {Float16{FloatToHalf(1)}, Float16{FloatToHalf(2)}}))
      .Attr("kernel_shape", std::vector<int64_t>{2});
  auto ho = h.Run(RegisterNnKernels);
  ASSERT_TRUE(ho.ok());
  EXPECT_EQ(HalfToFloat((*ho)[0].tensor().data<Float16>()[0].bits), 1.5f);
}

TEST(Pool, LpPool) {
  OpTest t("LpPool", 22);
  t.Input(Tensor::FromVector<float>({1, 1, 4}, {3, 4, 1, 0})).Attr("kernel_shape", std::vector<int64_t>{2})
      .Attr("strides", std::vector<int64_t>{2});
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, 2}, {5, 1}), (*out)[0].tensor()));
  OpTest p1("LpPool", 22);
  p1.Input(Tensor::FromVector<float>({1, 1, 2}, {-3, 4})).Attr("kernel_shape", std::vector<int64_t>{2}).Attr("p", int64_t{1});
  auto o1 = p1.Run(RegisterNnKernels);
  ASSERT_TRUE(o1.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, 1}, {7}), (*o1)[0].tensor()));
}

TEST(Pool, Errors) {
  OpTest no_kernel("MaxPool", 22);
  no_kernel.Input(Tensor::FromVector<float>({1, 1, 2}, {1, 2}));
  EXPECT_TRUE(Refused(no_kernel.Run(RegisterNnKernels), StatusCode::kInvalidArgument, "attribute 'kernel_shape' is required"));
  OpTest rank("MaxPool", 22);
  rank.Input(Tensor::FromVector<float>({1, 2}, {1, 2})).Attr("kernel_shape", std::vector<int64_t>{2});
  EXPECT_TRUE(Refused(rank.Run(RegisterNnKernels), StatusCode::kInvalidArgument, "input shape [1,2] does not match a 1-D kernel (expected [N, C] + 1 spatial dims)"));
  OpTest big("AveragePool", 22);  // two strides short: ONNX Runtime refuses it too
  big.Input(Tensor::FromVector<float>({1, 1, 2}, {1, 2})).Attr("kernel_shape", std::vector<int64_t>{4});
  EXPECT_TRUE(Refused(big.Run(RegisterNnKernels), StatusCode::kInvalidArgument, "pooling window 4 is larger than padded input dim 2"));
  OpTest ints("AveragePool", 22);
  ints.Input(Tensor::FromVector<int32_t>({1, 1, 2}, {1, 2})).Attr("kernel_shape", std::vector<int64_t>{2});
  EXPECT_TRUE(Refused(ints.Run(RegisterNnKernels), StatusCode::kUnimplemented, "type int32 is not supported here"));
}

// A window longer than the padded input by less than a stride has one output, over the input it
// covers, as ONNX Runtime computes it (ONNX's formula gives none): PP-OCR's direction classifier
// pools 2 x 2 by 2 a map 1 high. Short by one stride or more, up to two: an empty output. Values
// and shapes are ONNX Runtime 1.30's for the same nodes.
TEST(Pool, WindowLongerThanTheInputByLessThanAStride) {
  const Tensor x = Tensor::FromVector<float>({1, 1, 1, 3}, {4, -1, 6});
  struct Case {
    const char* op;
    std::vector<int64_t> kernel, strides, pads;
    int64_t ceil_mode, include_pad;
    Shape shape;
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      {"MaxPool", {2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 0, {1, 1, 1, 1}, {4}},
      {"MaxPool", {2, 2}, {2, 2}, {0, 0, 0, 0}, 1, 0, {1, 1, 1, 2}, {4, 6}},
      {"AveragePool", {2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 0, {1, 1, 1, 1}, {1.5f}},
      // Padded by 1: the window covers all 3 inputs, 3 rows x 4 columns of the padded input.
      {"AveragePool", {4, 4}, {2, 2}, {1, 1, 1, 1}, 0, 1, {1, 1, 1, 1}, {9.0f / 12}},
      {"AveragePool", {4, 4}, {2, 2}, {1, 1, 1, 1}, 0, 0, {1, 1, 1, 1}, {3}},
      {"MaxPool", {4, 4}, {2, 2}, {1, 1, 1, 1}, 0, 0, {1, 1, 1, 1}, {6}},
      {"MaxPool", {3, 1}, {2, 1}, {0, 0, 0, 0}, 0, 0, {1, 1, 0, 3}, {}},  // short by a whole stride
      {"LpPool", {2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 0, {1, 1, 1, 1}, {std::sqrt(17.0f)}},
  };
  for (const Case& c : cases) {
    OpTest t(c.op, 19);
    t.Input(x).Attr("kernel_shape", c.kernel).Attr("strides", c.strides).Attr("pads", c.pads);
    if (std::string(c.op) != "LpPool") t.Attr("ceil_mode", c.ceil_mode);
    if (std::string(c.op) == "AveragePool") t.Attr("count_include_pad", c.include_pad);
    auto out = t.Run(RegisterNnKernels);
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status().ToString();
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(c.shape, c.want), (*out)[0].tensor(), 1e-6, 1e-6))
        << c.op << " kernel " << c.kernel[0] << " ceil_mode " << c.ceil_mode << " include_pad " << c.include_pad;
  }
}

// Hostile geometries: a window of 2^40 taps over pads as long (taps are counted in closed form,
// not walked: this hung), and dilations or pads whose extents pass INT64_MAX (they wrapped).
TEST(Pool, HugeWindowsAndOverflowingAttributes) {
  const int64_t t40 = int64_t{1} << 40;
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OpTest t(op, 22);
    t.Input(Tensor::FromVector<float>({1, 1, 3}, {1, 5, 2}))
        .Attr("kernel_shape", std::vector<int64_t>{t40}).Attr("strides", std::vector<int64_t>{t40})
        .Attr("pads", std::vector<int64_t>{t40 - 1, t40});
    auto out = t.Run(RegisterNnKernels);
    ASSERT_TRUE(out.ok()) << op << ": " << out.status().ToString();
    // Window 0 covers [1 - 2^40, 1): element 0; window 1 covers [1, 2^40 + 1): elements 1 and 2.
    const std::vector<float> want = std::string(op) == "MaxPool" ? std::vector<float>{1, 5} : std::vector<float>{1, 3.5f};
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1, 2}, want), (*out)[0].tensor())) << op;
  }
  OpTest dilated("MaxPool", 22);
  dilated.Input(Tensor::FromVector<float>({1, 1, 2}, {1, 2}))
      .Attr("kernel_shape", std::vector<int64_t>{3}).Attr("dilations", std::vector<int64_t>{int64_t{1} << 62});
  EXPECT_TRUE(Refused(dilated.Run(RegisterNnKernels), StatusCode::kInvalidArgument,
                      "attribute 'dilations' (4611686018427387904) makes the pooling window on spatial axis 0 longer than any input"));
  OpTest padded("AveragePool", 22);
  padded.Input(Tensor::FromVector<float>({1, 1, 2}, {1, 2}))
      .Attr("kernel_shape", std::vector<int64_t>{2}).Attr("pads", std::vector<int64_t>{INT64_MAX, 1});
  EXPECT_TRUE(Refused(padded.Run(RegisterNnKernels), StatusCode::kInvalidArgument,
                      "attribute 'pads' (9223372036854775807, 1) on spatial axis 0 makes the padded input longer than any tensor"));
  OpTest ceil("MaxPool", 22);  // ceil_mode's last window: stride * (count - 1) would pass INT64_MAX
  ceil.Input(Tensor::FromVector<float>({1, 1, 3}, {1, 5, 2}))
      .Attr("kernel_shape", std::vector<int64_t>{2}).Attr("strides", std::vector<int64_t>{INT64_MAX})
      .Attr("ceil_mode", int64_t{1});
  auto c = ceil.Run(RegisterNnKernels);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 1}, {5}), (*c)[0].tensor()));
}

TEST(GlobalPool, AverageMaxLp) {
  std::vector<float> x(2 * 3 * 37);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(i * 0.9f) * 4;
  std::vector<float> avg(6), mx(6), lp(6);
  for (int p = 0; p < 6; ++p) {
    double s = 0, m = -INFINITY, q = 0;
    for (int i = 0; i < 37; ++i) { s += x[p * 37 + i]; m = std::max<double>(m, x[p * 37 + i]); q += x[p * 37 + i] * x[p * 37 + i]; }
    avg[p] = s / 37; mx[p] = m; lp[p] = std::sqrt(q);
  }
  struct Case { const char* op; const std::vector<float>* expected; };
  for (const Case& c : {Case{"GlobalAveragePool", &avg}, Case{"GlobalMaxPool", &mx}, Case{"GlobalLpPool", &lp}}) {
    OpTest t(c.op, 22);
    t.Input(Tensor::FromVector<float>({2, 3, 37, 1}, x));
    auto out = t.Run(RegisterNnKernels);
    ASSERT_TRUE(out.ok()) << c.op;
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 3, 1, 1}, *c.expected), (*out)[0].tensor(), 1e-5, 1e-5)) << c.op;
  }
  OpTest d("GlobalAveragePool", 22);
  d.Input(Tensor::FromVector<double>({1, 1, 2}, {1, 4}));
  auto dout = d.Run(RegisterNnKernels);
  ASSERT_TRUE(dout.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<double>({1, 1, 1}, {2.5}), (*dout)[0].tensor()));
}

TEST(MaxUnpool, ScattersAndPadsToOutputShape) {
  OpTest t("MaxUnpool", 22);
  t.Input(Tensor::FromVector<float>({1, 1, 1, 2}, {5, 6}))
      .Input(Tensor::FromVector<int64_t>({1, 1, 1, 2}, {1, 3}))
      .Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("strides", std::vector<int64_t>{2, 2});
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 2, 4}, {0, 5, 0, 6, 0, 0, 0, 0}), (*out)[0].tensor()));
  OpTest shaped("MaxUnpool", 22);
  shaped.Input(Tensor::FromVector<float>({1, 1, 1, 2}, {5, 6}))
      .Input(Tensor::FromVector<int64_t>({1, 1, 1, 2}, {1, 7}))
      .Input(Tensor::FromVector<int64_t>({4}, {1, 1, 3, 5}))
      .Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("strides", std::vector<int64_t>{2, 2});
  auto so = shaped.Run(RegisterNnKernels);
  ASSERT_TRUE(so.ok()) << so.status().ToString();
  std::vector<float> expected(15, 0);
  expected[1] = 5;
  expected[5 + 3] = 6;
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 3, 5}, expected), (*so)[0].tensor()));
  OpTest bad("MaxUnpool", 22);
  bad.Input(Tensor::FromVector<float>({1, 1, 1, 2}, {5, 6}))
      .Input(Tensor::FromVector<int64_t>({1, 1, 1, 2}, {1, 8}))
      .Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(bad.Run(RegisterNnKernels).status().code(), StatusCode::kOutOfRange);
}

TEST(MaxRoiPool, BinsOfARegion) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = i;
  OpTest t("MaxRoiPool", 22);
  t.Input(Tensor::FromVector<float>({1, 1, 4, 4}, x))
      .Input(Tensor::FromVector<float>({1, 5}, {0, 0, 0, 3, 3}))
      .Attr("pooled_shape", std::vector<int64_t>{2, 2});
  auto out = t.Run(RegisterNnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 2, 2}, {5, 7, 13, 15}), (*out)[0].tensor()));
  OpTest bad("MaxRoiPool", 22);
  bad.Input(Tensor::FromVector<float>({1, 1, 4, 4}, x))
      .Input(Tensor::FromVector<float>({1, 5}, {3, 0, 0, 3, 3}))
      .Attr("pooled_shape", std::vector<int64_t>{2, 2});
  EXPECT_EQ(bad.Run(RegisterNnKernels).status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace onnxflow
