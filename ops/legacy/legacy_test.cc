// The experimental ops of opsets 1-9, worked by hand; plus the experimental ThresholdedRelu and
// DynamicSlice (registered with their modern kernels) and com.microsoft GridSample.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/domains.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/register_all.h"

namespace onnxflow {
namespace {

Tensor F32(Shape shape, std::vector<float> v) { return Tensor::FromVector<float>(std::move(shape), v); }

Result<Tensor> RunOne(OpTest& t) {
  auto out = t.Run(RegisterAllKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

TEST(Legacy, AffineAndScale) {
  OpTest affine("Affine", 8);
  affine.Attr("alpha", 2.0f).Attr("beta", 1.0f).Input(F32({3}, {1, -2, 0.5f}));
  auto y = RunOne(affine);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({3}, {3, -3, 2}), *y));

  OpTest identity("Affine", 1);  // alpha 1, beta 0 by default
  identity.Input(F32({2}, {4, -5}));
  y = RunOne(identity);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({2}, {4, -5}), *y));

  OpTest scale("Scale", 9);
  scale.Attr("scale", 3.0f).Input(Tensor::FromVector<double>({2}, {1.5, -2}));
  y = RunOne(scale);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({2}, {4.5, -6}), *y));
}

TEST(Legacy, ImageScalerScalesAndBiasesEachChannel) {
  OpTest t("ImageScaler", 8);
  t.Attr("scale", 2.0f).Attr("bias", std::vector<float>{1, -1}).Input(F32({1, 2, 1, 2}, {1, 2, 3, 4}));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({1, 2, 1, 2}, {3, 5, 5, 7}), *y));

  // Half in, half out, computed in float.
  std::vector<Float16> half;
  for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) half.push_back(Float16{FloatToHalf(v)});
  OpTest h("ImageScaler", 7);
  h.Attr("scale", 0.5f).Attr("bias", std::vector<float>{0, 10}).Input(Tensor::FromVector<Float16>({1, 2, 2, 1}, half));
  y = RunOne(h);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->dtype(), DataType::kFloat16);
  const float want[] = {0.5f, 1.0f, 11.5f, 12.0f};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(HalfToFloat(y->data<Float16>()[i].bits), want[i]) << i;

  OpTest no_bias("ImageScaler", 8);  // bias left out: zeros
  no_bias.Attr("scale", 3.0f).Input(F32({1, 1, 1, 2}, {1, 2}));
  y = RunOne(no_bias);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 2}, {3, 6}), *y));

  OpTest wrong("ImageScaler", 8);
  wrong.Attr("bias", std::vector<float>{1, 2, 3}).Input(F32({1, 2, 1, 1}, {1, 2}));
  EXPECT_NE(RunOne(wrong).status().message().find("3 values for 2 channels"), std::string::npos);
  OpTest rank3("ImageScaler", 8);
  rank3.Input(F32({2, 1, 1}, {1, 2}));
  EXPECT_FALSE(RunOne(rank3).ok());
}

TEST(Legacy, ParametricSoftplusAndScaledTanh) {
  OpTest sp("ParametricSoftplus", 9);
  sp.Attr("alpha", 2.0f).Attr("beta", 0.5f).Input(F32({3}, {0, 400, -400}));
  auto y = RunOne(sp);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  // 2 ln 2; 2 * (200 + ln(1 + e^-200)) = 400 with no overflow of e^200; 2 ln(1 + e^-200) = 0.
  EXPECT_TRUE(TensorsNear(F32({3}, {2 * std::log(2.0f), 400, 0}), *y));

  OpTest th("ScaledTanh", 9);
  th.Attr("alpha", 2.0f).Attr("beta", 0.5f).Input(F32({2}, {2, -2}));
  y = RunOne(th);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({2}, {2 * std::tanh(1.0f), -2 * std::tanh(1.0f)}), *y));

  // ONNX Runtime builds neither without both attributes; neither do we, and we say which.
  OpTest missing("ScaledTanh", 9);
  missing.Attr("alpha", 2.0f).Input(F32({1}, {1}));
  auto status = RunOne(missing).status();
  EXPECT_NE(status.message().find("'beta' is required"), std::string::npos) << status.ToString();
}

TEST(Legacy, CropDropsBordersOrCutsAWindow) {
  std::vector<float> v(20);
  for (int i = 0; i < 20; ++i) v[i] = static_cast<float>(i);
  const Tensor x = F32({1, 1, 4, 5}, v);
  OpTest borders("Crop", 8);
  borders.Attr("border", std::vector<int64_t>{1, 1, 1, 1}).Input(x);
  auto y = RunOne(borders);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({1, 1, 2, 3}, {6, 7, 8, 11, 12, 13}), *y));

  OpTest window("Crop", 8);  // 2 x 2 from (top 2, left 3)
  window.Attr("border", std::vector<int64_t>{3, 2, 0, 0}).Attr("scale", std::vector<int64_t>{2, 2}).Input(x);
  y = RunOne(window);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({1, 1, 2, 2}, {13, 14, 18, 19}), *y));

  OpTest ints("Crop", 8);  // the data only moves: any fixed-size type
  ints.Attr("border", std::vector<int64_t>{0, 1, 0, 0}).Input(Tensor::FromVector<int32_t>({1, 1, 2, 1}, {5, 9}));
  y = RunOne(ints);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->data<int32_t>()[0], 9);

  OpTest too_big("Crop", 8);
  too_big.Attr("border", std::vector<int64_t>{0, 3, 0, 0}).Attr("scale", std::vector<int64_t>{2, 1}).Input(x);
  EXPECT_NE(RunOne(too_big).status().message().find("does not fit"), std::string::npos);
  OpTest huge("Crop", 8);  // borders near INT64_MAX must not wrap into a small sum
  huge.Attr("border", std::vector<int64_t>{0, 2, 0, INT64_MAX - 1}).Input(x);
  EXPECT_NE(RunOne(huge).status().message().find("exceed the height"), std::string::npos);
  OpTest three("Crop", 8);
  three.Attr("border", std::vector<int64_t>{1, 1, 1}).Input(x);
  EXPECT_NE(RunOne(three).status().message().find("4 values"), std::string::npos);
}

TEST(Legacy, ExperimentalThresholdedReluAndDynamicSlice) {
  OpTest relu("ThresholdedRelu", 9);
  relu.Attr("alpha", 1.5f).Input(F32({3}, {1, 1.5f, 2}));
  auto y = RunOne(relu);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({3}, {0, 0, 2}), *y));

  const Tensor data = F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  OpTest slice("DynamicSlice", 9);  // Slice-10's inputs, at an opset where Slice takes attributes
  slice.Input(data).Input(Tensor::FromVector<int64_t>({2}, {1, 0})).Input(Tensor::FromVector<int64_t>({2}, {2, 3}));
  y = RunOne(slice);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({1, 3}, {5, 6, 7}), *y));

  OpTest axes("DynamicSlice", 9);
  axes.Input(data)
      .Input(Tensor::FromVector<int32_t>({1}, {1}))
      .Input(Tensor::FromVector<int32_t>({1}, {1000}))
      .Input(Tensor::FromVector<int32_t>({1}, {1}));
  y = RunOne(axes);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({2, 3}, {2, 3, 4, 6, 7, 8}), *y));
}

TEST(Legacy, GoneFromOpset10) {
  // ONNX deprecated them at opset 10: a model importing 10 or later cannot use them.
  for (const char* op : {"Affine", "Scale", "ImageScaler", "ParametricSoftplus", "ScaledTanh", "Crop", "DynamicSlice"}) {
    OpTest t(op, 10);
    t.Input(F32({1, 1, 1, 1}, {1}));
    EXPECT_FALSE(RunOne(t).ok()) << op;
  }
}

TEST(Legacy, MicrosoftGridSampleIsGridSample16) {
  std::vector<float> image(2 * 3 * 4), grid(2 * 3 * 2);
  for (size_t i = 0; i < image.size(); ++i) image[i] = std::sin(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < grid.size(); ++i) grid[i] = std::cos(1.3f * static_cast<float>(i)) * 1.2f;
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (int64_t align : {0, 1}) {
        auto run = [&](int opset, const char* domain) {
          OpTest t("GridSample", opset, domain);
          t.Attr("mode", std::string(mode)).Attr("padding_mode", std::string(padding)).Attr("align_corners", align);
          t.Input(F32({1, 2, 3, 4}, image)).Input(F32({1, 2, 3, 2}, grid));
          return RunOne(t);
        };
        auto ms = run(1, kMsDomain);
        auto onnx = run(16, "");
        ASSERT_TRUE(ms.ok()) << ms.status().ToString();
        ASSERT_TRUE(onnx.ok()) << onnx.status().ToString();
        EXPECT_TRUE(TensorsNear(*onnx, *ms, 0, 0)) << mode << " " << padding << " " << align;
      }
    }
  }
  OpTest defaults("GridSample", 1, kMsDomain);  // bilinear, zeros, align_corners 0
  defaults.Input(F32({1, 1, 2, 2}, {1, 2, 3, 4})).Input(F32({1, 1, 1, 2}, {0, 0}));
  auto y = RunOne(defaults);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(F32({1, 1, 1, 1}, {2.5f}), *y));
}

}  // namespace
}  // namespace onnxflow
