#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/cast/cast_elements.h"
#include "ops/cast/register.h"
#include "ops/cast/string_convert.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Result<Tensor> RunCast(const Tensor& x, DataType to, int opset = 21, int64_t saturate = 1, int threads = 1) {
  OpTest test("Cast", opset);
  test.Input(x).Attr("to", static_cast<int64_t>(to)).Threads(threads);
  if (saturate != 1) test.Attr("saturate", saturate);
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> out, test.Run(RegisterCastKernels));
  return out[0].tensor();
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

TEST(Cast, FloatToIntegersTruncatesAndWraps) {
  Tensor x = Tensor::FromVector<float>({6}, {1.9f, -1.9f, 0.f, 127.5f, 300.f, -129.f});
  auto i32 = RunCast(x, DataType::kInt32);
  ASSERT_TRUE(i32.ok()) << i32.status().ToString();
  EXPECT_EQ(Values<int32_t>(*i32), (std::vector<int32_t>{1, -1, 0, 127, 300, -129}));
  auto i8 = RunCast(x, DataType::kInt8);
  ASSERT_TRUE(i8.ok());
  EXPECT_EQ(Values<int8_t>(*i8), (std::vector<int8_t>{1, -1, 0, 127, 44, 127}));
  auto u8 = RunCast(x, DataType::kUint8);
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(Values<uint8_t>(*u8), (std::vector<uint8_t>{1, 255, 0, 127, 44, 127}));
  auto u64 = RunCast(Tensor::FromVector<double>({2}, {1.8446744073709550e19, 3.0}), DataType::kUint64);
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(Values<uint64_t>(*u64), (std::vector<uint64_t>{18446744073709549568ull, 3}));
}

TEST(Cast, IntegerToIntegerKeepsLowBits) {
  auto r = RunCast(Tensor::FromVector<int16_t>({3}, {200, -1, 256}), DataType::kInt8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Values<int8_t>(*r), (std::vector<int8_t>{-56, -1, 0}));
  auto u = RunCast(Tensor::FromVector<int64_t>({2}, {-1, 4294967297ll}), DataType::kUint32);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Values<uint32_t>(*u), (std::vector<uint32_t>{4294967295u, 1u}));
  auto big = RunCast(Tensor::FromVector<uint64_t>({1}, {18446744073709551615ull}), DataType::kFloat);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->data<float>()[0], 18446744073709551616.0f);
}

TEST(Cast, BoolBothWays) {
  auto b = RunCast(Tensor::FromVector<float>({4}, {0.f, -0.f, 2.5f, kNaN}), DataType::kBool);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Values<bool>(*b), (std::vector<bool>{false, false, true, true}));
  auto f = RunCast(Tensor::FromVector<bool>({2}, {true, false}), DataType::kDouble);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(Values<double>(*f), (std::vector<double>{1.0, 0.0}));
}

TEST(Cast, HalfTypes) {
  auto h = RunCast(Tensor::FromVector<float>({4}, {1.0f, 65504.f, 1e6f, -kInf}), DataType::kFloat16);
  ASSERT_TRUE(h.ok());
  const Float16* hd = h->data<Float16>();
  EXPECT_EQ(hd[0].bits, 0x3C00);
  EXPECT_EQ(hd[1].bits, 0x7BFF);
  EXPECT_EQ(hd[2].bits, 0x7C00);
  EXPECT_EQ(hd[3].bits, 0xFC00);
  // double -> float16 rounds once: 1 + 2^-11 + 2^-40 is just above a tie.
  auto d = RunCast(Tensor::FromVector<double>({1}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}),
                   DataType::kFloat16);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->data<Float16>()[0].bits, 0x3C01);
  auto bf = RunCast(Tensor::FromVector<float>({2}, {1.00390625f, 1.01171875f}), DataType::kBFloat16);
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(bf->data<BFloat16>()[0].bits, 0x3F80);  // tie -> even
  EXPECT_EQ(bf->data<BFloat16>()[1].bits, 0x3F82);  // tie -> even (up)
  auto back = RunCast(*h, DataType::kFloat);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(Values<float>(*back), (std::vector<float>{1.0f, 65504.f, kInf, -kInf}));
}

// Long enough for the SIMD conversions (ops/cast/half_simd): every element as the scalar rounding
// gives it, ties both ways, NaN kept a NaN, and back to float exactly.
TEST(Cast, FloatToBFloat16AndBackInBulk) {
  std::vector<float> x;
  for (int i = 0; i < 999; ++i) x.push_back(BitsToFloat(0x3F800000u + static_cast<uint32_t>(i) * 0x4001u));
  x.push_back(kNaN);
  x.push_back(-kInf);
  auto bf = RunCast(Tensor::FromVector<float>({static_cast<int64_t>(x.size())}, x), DataType::kBFloat16);
  ASSERT_TRUE(bf.ok());
  const BFloat16* b = bf->data<BFloat16>();
  for (size_t i = 0; i + 2 < x.size(); ++i) ASSERT_EQ(b[i].bits, FloatToBFloat16(x[i])) << i;
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(b[x.size() - 2].bits)));
  EXPECT_EQ(b[x.size() - 1].bits, 0xFF80);
  auto back = RunCast(*bf, DataType::kFloat);
  ASSERT_TRUE(back.ok());
  for (size_t i = 0; i + 2 < x.size(); ++i) ASSERT_EQ(back->data<float>()[i], BFloat16ToFloat(b[i].bits)) << i;
}

TEST(Cast, Float8SaturateAttribute) {
  Tensor x = Tensor::FromVector<float>({4}, {1e6f, -kInf, 0.5f, kNaN});
  auto sat = RunCast(x, DataType::kFloat8E4M3FN, 19);
  ASSERT_TRUE(sat.ok());
  const uint8_t* s = reinterpret_cast<const uint8_t*>(sat->raw_data());
  EXPECT_EQ(s[0], 0x7E);
  EXPECT_EQ(s[1], 0xFE);
  EXPECT_EQ(s[2], 0x30);
  EXPECT_EQ(s[3], 0x7F);
  auto nosat = RunCast(x, DataType::kFloat8E5M2, 19, 0);
  ASSERT_TRUE(nosat.ok());
  const uint8_t* n = reinterpret_cast<const uint8_t*>(nosat->raw_data());
  EXPECT_EQ(n[0], 0x7C);
  EXPECT_EQ(n[1], 0xFC);
  EXPECT_EQ(n[2], 0x38);
  EXPECT_EQ(n[3], 0x7E);
  auto f = RunCast(*sat, DataType::kFloat);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->data<float>()[0], 448.f);
  EXPECT_TRUE(std::isnan(f->data<float>()[3]));
}

TEST(Cast, E8M0RoundMode) {
  Tensor x = Tensor::FromVector<float>({3}, {1.5f, 1.25f, 3.0f});
  for (auto [mode, expected] : std::vector<std::pair<std::string, std::vector<uint8_t>>>{
           {"up", {0x80, 0x80, 0x81}}, {"down", {0x7F, 0x7F, 0x80}}, {"nearest", {0x80, 0x7F, 0x81}}}) {
    OpTest test("Cast", 25);
    test.Input(x).Attr("to", static_cast<int64_t>(DataType::kFloat8E8M0)).Attr("round_mode", mode);
    auto out = test.Run(RegisterCastKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const uint8_t* b = reinterpret_cast<const uint8_t*>((*out)[0].tensor().raw_data());
    EXPECT_EQ(std::vector<uint8_t>(b, b + 3), expected) << mode;
  }
  OpTest bad("Cast", 25);
  bad.Input(x).Attr("to", static_cast<int64_t>(DataType::kFloat8E8M0)).Attr("round_mode", std::string("sideways"));
  EXPECT_TRUE(Refused(bad.Run(RegisterCastKernels), StatusCode::kInvalidArgument, "attribute round_mode must be 'up', 'down' or 'nearest', got 'sideways'"));
}

TEST(Cast, SubByteIntegers) {
  auto i4 = RunCast(Tensor::FromVector<float>({4}, {-9.f, 7.f, 8.f, 15.f}), DataType::kInt4);
  ASSERT_TRUE(i4.ok());
  const Int4* v = i4->data<Int4>();
  EXPECT_EQ(v[0].value, 7);
  EXPECT_EQ(v[1].value, 7);
  EXPECT_EQ(v[2].value, -8);
  EXPECT_EQ(v[3].value, -1);
  auto i8 = RunCast(*i4, DataType::kInt8);
  ASSERT_TRUE(i8.ok());
  EXPECT_EQ(Values<int8_t>(*i8), (std::vector<int8_t>{7, 7, -8, -1}));
  auto u2 = RunCast(Tensor::FromVector<int32_t>({4}, {-3, -1, 2, 5}), DataType::kUint2);
  ASSERT_TRUE(u2.ok());
  const UInt2* w = u2->data<UInt2>();
  EXPECT_EQ(w[0].value, 1);
  EXPECT_EQ(w[1].value, 3);
  EXPECT_EQ(w[2].value, 2);
  EXPECT_EQ(w[3].value, 1);
  auto f4 = RunCast(Tensor::FromVector<float>({3}, {0.48f, -3.5f, 9.f}), DataType::kFloat4E2M1);
  ASSERT_TRUE(f4.ok());
  auto back = RunCast(*f4, DataType::kFloat16);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(HalfToFloat(back->data<Float16>()[0].bits), 0.5f);
  EXPECT_EQ(HalfToFloat(back->data<Float16>()[1].bits), -4.f);
  EXPECT_EQ(HalfToFloat(back->data<Float16>()[2].bits), 6.f);
}

TEST(Cast, StringToNumbers) {
  Tensor s = Tensor::FromVector<std::string>({6}, {"3.14", "1e-5", "INF", "-inf", "NaN", " +Inf "});
  auto f = RunCast(s, DataType::kFloat);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const float* v = f->data<float>();
  EXPECT_EQ(v[0], 3.14f);
  EXPECT_EQ(v[1], 1e-5f);
  EXPECT_EQ(v[2], kInf);
  EXPECT_EQ(v[3], -kInf);
  EXPECT_TRUE(std::isnan(v[4]));
  EXPECT_EQ(v[5], kInf);
  auto i = RunCast(Tensor::FromVector<std::string>({3}, {"1000", "-7", "100.5"}), DataType::kInt64);
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(Values<int64_t>(*i), (std::vector<int64_t>{1000, -7, 100}));
  auto bad = RunCast(Tensor::FromVector<std::string>({1}, {"Hello World!"}), DataType::kFloat);
  EXPECT_TRUE(Refused(bad, StatusCode::kInvalidArgument, "input element 0 \"Hello World!\" is not a number of type float32"));
}

TEST(Cast, NumbersToString) {
  auto s = RunCast(Tensor::FromVector<float>({8}, {1.f, 0.1f, 1e-7f, 1e16f, kNaN, -kInf, 0.47892547f, -2.5f}),
                   DataType::kString);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Values<std::string>(*s), (std::vector<std::string>{"1.0", "0.1", "1e-07", "1e+16", "nan", "-inf",
                                                               "0.47892547", "-2.5"}));
  auto small = RunCast(Tensor::FromVector<float>({4}, {0.0001f, 123456789.f, 1e15f, 0.00012345f}), DataType::kString);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(Values<std::string>(*small),
            (std::vector<std::string>{"1e-04", "123456790.0", "1000000000000000.0", "0.00012345"}));
  auto d = RunCast(Tensor::FromVector<double>({2}, {0.1, 123456.789}), DataType::kString);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(Values<std::string>(*d), (std::vector<std::string>{"0.1", "123456.789"}));
  auto i = RunCast(Tensor::FromVector<int32_t>({2}, {-5, 42}), DataType::kString);
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(Values<std::string>(*i), (std::vector<std::string>{"-5", "42"}));
  auto b = RunCast(Tensor::FromVector<bool>({2}, {true, false}), DataType::kString);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Values<std::string>(*b), (std::vector<std::string>{"True", "False"}));
  EXPECT_EQ(FormatFloat(HalfToFloat(0x3BAA), FloatPrecision::kHalf), "0.958");
}

TEST(Cast, Opset1StringAttributeAndSameType) {
  OpTest test("Cast", 1);
  Tensor x = Tensor::FromVector<int32_t>({2}, {3, -4});
  test.Input(x).Attr("to", std::string("FLOAT"));
  auto out = test.Run(RegisterCastKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0].tensor()), (std::vector<float>{3.f, -4.f}));
  auto same = RunCast(x, DataType::kInt32);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->SharesStorageWith(x));
  EXPECT_TRUE(Refused(RunCast(x, DataType::kComplex64), StatusCode::kUnimplemented, "Cast to type 14 is not supported"));
}

TEST(Cast, ParallelMatchesScalarOverOddSizes) {
  for (int64_t n : {1, 3, 17, 1000, 300001}) {
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7919) % 20011) * 0.037f - 300.f;
    Tensor x = Tensor::FromVector<float>({n}, v);
    auto h = RunCast(x, DataType::kFloat16, 21, 1, 4);
    auto q = RunCast(x, DataType::kFloat8E4M3FN, 21, 1, 4);
    ASSERT_TRUE(h.ok() && q.ok());
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(h->data<Float16>()[i].bits, FloatToHalf(v[i])) << i;
      ASSERT_EQ(q->data<Float8E4M3FN>()[i].bits, DoubleToFloat8E4M3FN(v[i], true)) << i;
    }
  }
}

// Every ordered pair of castable types: 1 survives float -> A -> B -> float (A, B any type;
// bool -> string gives "True", which is not a number, so that one chain is skipped).
TEST(Cast, EveryTypePairRoundTripsOne) {
  std::vector<DataType> types;
  for (int32_t t = 1; t <= kMaxDataType; ++t) {
    if (IsCastableType(static_cast<DataType>(t))) types.push_back(static_cast<DataType>(t));
  }
  ASSERT_EQ(types.size(), 24u);
  const Tensor one = Tensor::FromVector<float>({3}, {1.f, 1.f, 1.f});
  for (DataType a : types) {
    auto ta = CastTensor(one, a);
    ASSERT_TRUE(ta.ok()) << DataTypeName(a) << ": " << ta.status().ToString();
    for (DataType b : types) {
      if (a == DataType::kBool && b == DataType::kString) continue;
      auto tb = CastTensor(*ta, b);
      ASSERT_TRUE(tb.ok()) << DataTypeName(a) << " -> " << DataTypeName(b) << ": " << tb.status().ToString();
      auto back = CastTensor(*tb, DataType::kFloat);
      ASSERT_TRUE(back.ok()) << DataTypeName(b) << " -> float: " << back.status().ToString();
      for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(back->data<float>()[i], 1.f) << DataTypeName(a) << " -> " << DataTypeName(b);
      }
    }
  }
}

TEST(CastLike, TakesTypeFromSecondInput) {
  OpTest test("CastLike", 19);
  test.Input(Tensor::FromVector<double>({3}, {1.5, -2.5, 1e9}))
      .Input(Tensor::FromVector<int16_t>({1}, {0}));
  auto out = test.Run(RegisterCastKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.dtype(), DataType::kInt16);
  EXPECT_EQ(Values<int16_t>(y), (std::vector<int16_t>{1, -2, -13824}));  // 1e9 keeps its low 16 bits
  OpTest nosat("CastLike", 19);
  nosat.Input(Tensor::FromVector<float>({1}, {1e6f}))
      .Input(Tensor(DataType::kFloat8E4M3FNUZ, {0}))
      .Attr("saturate", int64_t{0});
  auto n = nosat.Run(RegisterCastKernels);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ((*n)[0].tensor().data<Float8E4M3FNUZ>()[0].bits, 0x80);
}

}  // namespace
}  // namespace onnxflow
