// The com.microsoft QLinear ops against a plain reference: dequantize, compute in double, quantize
// (round half to even, saturate). Results may differ from the reference by 1 unit only where the
// float formula rounds a value that sits within float error of a .5 tie; the tests count those.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/every_target.h"
#include "ops/framework/testing.h"
#include "ops/quant_ms/qlinear_simd.h"
#include "ops/quant/register.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace {

// QLinearAdd and QLinearMul run on the SIMD rows of qlinear_simd.cc.
class QLinearBinary : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(QLinearBinary);

template <typename T>
std::vector<T> RandomBytes(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(rng() & 255);
  return v;
}

template <typename T>
T Quantize(double v, double scale, int zero) {
  const double lo = std::is_signed_v<T> ? -128 : 0, hi = std::is_signed_v<T> ? 127 : 255;
  double r = std::nearbyint(v / scale) + zero;
  return static_cast<T>(std::min(hi, std::max(lo, r)));
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

// Max |a - b| over two byte vectors.
template <typename T>
int MaxDiff(const std::vector<T>& a, const std::vector<T>& b) {
  int d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(int(a[i]) - int(b[i])));
  return d;
}

int64_t SizeOf(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

template <typename T>
void CheckBinary(bool mul, const Shape& sa, const Shape& sb, const Shape& sc) {
  const int64_t na = SizeOf(sa), nb = SizeOf(sb);
  auto a = RandomBytes<T>(na, 1), b = RandomBytes<T>(nb, 2);
  const float as = 0.05f, bs = 0.02f, cs = mul ? 0.3f : 0.07f;
  const T az = std::is_signed_v<T> ? 3 : 130, bz = std::is_signed_v<T> ? -5 : 120, cz = std::is_signed_v<T> ? 1 : 128;
  OpTest test(mul ? "QLinearMul" : "QLinearAdd", 1, "com.microsoft");
  test.Input(Tensor::FromVector<T>(sa, a)).Input(Tensor::Scalar<float>(as)).Input(Tensor::Scalar<T>(az));
  test.Input(Tensor::FromVector<T>(sb, b)).Input(Tensor::Scalar<float>(bs)).Input(Tensor::Scalar<T>(bz));
  test.Input(Tensor::Scalar<float>(cs)).Input(Tensor::Scalar<T>(cz));
  auto out = test.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& c = (*out)[0].tensor();
  ASSERT_EQ(c.shape(), sc);
  // The reference broadcasts the trailing-aligned way for these shapes: b is [..] of a's tail or a's
  // channel column; index by the output's coordinates.
  std::vector<T> expect(SizeOf(sc));
  const size_t rank = sc.size();
  for (int64_t i = 0; i < SizeOf(sc); ++i) {
    int64_t rem = i, ia = 0, ib = 0, stride_a = 1, stride_b = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t coord = rem % sc[d];
      rem /= sc[d];
      const size_t da = d + sa.size() - rank, db = d + sb.size() - rank;
      if (d + sa.size() >= rank && sa[da] != 1) ia += coord * stride_a;
      if (d + sa.size() >= rank) stride_a *= sa[da];
      if (d + sb.size() >= rank && sb[db] != 1) ib += coord * stride_b;
      if (d + sb.size() >= rank) stride_b *= sb[db];
    }
    const double va = (double(a[ia]) - az) * as, vb = (double(b[ib]) - bz) * bs;
    expect[i] = Quantize<T>(mul ? va * vb : va + vb, cs, cz);
  }
  EXPECT_LE(MaxDiff(expect, Values<T>(c)), 1);
  int off = 0;
  auto got = Values<T>(c);
  for (size_t i = 0; i < got.size(); ++i) off += got[i] != expect[i];
  EXPECT_LE(off, static_cast<int>(got.size() / 100 + 1)) << "more than 1% off by one unit";
}

TEST_P(QLinearBinary, AddSameShapeAndBroadcastUint8) {
  CheckBinary<uint8_t>(false, {3, 37}, {3, 37}, {3, 37});
  CheckBinary<uint8_t>(false, {2, 3, 5, 7}, {3, 1, 1}, {2, 3, 5, 7});
  CheckBinary<uint8_t>(false, {1}, {4, 33}, {4, 33});
}

TEST_P(QLinearBinary, AddInt8) { CheckBinary<int8_t>(false, {2, 3, 19}, {19}, {2, 3, 19}); }

TEST_P(QLinearBinary, MulUint8AndInt8) {
  CheckBinary<uint8_t>(true, {5, 41}, {5, 41}, {5, 41});
  CheckBinary<int8_t>(true, {2, 4, 3, 3}, {1, 4, 1, 1}, {2, 4, 3, 3});
}

// Every pair of bytes in one call (the vector body) and one element per call (the tail) give the
// same bytes, on every target, for scales whose products round (so that a different order of the
// float operations would show): a result never depends on where a run was cut.
TEST_P(QLinearBinary, VectorBodyAndTailAgree) {
  std::vector<uint8_t> a(65536), b(65536);
  for (int i = 0; i < 65536; ++i) {
    a[i] = static_cast<uint8_t>(i >> 8);
    b[i] = static_cast<uint8_t>(i & 255);
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> ratio(0.05f, 3.0f);
  for (int trial = 0; trial < 40; ++trial) {
    QBinaryParams p;
    p.za = static_cast<float>(rng() % 256);
    p.zb = static_cast<float>(rng() % 256);
    p.zc = static_cast<float>(rng() % 256);
    p.ra = ratio(rng);
    p.rb = ratio(rng);
    for (bool mul : {false, true}) {
      std::vector<uint8_t> whole(65536), single(65536);
      auto run = mul ? QLinearMulU8 : QLinearAddU8;
      run(a.data(), false, b.data(), false, whole.data(), 65536, p);
      for (int i = 0; i < 65536; ++i) run(&a[i], false, &b[i], false, &single[i], 1, p);
      int differ = 0;
      for (int i = 0; i < 65536; ++i) differ += whole[i] != single[i];
      EXPECT_EQ(differ, 0) << (mul ? "mul" : "add") << " trial " << trial << " ra " << p.ra << " rb " << p.rb;
    }
  }
}

// The order of the two terms decides near-ties. From mobilenetv2 u8s8 (qzoo_models.py): a = 135,
// b = 100 with these parameters is 103.499994 exactly; MLAS's AVX2 kernel (B's term first, both
// fused) gives 103.49999 -> 103, A's term first 103.5 -> 104, and that one byte grew to 64 units
// 30 layers on. Targets without FMA round each product and give 103.5 there (104): only the
// x86 FMA targets are held to ONNX Runtime's byte. Near misses: one unit either side is no tie.
TEST_P(QLinearBinary, AddTakesBsTermFirstAsOnnxRuntime) {
  OpTest add("QLinearAdd", 1, "com.microsoft");
  add.Input(Tensor::FromVector<uint8_t>({3}, {135, 134, 136})).Input(Tensor::Scalar<float>(0.1083432212471962f));
  add.Input(Tensor::Scalar<uint8_t>(117));
  add.Input(Tensor::FromVector<uint8_t>({3}, {100, 100, 100})).Input(Tensor::Scalar<float>(0.06647500395774841f));
  add.Input(Tensor::Scalar<uint8_t>(136));
  add.Input(Tensor::Scalar<float>(0.12654897570610046f)).Input(Tensor::Scalar<uint8_t>(107));
  auto sum = add.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  const auto got = Values<uint8_t>((*sum)[0].tensor());
  const bool fma = (GetParam() & (HWY_AVX2 | HWY_AVX3 | HWY_AVX3_DL)) != 0;
  EXPECT_EQ(got[0], fma ? 103 : 104);
  EXPECT_EQ(got[1], 103);  // 102.64
  EXPECT_EQ(got[2], 104);  // 104.36
}

// a * 0.5 + b + zero point, rounded half to even with the zero point inside (as ONNX Runtime
// computes; round(v) + 11 would differ on every tie): zero point 10 gives 0.5 + 10 -> 10, 1.5 ->
// 12, 2.5 -> 12; zero point 11 gives 12, 12, 14; 255 saturates. QLinearMul alike: (a * 1) * 0.5
// + 11 on int8.
TEST_P(QLinearBinary, RoundsHalfToEvenWithTheZeroPointInsideAndSaturates) {
  for (const uint8_t zero : {uint8_t{10}, uint8_t{11}}) {
    OpTest add("QLinearAdd", 1, "com.microsoft");
    add.Input(Tensor::FromVector<uint8_t>({4}, {1, 3, 5, 255})).Input(Tensor::Scalar<float>(0.5f)).AbsentInput();
    add.Input(Tensor::FromVector<uint8_t>({4}, {0, 0, 0, 255})).Input(Tensor::Scalar<float>(1.f)).AbsentInput();
    add.Input(Tensor::Scalar<float>(1.f)).Input(Tensor::Scalar<uint8_t>(zero));
    auto sum = add.Run(RegisterQuantMsKernels);
    ASSERT_TRUE(sum.ok()) << sum.status().ToString();
    const std::vector<uint8_t> expect = zero == 10 ? std::vector<uint8_t>{10, 12, 12, 255} : std::vector<uint8_t>{12, 12, 14, 255};
    EXPECT_EQ(Values<uint8_t>((*sum)[0].tensor()), expect) << "zero point " << int{zero};
  }
  OpTest mul("QLinearMul", 1, "com.microsoft");
  mul.Input(Tensor::FromVector<int8_t>({3}, {1, 3, 5})).Input(Tensor::Scalar<float>(0.5f)).AbsentInput();
  mul.Input(Tensor::FromVector<int8_t>({3}, {1, 1, 1})).Input(Tensor::Scalar<float>(1.f)).AbsentInput();
  mul.Input(Tensor::Scalar<float>(1.f)).Input(Tensor::Scalar<int8_t>(11));
  auto product = mul.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(product.ok()) << product.status().ToString();
  EXPECT_EQ(Values<int8_t>((*product)[0].tensor()), (std::vector<int8_t>{12, 12, 14}));
}

TEST(QLinearAdd, RefusesMixedTypes) {
  OpTest test("QLinearAdd", 1, "com.microsoft");
  test.Input(Tensor::FromVector<uint8_t>({1}, {1})).Input(Tensor::Scalar<float>(1.f)).AbsentInput();
  test.Input(Tensor::FromVector<int8_t>({1}, {1})).Input(Tensor::Scalar<float>(1.f)).AbsentInput();
  test.Input(Tensor::Scalar<float>(1.f)).AbsentInput();
  auto out = test.Run(RegisterQuantMsKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("input 'B' has type int8 but 'A' has uint8"), std::string::npos)
      << out.status().ToString();
}

template <typename T>
void CheckUnary(bool sigmoid) {
  auto x = RandomBytes<T>(300, 3);
  const float xs = 0.1f, ys = sigmoid ? 1.f / 256 : 0.08f;
  const T xz = std::is_signed_v<T> ? -3 : 128, yz = std::is_signed_v<T> ? (sigmoid ? -128 : 10) : (sigmoid ? 0 : 100);
  OpTest test(sigmoid ? "QLinearSigmoid" : "QLinearLeakyRelu", 1, "com.microsoft");
  test.Input(Tensor::FromVector<T>({300}, x)).Input(Tensor::Scalar<float>(xs)).Input(Tensor::Scalar<T>(xz));
  test.Input(Tensor::Scalar<float>(ys)).Input(Tensor::Scalar<T>(yz));
  if (!sigmoid) test.Attr("alpha", 0.2f);
  auto out = test.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<T> expect;
  for (T v : x) {
    const double f = (double(v) - xz) * xs;
    expect.push_back(Quantize<T>(sigmoid ? 1 / (1 + std::exp(-f)) : (f >= 0 ? f : 0.2 * f), ys, yz));
  }
  EXPECT_LE(MaxDiff(expect, Values<T>((*out)[0].tensor())), 1);
}

TEST(QLinearSigmoid, Uint8AndInt8) {
  CheckUnary<uint8_t>(true);
  CheckUnary<int8_t>(true);
}

TEST(QLinearLeakyRelu, Uint8AndInt8) {
  CheckUnary<uint8_t>(false);
  CheckUnary<int8_t>(false);
}

TEST(QLinearConcat, CopiesMatchingScalesAndRequantizesOthers) {
  OpTest test("QLinearConcat", 1, "com.microsoft");
  test.Attr("axis", int64_t{1});
  test.Input(Tensor::Scalar<float>(0.5f)).Input(Tensor::Scalar<uint8_t>(100));
  test.Input(Tensor::FromVector<uint8_t>({2, 1}, {7, 9})).Input(Tensor::Scalar<float>(0.5f)).Input(Tensor::Scalar<uint8_t>(100));
  // 1.0 * (104 - 100) = 4 -> 4 / 0.5 + 100 = 108; (90 - 100) = -10 -> 80; 255 -> 155 * 2 + 100 saturates.
  test.Input(Tensor::FromVector<uint8_t>({2, 2}, {104, 90, 255, 100})).Input(Tensor::Scalar<float>(1.f)).Input(Tensor::Scalar<uint8_t>(100));
  auto out = test.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<uint8_t>((*out)[0].tensor()), (std::vector<uint8_t>{7, 108, 80, 9, 255, 100}));
}

// ApplyByteTableRows (the VBMI lookup where the CPU has it): rows of lengths around the 64-byte
// vector at wider strides, against table[x] element by element; the bytes between the rows stay.
TEST(ApplyByteTable, RowsAtStridesMatchElementByElement) {
  std::vector<uint8_t> table(256);
  for (int i = 0; i < 256; ++i) table[i] = static_cast<uint8_t>(255 - i * 7);
  for (int64_t n : {1, 15, 16, 17, 63, 64, 65, 130}) {
    const int64_t rows = 5, xs = n + 3, ys = n + 9;
    std::vector<uint8_t> x(rows * xs), y(rows * ys, 0xEE), expect(rows * ys, 0xEE);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 37 + 11);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < n; ++i) expect[r * ys + i] = table[x[r * xs + i]];
    }
    ApplyByteTableRows(table.data(), x.data(), xs, y.data(), ys, n, rows);
    EXPECT_EQ(y, expect) << "n " << n;
  }
}

// A channels-last concatenation: per pixel a run of each input, one copied, one requantized.
TEST(QLinearConcat, ShortRunsPerPixel) {
  OpTest test("QLinearConcat", 1, "com.microsoft");
  test.Attr("axis", int64_t{3});
  test.Input(Tensor::Scalar<float>(0.5f)).Input(Tensor::Scalar<uint8_t>(100));
  std::vector<uint8_t> a(4 * 3 * 16), b(4 * 3 * 5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(90 + i % 20);
  test.Input(Tensor::FromVector<uint8_t>({1, 4, 3, 16}, a)).Input(Tensor::Scalar<float>(0.5f)).Input(Tensor::Scalar<uint8_t>(100));
  test.Input(Tensor::FromVector<uint8_t>({1, 4, 3, 5}, b)).Input(Tensor::Scalar<float>(1.f)).Input(Tensor::Scalar<uint8_t>(100));
  auto out = test.Run(RegisterQuantMsKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<uint8_t> expect;
  for (int64_t p = 0; p < 12; ++p) {
    for (int64_t c = 0; c < 16; ++c) expect.push_back(a[p * 16 + c]);
    // (v - 100) * 1.0 / 0.5 + 100, saturated
    for (int64_t c = 0; c < 5; ++c) expect.push_back(static_cast<uint8_t>(std::clamp(2 * (b[p * 5 + c] - 100) + 100, 0, 255)));
  }
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{1, 4, 3, 21}));
  EXPECT_EQ(Values<uint8_t>((*out)[0].tensor()), expect);
}

TEST(QLinearGlobalAveragePool, NchwAndChannelsLast) {
  // Plane {10, 20, 30, 41}: sum - 4 * 10 = 61; * 0.5 / (4 * 0.25) = 30.5 -> 30 (even) + 5 = 35.
  for (int last = 0; last < 2; ++last) {
    OpTest test("QLinearGlobalAveragePool", 1, "com.microsoft");
    test.Attr("channels_last", int64_t{last});
    std::vector<uint8_t> x = {10, 20, 30, 41, 10, 10, 10, 12};  // NCHW [1, 2, 2, 2]
    if (last) x = {10, 10, 20, 10, 30, 10, 41, 12};             // NHWC [1, 2, 2, 2]
    test.Input(Tensor::FromVector<uint8_t>({1, 2, 2, 2}, x)).Input(Tensor::Scalar<float>(0.5f)).Input(Tensor::Scalar<uint8_t>(10));
    test.Input(Tensor::Scalar<float>(0.25f)).Input(Tensor::Scalar<uint8_t>(5));
    auto out = test.Run(RegisterQuantMsKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].tensor().shape(), last ? (Shape{1, 1, 1, 2}) : (Shape{1, 2, 1, 1}));
    // Second plane: sum - 40 = 2 -> 1 + 5 = 6.
    EXPECT_EQ(Values<uint8_t>((*out)[0].tensor()), (std::vector<uint8_t>{35, 6}));
  }
}

TEST(QLinearAveragePool, PadsCountOrNotAndMatchReference) {
  // x [1, 1, 3, 3] = 0..8 + 10 with zero point 10, scale 1 -> values 0..8; 2x2 kernel, pads 1.
  std::vector<uint8_t> x;
  for (int i = 0; i < 9; ++i) x.push_back(static_cast<uint8_t>(10 + i));
  for (int include = 0; include < 2; ++include) {
    OpTest test("QLinearAveragePool", 1, "com.microsoft");
    test.Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    test.Attr("strides", std::vector<int64_t>{2, 2}).Attr("count_include_pad", int64_t{include});
    test.Input(Tensor::FromVector<uint8_t>({1, 1, 3, 3}, x)).Input(Tensor::Scalar<float>(1.f)).Input(Tensor::Scalar<uint8_t>(10));
    test.Input(Tensor::Scalar<float>(0.5f)).Input(Tensor::Scalar<uint8_t>(0));
    auto out = test.Run(RegisterQuantMsKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].tensor().shape(), (Shape{1, 1, 2, 2}));
    // Windows: {0}, {1,2}, {3,6}, {4,5,7,8}; means / 0.5.
    const std::vector<uint8_t> expect = include ? std::vector<uint8_t>{0, 2, 4, 12} : std::vector<uint8_t>{0, 3, 9, 12};
    EXPECT_EQ(Values<uint8_t>((*out)[0].tensor()), expect);
  }
}

// Hostile windows: 2^40 taps wide over pads as long, or 2^21 x 2^21 taps, are refused by name
// before any scratch is sized (they asked for terabytes: bad_alloc, or a loop of hours).
TEST(QLinearAveragePool, RefusesWindowsPastItsScratch) {
  const int64_t t40 = int64_t{1} << 40, t21 = int64_t{1} << 21;
  const std::vector<std::vector<int64_t>> kernels = {{1, t40}, {t21, t21}};
  const std::vector<std::vector<int64_t>> pads = {{0, t40, 0, t40}, {t21, t21, t21, t21}};
  for (size_t i = 0; i < kernels.size(); ++i) {
    OpTest test("QLinearAveragePool", 1, "com.microsoft");
    test.Attr("kernel_shape", kernels[i]).Attr("pads", pads[i]);
    test.Input(Tensor::FromVector<uint8_t>({1, 1, 1, 2}, {10, 12})).Input(Tensor::Scalar<float>(1.f)).Input(Tensor::Scalar<uint8_t>(10));
    test.Input(Tensor::Scalar<float>(0.5f)).Input(Tensor::Scalar<uint8_t>(0));
    EXPECT_TRUE(Refused(test.Run(RegisterQuantMsKernels), StatusCode::kResourceExhausted,
                        "QLinearAveragePool: attributes 'kernel_shape' " + ShapeToString(kernels[i]))) << i;
  }
}

// ceil_mode with count_include_pad: the last window runs past the input (cells 2 and 3 of 4),
// and ONNX Runtime's QLinearAveragePool divides it by the whole kernel, 3: (30 + 40) / 3 -> 23.
TEST(QLinearAveragePool, CeilWindowCountsTheWholeKernel) {
  for (const int64_t last : {0, 1}) {
    OpTest test("QLinearAveragePool", 1, "com.microsoft");
    test.Attr("kernel_shape", std::vector<int64_t>{1, 3}).Attr("strides", std::vector<int64_t>{1, 2});
    test.Attr("ceil_mode", int64_t{1}).Attr("count_include_pad", int64_t{1}).Attr("channels_last", last);
    const Shape in = last ? Shape{1, 1, 4, 1} : Shape{1, 1, 1, 4};
    test.Input(Tensor::FromVector<uint8_t>(in, {10, 20, 30, 40})).Input(Tensor::Scalar<float>(0.1f));
    test.Input(Tensor::Scalar<uint8_t>(0)).Input(Tensor::Scalar<float>(0.1f)).Input(Tensor::Scalar<uint8_t>(0));
    auto out = test.Run(RegisterQuantMsKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Values<uint8_t>((*out)[0].tensor()), (std::vector<uint8_t>{20, 23})) << "channels_last " << last;
  }
}

// The channels-last kernel (its own loop, channels innermost) gives the channels-first one's
// bytes, transposed: asymmetric pads, both counts, int8 and uint8, two images.
template <typename T>
void CheckAveragePoolChannelsLast() {
  const int64_t n = 2, c = 5, h = 4, w = 6;
  std::vector<T> nchw(n * c * h * w), nhwc(nchw.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < h * w; ++p) {
        const T v = static_cast<T>((i * 131 + ch * 37 + p * 53) % 251);
        nchw[(i * c + ch) * h * w + p] = v;
        nhwc[(i * h * w + p) * c + ch] = v;
      }
  for (int include = 0; include < 2; ++include) {
    std::vector<T> out[2];
    Shape shape[2];
    for (int last = 0; last < 2; ++last) {
      OpTest test("QLinearAveragePool", 1, "com.microsoft");
      test.Attr("kernel_shape", std::vector<int64_t>{3, 3}).Attr("pads", std::vector<int64_t>{1, 0, 0, 2});
      test.Attr("strides", std::vector<int64_t>{2, 1}).Attr("count_include_pad", int64_t{include});
      test.Attr("channels_last", int64_t{last});
      const Shape in = last ? Shape{n, h, w, c} : Shape{n, c, h, w};
      test.Input(Tensor::FromVector<T>(in, last ? nhwc : nchw)).Input(Tensor::Scalar<float>(0.3f)).Input(Tensor::Scalar<T>(7));
      test.Input(Tensor::Scalar<float>(0.2f)).Input(Tensor::Scalar<T>(-3 + 6 * std::is_unsigned_v<T>));
      auto result = test.Run(RegisterQuantMsKernels);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      shape[last] = (*result)[0].tensor().shape();
      out[last] = Values<T>((*result)[0].tensor());
    }
    ASSERT_EQ(shape[0], (Shape{n, c, 2, 6}));
    ASSERT_EQ(shape[1], (Shape{n, 2, 6, c}));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < 12; ++p) {
          EXPECT_EQ(out[0][(i * c + ch) * 12 + p], out[1][(i * 12 + p) * c + ch]) << "count_include_pad " << include;
        }
  }
}

TEST(QLinearAveragePool, ChannelsLastGivesTheChannelsFirstBytes) {
  CheckAveragePoolChannelsLast<uint8_t>();
  CheckAveragePoolChannelsLast<int8_t>();
}

// The pools run on SIMD rows (dequantized rows, runs added per tap, byte sums): every target.
class QLinearPoolTarget : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(QLinearPoolTarget);

struct PoolCase {
  std::vector<int64_t> in, kernel, strides, dilations, pads;  // in: the spatial dims
  int64_t n = 1, c = 1, ceil_mode = 0;
};

// The reference the kernel must equal bit for bit: each output's cells listed in window order and
// summed in float from 0 (the formula at the top of qlinear_pool.cc, ONNX Runtime's).
template <typename T>
std::vector<T> AveragePoolReference(const std::vector<T>& x, const PoolCase& pc, const std::vector<int64_t>& out,
                                    bool include_pad, float xs, T xz, float ys, T yz) {
  const size_t dims = pc.in.size();
  const int64_t in_plane = SizeOf(pc.in), out_plane = SizeOf(out);
  int64_t window = 1;
  for (int64_t k : pc.kernel) window *= k;
  const float lo = std::is_signed_v<T> ? -128.f : 0.f, hi = std::is_signed_v<T> ? 127.f : 255.f;
  std::vector<T> y(pc.n * pc.c * out_plane);
  for (int64_t p = 0; p < pc.n * pc.c; ++p) {
    for (int64_t o = 0; o < out_plane; ++o) {
      std::vector<int64_t> oc(dims);
      for (size_t d = dims, rem = o; d-- > 0; rem /= out[d]) oc[d] = rem % out[d];
      float sum = 0.0f;
      int64_t cells = 0;
      for (int64_t w = 0; w < window; ++w) {
        int64_t at = 0;
        bool inside = true;
        for (size_t d = 0, rem = w, div = window; d < dims; ++d) {
          div /= pc.kernel[d];
          const int64_t j = (rem / div) % pc.kernel[d];
          const int64_t i = oc[d] * pc.strides[d] - pc.pads[d] + j * pc.dilations[d];
          inside = inside && i >= 0 && i < pc.in[d];
          at = at * pc.in[d] + i;
        }
        if (!inside) continue;
        sum += xs * static_cast<float>(static_cast<int32_t>(x[p * in_plane + at]) - static_cast<int32_t>(xz));
        ++cells;
      }
      const int64_t count = include_pad ? window : cells;
      const float v = count > 0 ? sum / static_cast<float>(count) / ys : 0.f;
      y[p * out_plane + o] = static_cast<T>(RoundSaturate(v + static_cast<float>(yz), 0.0f, lo, hi));
    }
  }
  return y;
}

template <typename T>
void CheckAveragePoolCase(const PoolCase& pc, bool include_pad, uint32_t seed) {
  const int64_t in_plane = SizeOf(pc.in);
  const auto nchw = RandomBytes<T>(pc.n * pc.c * in_plane, seed);
  const float xs = 0.037f, ys = 0.051f;
  const T xz = std::is_signed_v<T> ? -7 : 131, yz = std::is_signed_v<T> ? 5 : 120;
  std::vector<T> out_layout[2];
  std::vector<int64_t> out_dims;
  for (int last = 0; last < 2; ++last) {
    std::vector<T> x = nchw;
    Shape shape = {pc.n, pc.c};
    shape.insert(shape.end(), pc.in.begin(), pc.in.end());
    if (last) {  // the same values, channels last
      for (int64_t i = 0; i < pc.n; ++i)
        for (int64_t ch = 0; ch < pc.c; ++ch)
          for (int64_t p = 0; p < in_plane; ++p) {
            x[(i * in_plane + p) * pc.c + ch] = nchw[(i * pc.c + ch) * in_plane + p];
          }
      shape.erase(shape.begin() + 1);
      shape.push_back(pc.c);
    }
    std::vector<int64_t> pads = pc.pads;
    pads.insert(pads.end(), pc.pads.begin(), pc.pads.end());
    OpTest test("QLinearAveragePool", 1, "com.microsoft");
    test.Attr("kernel_shape", pc.kernel).Attr("strides", pc.strides).Attr("pads", pads);
    test.Attr("ceil_mode", pc.ceil_mode).Attr("count_include_pad", int64_t{include_pad});
    test.Attr("channels_last", int64_t{last});
    test.Input(Tensor::FromVector<T>(shape, x)).Input(Tensor::Scalar<float>(xs)).Input(Tensor::Scalar<T>(xz));
    test.Input(Tensor::Scalar<float>(ys)).Input(Tensor::Scalar<T>(yz));
    if (pc.n * pc.c * in_plane > 4000) test.Threads(2);
    auto result = test.Run(RegisterQuantMsKernels);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const Shape& got = (*result)[0].tensor().shape();
    out_dims.assign(got.begin() + (last ? 1 : 2), got.end() - (last ? 1 : 0));
    out_layout[last] = Values<T>((*result)[0].tensor());
  }
  const auto expect = AveragePoolReference(nchw, pc, out_dims, include_pad, xs, xz, ys, yz);
  ASSERT_EQ(out_layout[0].size(), expect.size());
  EXPECT_EQ(out_layout[0], expect);
  const int64_t out_plane = SizeOf(out_dims);
  for (int64_t i = 0; i < pc.n; ++i)
    for (int64_t ch = 0; ch < pc.c; ++ch)
      for (int64_t p = 0; p < out_plane; ++p) {
        ASSERT_EQ(out_layout[1][(i * out_plane + p) * pc.c + ch], expect[(i * pc.c + ch) * out_plane + p])
            << "channels last";
      }
}

TEST_P(QLinearPoolTarget, AveragePoolEqualsTheWindowOrderSum) {
  std::mt19937 rng(17);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % (hi - lo + 1)); };
  for (int trial = 0; trial < 60; ++trial) {
    PoolCase pc;
    const int64_t dims = pick(1, 3);
    pc.n = pick(1, 2);
    pc.c = pick(1, 19);
    for (int64_t d = 0; d < dims; ++d) {
      pc.kernel.push_back(pick(1, 4));
      pc.strides.push_back(pick(1, 3));
      pc.dilations.push_back(1);
      pc.pads.push_back(pick(0, pc.kernel.back() - 1));
      pc.in.push_back(pick(pc.kernel.back(), dims == 3 ? 7 : 23));
    }
    pc.ceil_mode = pick(0, 1);
    SCOPED_TRACE("trial " + std::to_string(trial));
    CheckAveragePoolCase<uint8_t>(pc, trial % 2, trial);
    CheckAveragePoolCase<int8_t>(pc, trial % 3 == 0, trial + 100);
  }
  // Real sizes: ShuffleNet's 3x3 stride-2 pool and a stride-1 pool over a long row (SIMD bodies and tails).
  CheckAveragePoolCase<uint8_t>({{28, 28}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, 24, 0}, false, 7);
  CheckAveragePoolCase<int8_t>({{9, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, 33, 0}, true, 8);
}

TEST_P(QLinearPoolTarget, GlobalAveragePoolSumsEveryByte) {
  for (const int64_t plane : {1, 7, 63, 64, 65, 200, 784}) {
    for (int last = 0; last < 2; ++last) {
      const int64_t c = 37;
      auto x = RandomBytes<int8_t>(c * plane, static_cast<uint32_t>(plane));
      OpTest test("QLinearGlobalAveragePool", 1, "com.microsoft");
      test.Attr("channels_last", int64_t{last});
      test.Input(Tensor::FromVector<int8_t>(last ? Shape{1, plane, c} : Shape{1, c, plane}, x));
      test.Input(Tensor::Scalar<float>(0.02f)).Input(Tensor::Scalar<int8_t>(-3));
      test.Input(Tensor::Scalar<float>(0.01f)).Input(Tensor::Scalar<int8_t>(2));
      auto out = test.Run(RegisterQuantMsKernels);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const auto got = Values<int8_t>((*out)[0].tensor());
      for (int64_t ch = 0; ch < c; ++ch) {
        int64_t sum = 0;
        for (int64_t p = 0; p < plane; ++p) sum += x[last ? p * c + ch : ch * plane + p];
        const float v = static_cast<float>(sum + 3 * plane) * (0.02f / (0.01f * static_cast<float>(plane)));
        EXPECT_EQ(got[ch], RoundSaturate(v, 2.0f, -128.f, 127.f)) << "plane " << plane << " channels_last " << last;
      }
    }
  }
}

TEST(MsQuantizeLinear, ComMicrosoftQuantizeAndDequantizeAreTheOnnxOnes) {
  // ops/quant registers them in both domains; ONNX Runtime's quantizer writes either.
  OpTest q("QuantizeLinear", 1, "com.microsoft");
  q.Input(Tensor::FromVector<float>({4}, {1, 3, 5, -300})).Input(Tensor::Scalar<float>(2)).Input(Tensor::Scalar<int8_t>(1));
  auto out = q.Run(RegisterQuantKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<int8_t>((*out)[0].tensor()), (std::vector<int8_t>{1, 3, 3, -128}));
  OpTest dq("DequantizeLinear", 1, "com.microsoft");
  dq.Input(Tensor::FromVector<uint8_t>({2}, {0, 200})).Input(Tensor::Scalar<float>(0.5f)).Input(Tensor::Scalar<uint8_t>(100));
  auto d = dq.Run(RegisterQuantKernels);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(Values<float>((*d)[0].tensor()), (std::vector<float>{-50, 50}));
}

}  // namespace
}  // namespace onnxflow
