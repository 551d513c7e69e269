#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "ops/cast/small_float.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/quant/register.h"

namespace onnxflow {
namespace {

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

Result<Tensor> RunOne(OpTest& test) {
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> out, test.Run(RegisterQuantKernels));
  return out[0].tensor();
}

TEST(QuantizeLinear, PerTensorUint8Saturates) {
  OpTest test("QuantizeLinear", 10);
  test.Input(Tensor::FromVector<float>({6}, {0, 2, 3, 1000, -254, -1000}))
      .Input(Tensor::Scalar<float>(2))
      .Input(Tensor::Scalar<uint8_t>(128));
  auto y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Values<uint8_t>(*y), (std::vector<uint8_t>{128, 129, 130, 255, 1, 0}));
}

TEST(QuantizeLinear, RoundsHalfToEvenAndDefaultsToUint8) {
  OpTest test("QuantizeLinear", 13);
  test.Input(Tensor::FromVector<float>({5}, {1, 3, 5, 7, -1})).Input(Tensor::Scalar<float>(2));
  auto y = RunOne(test);
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->dtype(), DataType::kUint8);
  EXPECT_EQ(Values<uint8_t>(*y), (std::vector<uint8_t>{0, 2, 2, 4, 0}));
  OpTest signed_test("QuantizeLinear", 13);
  signed_test.Input(Tensor::FromVector<float>({4}, {-1, -3, -5, 255}))
      .Input(Tensor::Scalar<float>(2))
      .Input(Tensor::Scalar<int8_t>(0));
  auto s = RunOne(signed_test);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Values<int8_t>(*s), (std::vector<int8_t>{0, -2, -2, 127}));
}

TEST(QuantizeLinear, PerAxisNegativeAxis) {
  OpTest test("QuantizeLinear", 13);
  test.Input(Tensor::FromVector<float>({2, 3}, {2, 4, 10, -2, -4, -10}))
      .Input(Tensor::FromVector<float>({3}, {1, 2, 5}))
      .Input(Tensor::FromVector<int8_t>({3}, {0, 1, -1}))
      .Attr("axis", int64_t{-1});
  auto y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Values<int8_t>(*y), (std::vector<int8_t>{2, 3, 1, -2, -1, -3}));
  OpTest bad("QuantizeLinear", 13);
  bad.Input(Tensor::FromVector<float>({2, 3}, {0, 0, 0, 0, 0, 0})).Input(Tensor::FromVector<float>({2}, {1, 1}));
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "scale shape [2] must be a scalar or 1-D of length 3 (x.shape[1]) for x of shape [2,3]"));  // axis 1 has 3 entries
}

TEST(QuantizeLinear, BlockedWithRemainderBlock) {
  // x [2, 5], axis 1, block 2: scales [2, 3]; the last block has one element.
  OpTest test("QuantizeLinear", 21);
  test.Input(Tensor::FromVector<float>({2, 5}, {1, 2, 3, 4, 5, 10, 20, 30, 40, 50}))
      .Input(Tensor::FromVector<float>({2, 3}, {1, 2, 5, 10, 20, 50}))
      .Attr("axis", int64_t{1})
      .Attr("block_size", int64_t{2})
      .Attr("output_dtype", static_cast<int64_t>(DataType::kInt16));
  auto y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->dtype(), DataType::kInt16);
  EXPECT_EQ(Values<int16_t>(*y), (std::vector<int16_t>{1, 2, 2, 2, 1, 1, 2, 2, 2, 1}));
  OpTest bad("QuantizeLinear", 21);
  bad.Input(Tensor::FromVector<float>({2, 5}, std::vector<float>(10, 1.f)))
      .Input(Tensor::FromVector<float>({2, 2}, {1, 1, 1, 1}))
      .Attr("block_size", int64_t{2});
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "scale shape [2,2] does not fit blocked quantization of x [2,5] with axis 1 and block_size 2"));
}

TEST(QuantizeLinear, SubByteAndFloat8Targets) {
  OpTest i4("QuantizeLinear", 21);
  i4.Input(Tensor::FromVector<float>({4}, {-30, 4.8f, 13, 2.5f}))
      .Input(Tensor::Scalar<float>(2))
      .Input(Tensor::FromVector<Int4>({1}, {Int4{1}}));
  auto y4 = RunOne(i4);
  ASSERT_TRUE(y4.ok()) << y4.status().ToString();
  const Int4* v4 = y4->data<Int4>();
  EXPECT_EQ(v4[0].value, -8);
  EXPECT_EQ(v4[1].value, 3);
  EXPECT_EQ(v4[2].value, 7);
  EXPECT_EQ(v4[3].value, 2);  // 1.25 -> 1, + 1

  for (int64_t saturate : {int64_t{1}, int64_t{0}}) {
    OpTest f8("QuantizeLinear", 19);
    f8.Input(Tensor::FromVector<float>({3}, {100000, 2, -1e9f}))
        .Input(Tensor::Scalar<float>(2))
        .Input(Tensor::FromVector<Float8E4M3FN>({1}, {Float8E4M3FN{0}}))
        .Attr("saturate", saturate);
    auto y = RunOne(f8);
    ASSERT_TRUE(y.ok());
    const Float8E4M3FN* v = y->data<Float8E4M3FN>();
    EXPECT_EQ(v[0].bits, saturate ? 0x7E : 0x7F);
    EXPECT_EQ(v[1].bits, 0x38);
    EXPECT_EQ(v[2].bits, saturate ? 0xFE : 0xFF);
  }

  OpTest u2("QuantizeLinear", 25);
  u2.Input(Tensor::FromVector<float>({3}, {-4, 2, 40})).Input(Tensor::Scalar<float>(2)).Attr(
      "output_dtype", static_cast<int64_t>(DataType::kUint2));
  auto y2 = RunOne(u2);
  ASSERT_TRUE(y2.ok()) << y2.status().ToString();
  EXPECT_EQ(y2->data<UInt2>()[0].value, 0);
  EXPECT_EQ(y2->data<UInt2>()[1].value, 1);
  EXPECT_EQ(y2->data<UInt2>()[2].value, 3);

  OpTest f4("QuantizeLinear", 23);
  f4.Input(Tensor::FromVector<float>({3}, {2.5f, -30, 9})).Input(Tensor::Scalar<float>(2)).Attr(
      "output_dtype", static_cast<int64_t>(DataType::kFloat4E2M1));
  auto y4f = RunOne(f4);
  ASSERT_TRUE(y4f.ok());
  EXPECT_EQ(y4f->data<Float4E2M1>()[0].bits, 0x2);  // 1.25 -> 1.0
  EXPECT_EQ(y4f->data<Float4E2M1>()[1].bits, 0xF);  // -15 -> -6
  EXPECT_EQ(y4f->data<Float4E2M1>()[2].bits, 0x6);  // 4.5 -> 4
}

TEST(QuantizeLinear, Float16InputsAndTypeErrors) {
  OpTest test("QuantizeLinear", 19);
  test.Input(Tensor::FromVector<Float16>({2}, {Float16{FloatToHalf(3.0f)}, Float16{FloatToHalf(-7.0f)}}))
      .Input(Tensor::Scalar<Float16>(Float16{FloatToHalf(2.0f)}))
      .Input(Tensor::Scalar<int8_t>(0));
  auto y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Values<int8_t>(*y), (std::vector<int8_t>{2, -4}));

  OpTest mismatch("QuantizeLinear", 21);
  mismatch.Input(Tensor::FromVector<float>({1}, {1}))
      .Input(Tensor::Scalar<float>(1))
      .Input(Tensor::Scalar<uint8_t>(0))
      .Attr("output_dtype", static_cast<int64_t>(DataType::kInt8));
  EXPECT_TRUE(Refused(RunOne(mismatch), StatusCode::kInvalidArgument, "y_zero_point has type uint8 but output_dtype asks for int8"));
  OpTest zp_shape("QuantizeLinear", 13);
  zp_shape.Input(Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4}))
      .Input(Tensor::FromVector<float>({2}, {1, 1}))
      .Input(Tensor::Scalar<uint8_t>(0));
  EXPECT_TRUE(Refused(RunOne(zp_shape), StatusCode::kInvalidArgument, "zero point shape [] differs from scale shape [2]"));
}

TEST(DequantizeLinear, PerTensorPerAxisBlocked) {
  OpTest t("DequantizeLinear", 10);
  t.Input(Tensor::FromVector<uint8_t>({4}, {0, 3, 128, 255}))
      .Input(Tensor::Scalar<float>(2))
      .Input(Tensor::Scalar<uint8_t>(128));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Values<float>(*y), (std::vector<float>{-256, -250, 0, 254}));

  OpTest a("DequantizeLinear", 13);
  a.Input(Tensor::FromVector<int8_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}))
      .Input(Tensor::FromVector<float>({2}, {10, 100}))
      .Input(Tensor::FromVector<int8_t>({2}, {1, 0}))
      .Attr("axis", int64_t{1});
  auto ya = RunOne(a);
  ASSERT_TRUE(ya.ok()) << ya.status().ToString();
  EXPECT_EQ(Values<float>(*ya), (std::vector<float>{0, 10, 300, 400, 40, 50, 700, 800}));

  OpTest b("DequantizeLinear", 21);
  b.Input(Tensor::FromVector<int16_t>({3, 2}, {1, 2, 3, 4, 5, 6}))
      .Input(Tensor::FromVector<float>({2, 2}, {1, 10, 100, 1000}))
      .Attr("axis", int64_t{0})
      .Attr("block_size", int64_t{2});
  auto yb = RunOne(b);
  ASSERT_TRUE(yb.ok()) << yb.status().ToString();
  EXPECT_EQ(Values<float>(*yb), (std::vector<float>{1, 20, 3, 40, 500, 6000}));
}

TEST(DequantizeLinear, SmallTypesAndOutputTypes) {
  OpTest f8("DequantizeLinear", 19);
  f8.Input(Tensor::FromVector<Float8E4M3FN>({5}, {Float8E4M3FN{0}, Float8E4M3FN{48}, Float8E4M3FN{56},
                                                   Float8E4M3FN{126}, Float8E4M3FN{237}}))
      .Input(Tensor::Scalar<Float16>(Float16{FloatToHalf(2.0f)}));
  auto y = RunOne(f8);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->dtype(), DataType::kFloat16);
  std::vector<float> got;
  for (const Float16& h : Values<Float16>(*y)) got.push_back(HalfToFloat(h.bits));
  EXPECT_EQ(got, (std::vector<float>{0, 1, 2, 896, -208}));

  OpTest i4("DequantizeLinear", 21);
  i4.Input(Tensor::FromVector<Int4>({3}, {Int4{-8}, Int4{7}, Int4{0}}))
      .Input(Tensor::Scalar<float>(0.5f))
      .Input(Tensor::FromVector<Int4>({1}, {Int4{-1}}));
  auto y4 = RunOne(i4);
  ASSERT_TRUE(y4.ok()) << y4.status().ToString();
  EXPECT_EQ(Values<float>(*y4), (std::vector<float>{-3.5f, 4, 0.5f}));

  // A float8e8m0 scale (2^1) with an explicit bfloat16 output.
  OpTest e8("DequantizeLinear", 24);
  e8.Input(Tensor::FromVector<uint8_t>({2}, {3, 10}))
      .Input(Tensor::Scalar<Float8E8M0>(Float8E8M0{0x80}))
      .Attr("output_dtype", static_cast<int64_t>(DataType::kBFloat16));
  auto ye = RunOne(e8);
  ASSERT_TRUE(ye.ok()) << ye.status().ToString();
  ASSERT_EQ(ye->dtype(), DataType::kBFloat16);
  EXPECT_EQ(BFloat16ToFloat(ye->data<BFloat16>()[0].bits), 6.f);
  EXPECT_EQ(BFloat16ToFloat(ye->data<BFloat16>()[1].bits), 20.f);

  OpTest bad("DequantizeLinear", 13);
  bad.Input(Tensor::FromVector<uint8_t>({1}, {1})).Input(Tensor::Scalar<float>(1)).Input(Tensor::Scalar<int8_t>(0));
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "x_zero_point has type int8 but x has type uint8"));  // zero point type differs from x
}

TEST(QuantDequant, PerAxisMatchesScalarReferenceWithThreads) {
  // [7, 33, 1001] along axis 1: odd sizes, large enough to be split over threads.
  const Shape shape = {7, 33, 1001};
  const int64_t n = 7 * 33 * 1001;
  std::vector<float> x(n), scale(33);
  std::vector<int8_t> zp(33);
  for (int64_t i = 0; i < n; ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * 300.f;
  for (int c = 0; c < 33; ++c) {
    scale[c] = 0.5f + 0.25f * c;
    zp[c] = static_cast<int8_t>(c - 16);
  }
  OpTest q("QuantizeLinear", 13);
  q.Input(Tensor::FromVector<float>(shape, x))
      .Input(Tensor::FromVector<float>({33}, scale))
      .Input(Tensor::FromVector<int8_t>({33}, zp))
      .Threads(4);
  auto y = RunOne(q);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  OpTest d("DequantizeLinear", 13);
  d.Input(*y).Input(Tensor::FromVector<float>({33}, scale)).Input(Tensor::FromVector<int8_t>({33}, zp)).Threads(4);
  auto back = RunOne(d);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  for (int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>((i / 1001) % 33);
    const float r = std::nearbyint(x[i] / scale[c]) + zp[c];
    const int8_t expected = static_cast<int8_t>(std::fmin(127.f, std::fmax(-128.f, r)));
    ASSERT_EQ(y->data<int8_t>()[i], expected) << i;
    ASSERT_EQ(back->data<float>()[i], (static_cast<float>(expected) - zp[c]) * scale[c]) << i;
  }
}

// Every quantized type through QuantizeLinear (output_dtype, scale 1) and back.
TEST(QuantDequant, EveryQuantizedTypeRoundTrips) {
  const std::vector<float> x = {-3, -1, 0, 1, 2.5f, 100};
  const std::vector<std::pair<DataType, std::vector<float>>> cases = {
      {DataType::kUint8, {0, 0, 0, 1, 2, 100}},          {DataType::kInt8, {-3, -1, 0, 1, 2, 100}},
      {DataType::kUint16, {0, 0, 0, 1, 2, 100}},         {DataType::kInt16, {-3, -1, 0, 1, 2, 100}},
      {DataType::kUint4, {0, 0, 0, 1, 2, 15}},           {DataType::kInt4, {-3, -1, 0, 1, 2, 7}},
      {DataType::kUint2, {0, 0, 0, 1, 2, 3}},            {DataType::kInt2, {-2, -1, 0, 1, 1, 1}},
      {DataType::kFloat8E4M3FN, {-3, -1, 0, 1, 2.5f, 96}}, {DataType::kFloat8E4M3FNUZ, {-3, -1, 0, 1, 2.5f, 96}},
      {DataType::kFloat8E5M2, {-3, -1, 0, 1, 2.5f, 96}},   {DataType::kFloat8E5M2FNUZ, {-3, -1, 0, 1, 2.5f, 96}},
      {DataType::kFloat4E2M1, {-3, -1, 0, 1, 2, 6}},
  };
  for (const auto& [type, expected] : cases) {
    OpTest q("QuantizeLinear", 25);
    q.Input(Tensor::FromVector<float>({6}, x)).Input(Tensor::Scalar<float>(1)).Attr(
        "output_dtype", static_cast<int64_t>(type));
    auto y = RunOne(q);
    ASSERT_TRUE(y.ok()) << DataTypeName(type) << ": " << y.status().ToString();
    ASSERT_EQ(y->dtype(), type);
    OpTest d("DequantizeLinear", 25);
    d.Input(*y).Input(Tensor::Scalar<float>(1));
    auto back = RunOne(d);
    ASSERT_TRUE(back.ok()) << DataTypeName(type) << ": " << back.status().ToString();
    EXPECT_EQ(Values<float>(*back), expected) << DataTypeName(type);
  }
}

TEST(QuantizeLinear, Int32AndBFloat16Inputs) {
  OpTest i32("QuantizeLinear", 25);
  i32.Input(Tensor::FromVector<int32_t>({3}, {7, -7, 1000})).Input(Tensor::Scalar<int32_t>(2)).Input(
      Tensor::Scalar<int8_t>(0));
  auto y = RunOne(i32);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Values<int8_t>(*y), (std::vector<int8_t>{4, -4, 127}));  // 3.5 and -3.5 round to even
  OpTest bf("QuantizeLinear", 21);
  bf.Input(Tensor::FromVector<BFloat16>({2}, {BFloat16{FloatToBFloat16(5.f)}, BFloat16{FloatToBFloat16(-300.f)}}))
      .Input(Tensor::Scalar<BFloat16>(BFloat16{FloatToBFloat16(2.f)}))
      .Input(Tensor::Scalar<uint16_t>(10));
  auto b = RunOne(bf);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Values<uint16_t>(*b), (std::vector<uint16_t>{12, 0}));  // 2.5 -> 2, + 10
}

TEST(DynamicQuantizeLinear, SpecExample) {
  OpTest test("DynamicQuantizeLinear", 11);
  test.Input(Tensor::FromVector<float>({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})).Outputs(3);
  auto out = test.Run(RegisterQuantKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<uint8_t>((*out)[0].tensor()), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  EXPECT_FLOAT_EQ((*out)[1].tensor().data<float>()[0], 5.0f / 255.0f);
  EXPECT_EQ((*out)[2].tensor().data<uint8_t>()[0], 153);

  OpTest positive("DynamicQuantizeLinear", 11);
  positive.Input(Tensor::FromVector<float>({3}, {1, 2, 4})).Outputs(3);
  auto p = positive.Run(RegisterQuantKernels);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)[2].tensor().data<uint8_t>()[0], 0);  // min adjusted to 0
  // 2 / float(4/255) = 127.49999 rounds down.
  EXPECT_EQ(Values<uint8_t>((*p)[0].tensor()), (std::vector<uint8_t>{64, 127, 255}));

  OpTest wrong_type("DynamicQuantizeLinear", 11);
  wrong_type.Input(Tensor::FromVector<double>({1}, {1})).Outputs(3);
  EXPECT_TRUE(Refused(wrong_type.Run(RegisterQuantKernels), StatusCode::kInvalidArgument, "x must be float, got float64"));
}

// A tensor of several range blocks on two cores: the minimum in the last block, the maximum in the
// first, a NaN between (skipped); the range is the whole tensor's, and the empty tensor's is 0.
TEST(DynamicQuantizeLinear, RangeOverBlocksAndCores) {
  const int64_t n = (int64_t{1} << 18) + 5;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) * 1e-3f;
  x[3] = 7.5f;
  x[n - 2] = -2.5f;
  x[n / 2] = std::nanf("");
  OpTest test("DynamicQuantizeLinear", 11);
  test.Input(Tensor::FromVector<float>({n}, x)).Outputs(3).Threads(2);
  auto out = test.Run(RegisterQuantKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[1].tensor().data<float>()[0], 10.0f / 255.0f);
  EXPECT_EQ((*out)[2].tensor().data<uint8_t>()[0], 64);  // 2.5 / (10 / 255) = 63.75
  const uint8_t* y = (*out)[0].tensor().data<uint8_t>();
  EXPECT_EQ(y[3], 255);
  EXPECT_EQ(y[n - 2], 0);

  OpTest empty("DynamicQuantizeLinear", 11);
  empty.Input(Tensor::FromVector<float>({0}, {})).Outputs(3);
  auto e = empty.Run(RegisterQuantKernels);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)[2].tensor().data<uint8_t>()[0], 0);
}

// The internal tail of a dynamically quantized convolution: y = clamp(float(acc) * scale + bias[c], min, max),
// and its refusals naming the input that is wrong.
TEST(DequantizeAccumulator, ScalesAddsTheChannelBiasAndClamps) {
  OpTest t("DequantizeAccumulator", 1, kOnnxflowDomain);
  t.Attr("min", 0.0f);  // a Relu
  t.Input(Tensor::FromVector<int32_t>({1, 2, 2}, {4, -4, 10, -30}))
      .Input(Tensor::Scalar<float>(0.5f))
      .Input(Tensor::FromVector<float>({2}, {1.0f, 2.0f}));
  auto y = RunOne(t);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Values<float>(*y), (std::vector<float>{3.0f, 0.0f, 7.0f, 0.0f}));
  // A Relu6 (Clip 0..6) over a row longer than a vector, and no clamp at all.
  std::vector<int32_t> acc(37);
  for (int i = 0; i < 37; ++i) acc[i] = i * 3 - 50;
  for (const bool clip : {true, false}) {
    OpTest c("DequantizeAccumulator", 1, kOnnxflowDomain);
    if (clip) c.Attr("min", 0.0f).Attr("max", 6.0f);
    c.Input(Tensor::FromVector<int32_t>({1, 1, 37}, acc)).Input(Tensor::Scalar<float>(0.25f));
    auto z = RunOne(c);
    ASSERT_TRUE(z.ok()) << z.status().ToString();
    std::vector<float> want(37);
    for (int i = 0; i < 37; ++i) want[i] = clip ? std::min(std::max(acc[i] * 0.25f, 0.0f), 6.0f) : acc[i] * 0.25f;
    EXPECT_EQ(Values<float>(*z), want) << (clip ? "Clip" : "none");
  }
}

TEST(DequantizeAccumulator, RefusesOperandsThatDoNotFit) {
  {
    OpTest t("DequantizeAccumulator", 1, kOnnxflowDomain);
    t.Input(Tensor::FromVector<int32_t>({1, 2, 2}, {1, 2, 3, 4})).Input(Tensor::FromVector<float>({2}, {1, 2}));
    EXPECT_TRUE(Refused(t.Run(RegisterQuantKernels), StatusCode::kInvalidArgument,
                        "DequantizeAccumulator: input 1 (scale) must be one float, got float32 [2]"));
  }
  {
    OpTest t("DequantizeAccumulator", 1, kOnnxflowDomain);
    t.Input(Tensor::FromVector<int32_t>({1, 2, 2}, {1, 2, 3, 4}))
        .Input(Tensor::Scalar<float>(1.0f))
        .Input(Tensor::FromVector<float>({3}, {1, 2, 3}));
    EXPECT_TRUE(Refused(t.Run(RegisterQuantKernels), StatusCode::kInvalidArgument,
                        "DequantizeAccumulator: input 2 (bias) must be 2 floats (the channels of [1,2,2]), got "
                        "float32 [3]"));
  }
}

}  // namespace
}  // namespace onnxflow
