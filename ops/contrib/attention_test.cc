// The attention ops against a plain reference: softmax(scale Q K^T + masks) V per batch and head,
// written with loops over (B, N, S, H) arrays.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "ops/framework/registry.h"
#include "ops/framework/domains.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/register_all.h"

namespace onnxflow {
namespace {

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// q (B, N, S, H), k and v (B, Nkv, T, H); visible(b, i, j) says whether query i sees key j
// (invisible keys get `masked` added, or are dropped when masked is -inf). Returns (B, S, N * H).
template <typename Visible>
std::vector<float> Reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                             int64_t B, int64_t N, int64_t Nkv, int64_t S, int64_t T, int64_t H, float scale,
                             float masked, Visible visible) {
  std::vector<float> out(B * S * N * H, 0.0f);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t n = 0; n < N; ++n) {
      const int64_t kn = n / (N / Nkv);
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> s(T);
        double max = -INFINITY;
        for (int64_t j = 0; j < T; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < H; ++d) dot += q[((b * N + n) * S + i) * H + d] * k[((b * Nkv + kn) * T + j) * H + d];
          s[j] = dot * scale;
          if (!visible(b, i, j)) s[j] = std::isinf(masked) ? -INFINITY : s[j] + masked;
          max = std::max(max, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < T; ++j) sum += (s[j] = std::exp(s[j] - max));
        for (int64_t j = 0; j < T; ++j) {
          for (int64_t d = 0; d < H; ++d) {
            out[(b * S + i) * N * H + n * H + d] += static_cast<float>(s[j] / sum * v[((b * Nkv + kn) * T + j) * H + d]);
          }
        }
      }
    }
  }
  return out;
}

// (B, S, N * H) -> (B, N, S, H)
std::vector<float> ToHeads(const std::vector<float>& x, int64_t B, int64_t S, int64_t N, int64_t H, int64_t ld,
                           int64_t offset = 0) {
  std::vector<float> y(B * N * S * H);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t d = 0; d < H; ++d) y[((b * N + n) * S + s) * H + d] = x[(b * S + s) * ld + offset + n * H + d];
  return y;
}

// Concatenates (B, N, P, H) and (B, N, S, H) along the sequence.
std::vector<float> Concat(const std::vector<float>& past, const std::vector<float>& fresh, int64_t B, int64_t N,
                          int64_t P, int64_t S, int64_t H) {
  std::vector<float> y;
  for (int64_t bn = 0; bn < B * N; ++bn) {
    y.insert(y.end(), past.begin() + bn * P * H, past.begin() + (bn + 1) * P * H);
    y.insert(y.end(), fresh.begin() + bn * S * H, fresh.begin() + (bn + 1) * S * H);
  }
  return y;
}

TEST(Attention, BertFormWithKeyMaskMatchesReference) {
  const int64_t B = 2, S = 3, N = 2, H = 4, D = N * H;
  const std::vector<float> x = Random(B * S * D, 1), w = Random(D * 3 * D, 2), bias = Random(3 * D, 3);
  // The projection, by hand.
  std::vector<float> qkv(B * S * 3 * D);
  for (int64_t t = 0; t < B * S; ++t)
    for (int64_t c = 0; c < 3 * D; ++c) {
      double acc = bias[c];
      for (int64_t i = 0; i < D; ++i) acc += x[t * D + i] * w[i * 3 * D + c];
      qkv[t * 3 * D + c] = static_cast<float>(acc);
    }
  const std::vector<int32_t> mask = {1, 1, 0, 1, 1, 1};
  const auto expected = Reference(ToHeads(qkv, B, S, N, H, 3 * D), ToHeads(qkv, B, S, N, H, 3 * D, D),
                                  ToHeads(qkv, B, S, N, H, 3 * D, 2 * D), B, N, N, S, S, H, 0.5f, -10000.0f,
                                  [&](int64_t b, int64_t, int64_t j) { return mask[b * S + j] != 0; });
  OpTest test("Attention", 1, kMsDomain);
  test.Input(F({B, S, D}, x)).Input(F({D, 3 * D}, w)).ConstantInput(1).Input(F({3 * D}, bias));
  test.Input(Tensor::FromVector<int32_t>({B, S}, mask)).Attr("num_heads", N).Threads(2);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({B, S, D}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
}

TEST(Attention, UnidirectionalWithPastAndPresent) {
  const int64_t B = 1, S = 2, P = 3, N = 2, H = 2, D = N * H, T = P + S;
  const std::vector<float> x = Random(B * S * D, 4), w = Random(D * 3 * D, 5), past = Random(2 * B * N * P * H, 6);
  std::vector<float> qkv(B * S * 3 * D);
  for (int64_t t = 0; t < B * S; ++t)
    for (int64_t c = 0; c < 3 * D; ++c) {
      double acc = 0;
      for (int64_t i = 0; i < D; ++i) acc += x[t * D + i] * w[i * 3 * D + c];
      qkv[t * 3 * D + c] = static_cast<float>(acc);
    }
  const std::vector<float> past_k(past.begin(), past.begin() + B * N * P * H), past_v(past.begin() + B * N * P * H, past.end());
  const auto k = Concat(past_k, ToHeads(qkv, B, S, N, H, 3 * D, D), B, N, P, S, H);
  const auto v = Concat(past_v, ToHeads(qkv, B, S, N, H, 3 * D, 2 * D), B, N, P, S, H);
  // Future keys drop out whatever mask_filter_value says (it applies to the masks a model passes),
  // as ONNX Runtime computes: with -1 added they would still carry weight.
  const auto expected = Reference(ToHeads(qkv, B, S, N, H, 3 * D), k, v, B, N, N, S, T, H, 1.0f / std::sqrt(2.0f),
                                  -INFINITY, [&](int64_t, int64_t i, int64_t j) { return j <= P + i; });
  auto run = [&](float mask_filter_value) {
    OpTest test("Attention", 1, kMsDomain);
    test.Input(F({B, S, D}, x)).Input(F({D, 3 * D}, w)).AbsentInput().AbsentInput().Input(F({2, B, N, P, H}, past));
    test.Attr("num_heads", N).Attr("unidirectional", int64_t{1}).Attr("mask_filter_value", mask_filter_value).Outputs(2);
    return test.Run(RegisterAllKernels);
  };
  auto minus_one = run(-1.0f);
  ASSERT_TRUE(minus_one.ok()) << minus_one.status().ToString();
  EXPECT_TRUE(TensorsNear(F({B, S, D}, expected), (*minus_one)[0].tensor(), 1e-4, 1e-5));
  auto out = run(-10000.0f);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({B, S, D}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
  std::vector<float> present = k;
  present.insert(present.end(), v.begin(), v.end());
  EXPECT_TRUE(TensorsNear(F({2, B, N, T, H}, present), (*out)[1].tensor()));
}

// QAttention: the projection on 8-bit input and weights, (x - zx)(w - zw[c]) * xs * ws[c] + bias,
// by hand in exact integers, then the reference attention; int8 and uint8 input, per-column weight
// scales and zero points, a key mask, and a cache in and out.
TEST(QAttention, QuantizedProjectionThenAttention) {
  const int64_t B = 2, S = 3, P = 2, N = 2, H = 4, D = N * H, T = P + S;
  for (const bool signed_x : {false, true}) {
    std::vector<uint8_t> xq(B * S * D);
    for (size_t i = 0; i < xq.size(); ++i) xq[i] = static_cast<uint8_t>((i * 73 + 11) % 256);
    std::vector<int8_t> wq(D * 3 * D);
    for (size_t i = 0; i < wq.size(); ++i) wq[i] = static_cast<int8_t>((i * 37) % 255 - 127);
    std::vector<float> ws(3 * D);
    std::vector<int8_t> wz(3 * D);
    for (int64_t c = 0; c < 3 * D; ++c) {
      ws[c] = 0.002f + 0.0003f * static_cast<float>(c % 7);
      wz[c] = static_cast<int8_t>(c % 5 - 2);
    }
    const float xs = 0.03f;
    const int zx = signed_x ? -5 : 121;
    const std::vector<float> bias = Random(3 * D, 7), past = Random(2 * B * N * P * H, 8);
    std::vector<float> qkv(B * S * 3 * D);
    for (int64_t t = 0; t < B * S; ++t)
      for (int64_t c = 0; c < 3 * D; ++c) {
        int64_t acc = 0;
        for (int64_t i = 0; i < D; ++i) {
          const int xv = signed_x ? static_cast<int8_t>(xq[t * D + i]) : xq[t * D + i];
          acc += static_cast<int64_t>(xv - zx) * (wq[i * 3 * D + c] - wz[c]);
        }
        qkv[t * 3 * D + c] = static_cast<float>(acc) * (xs * ws[c]) + bias[c];
      }
    const std::vector<float> past_k(past.begin(), past.begin() + B * N * P * H), past_v(past.begin() + B * N * P * H, past.end());
    const auto k = Concat(past_k, ToHeads(qkv, B, S, N, H, 3 * D, D), B, N, P, S, H);
    const auto v = Concat(past_v, ToHeads(qkv, B, S, N, H, 3 * D, 2 * D), B, N, P, S, H);
    const std::vector<int32_t> lengths = {T, T - 1};  // mask_index: each batch entry's key count
    const auto expected = Reference(ToHeads(qkv, B, S, N, H, 3 * D), k, v, B, N, N, S, T, H, 0.5f, -10000.0f,
                                    [&](int64_t b, int64_t, int64_t j) { return j < lengths[b]; });
    OpTest test("QAttention", 1, kMsDomain);
    Tensor x(signed_x ? DataType::kInt8 : DataType::kUint8, {B, S, D});
    std::copy(xq.begin(), xq.end(), static_cast<uint8_t*>(x.mutable_raw_data()));
    test.Input(x).Input(Tensor::FromVector<int8_t>({D, 3 * D}, wq)).ConstantInput(1).Input(F({3 * D}, bias));
    test.Input(Tensor::Scalar<float>(xs)).Input(F({3 * D}, ws)).Input(Tensor::FromVector<int32_t>({B}, lengths));
    test.Input(signed_x ? Tensor::Scalar<int8_t>(static_cast<int8_t>(zx)) : Tensor::Scalar<uint8_t>(static_cast<uint8_t>(zx)));
    test.Input(Tensor::FromVector<int8_t>({3 * D}, wz)).Input(F({2, B, N, P, H}, past));
    test.Attr("num_heads", N).Outputs(2).Threads(2);
    auto out = test.Run(RegisterAllKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({B, S, D}, expected), (*out)[0].tensor(), 1e-4, 1e-5)) << "signed input " << signed_x;
    std::vector<float> present = k;
    present.insert(present.end(), v.begin(), v.end());
    EXPECT_TRUE(TensorsNear(F({2, B, N, T, H}, present), (*out)[1].tensor(), 1e-5, 1e-6));
  }
}

// A weight_scale of the wrong length is refused with the input named.
TEST(QAttention, RefusesAWeightScaleOfTheWrongLength) {
  const int64_t D = 4;
  OpTest test("QAttention", 1, kMsDomain);
  test.Input(Tensor::FromVector<uint8_t>({1, 1, D}, std::vector<uint8_t>(D, 3)));
  test.Input(Tensor::FromVector<uint8_t>({D, 3 * D}, std::vector<uint8_t>(3 * D * D, 5)));
  test.Input(F({3 * D}, std::vector<float>(3 * D, 0.f))).Input(Tensor::Scalar<float>(0.1f)).Input(F({5}, {1, 1, 1, 1, 1}));
  test.Attr("num_heads", int64_t{2});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("weight_scale"), std::string::npos) << out.status().ToString();
}

// Float input (QAttention takes 8-bit) and a bias of the wrong length: refused, the input named.
TEST(QAttention, RefusesFloatInputAndAShortBias) {
  const int64_t D = 4;
  auto run = [&](const Tensor& x, int64_t bias_size) {
    OpTest test("QAttention", 1, kMsDomain);
    test.Input(x).Input(Tensor::FromVector<uint8_t>({D, 3 * D}, std::vector<uint8_t>(3 * D * D, 5)));
    test.Input(F({bias_size}, std::vector<float>(bias_size, 0.f))).Input(Tensor::Scalar<float>(0.1f));
    test.Input(Tensor::Scalar<float>(0.1f)).Attr("num_heads", int64_t{2});
    auto out = test.Run(RegisterAllKernels);
    return out.ok() ? std::string("ok") : out.status().message();
  };
  const Tensor x8 = Tensor::FromVector<uint8_t>({1, 1, D}, std::vector<uint8_t>(D, 3));
  EXPECT_EQ(run(x8, 3 * D), "ok");
  EXPECT_NE(run(F({1, 1, D}, {1, 2, 3, 4}), 3 * D).find("QAttention: input and weight must be uint8 or int8"),
            std::string::npos);
  EXPECT_NE(run(x8, 5).find("QAttention: bias must have 12 values"), std::string::npos) << run(x8, 5);
}

TEST(MultiHeadAttention, CrossAttentionWithBiasAndPaddingLengths) {
  const int64_t B = 2, S = 2, L = 3, N = 2, H = 2, D = N * H;
  const auto q = Random(B * S * D, 7), k = Random(B * L * D, 8), v = Random(B * L * D, 9), bias = Random(3 * D, 10);
  auto add = [](std::vector<float> x, const std::vector<float>& b, int64_t off, int64_t w) {
    for (size_t i = 0; i < x.size(); ++i) x[i] += b[off + i % w];
    return x;
  };
  const std::vector<int32_t> lengths = {3, 1};
  const auto expected = Reference(ToHeads(add(q, bias, 0, D), B, S, N, H, D), ToHeads(add(k, bias, D, D), B, L, N, H, D),
                                  ToHeads(add(v, bias, 2 * D, D), B, L, N, H, D), B, N, N, S, L, H, 0.25f, -10000.0f,
                                  [&](int64_t b, int64_t, int64_t j) { return j < lengths[b]; });
  // The lengths alone (B), or first in ONNX Runtime's (3 * B + 2) form (offsets after them).
  for (const std::vector<int32_t>& mask : {lengths, std::vector<int32_t>{3, 1, 0, 2, 0, 0, 3, 4}}) {
    OpTest test("MultiHeadAttention", 1, kMsDomain);
    test.Input(F({B, S, D}, q)).Input(F({B, L, D}, k)).Input(F({B, L, D}, v)).Input(F({3 * D}, bias));
    test.Input(Tensor::FromVector<int32_t>({static_cast<int64_t>(mask.size())}, mask))
        .Attr("num_heads", N).Attr("scale", 0.25f).Outputs(3);
    auto out = test.Run(RegisterAllKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({B, S, D}, expected), (*out)[0].tensor(), 1e-4, 1e-5)) << mask.size();
    EXPECT_TRUE(TensorsNear(F({B, N, L, H}, ToHeads(add(k, bias, D, D), B, L, N, H, D)), (*out)[1].tensor()));
  }
}

TEST(MultiHeadAttention, DecoderStepWithPastKeyValue) {
  const int64_t B = 1, S = 1, P = 4, N = 2, H = 3, D = N * H, T = P + S;
  const auto q = Random(D, 11), k = Random(D, 12), v = Random(D, 13), pk = Random(N * P * H, 14), pv = Random(N * P * H, 15);
  const auto kk = Concat(pk, ToHeads(k, B, S, N, H, D), B, N, P, S, H), vv = Concat(pv, ToHeads(v, B, S, N, H, D), B, N, P, S, H);
  const auto expected = Reference(ToHeads(q, B, S, N, H, D), kk, vv, B, N, N, S, T, H, 1.0f / std::sqrt(3.0f), -10000.0f,
                                  [](int64_t, int64_t, int64_t) { return true; });
  // The new key and value projected (B, S, D), or already in the cache layout (B, N, S, H): the
  // past comes first either way.
  for (const bool bnsh : {false, true}) {
    const Shape kv_shape = bnsh ? Shape{B, N, S, H} : Shape{B, S, D};
    OpTest test("MultiHeadAttention", 1, kMsDomain);
    test.Input(F({B, S, D}, q))
        .Input(F(kv_shape, bnsh ? ToHeads(k, B, S, N, H, D) : k))
        .Input(F(kv_shape, bnsh ? ToHeads(v, B, S, N, H, D) : v))
        .AbsentInput().AbsentInput().AbsentInput();
    test.Input(F({B, N, P, H}, pk)).Input(F({B, N, P, H}, pv)).Attr("num_heads", N).Outputs(3);
    auto out = test.Run(RegisterAllKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({B, S, D}, expected), (*out)[0].tensor(), 1e-4, 1e-5)) << "bnsh " << bnsh;
    EXPECT_TRUE(TensorsNear(F({B, N, T, H}, kk), (*out)[1].tensor())) << "bnsh " << bnsh;
    EXPECT_TRUE(TensorsNear(F({B, N, T, H}, vv), (*out)[2].tensor())) << "bnsh " << bnsh;
  }
}

TEST(GroupQueryAttention, TokenStepTwoQueryHeadsPerKvHead) {
  const int64_t B = 1, S = 1, P = 3, N = 4, Nkv = 2, H = 2, T = P + S;
  const auto q = Random(N * H, 16), k = Random(Nkv * H, 17), v = Random(Nkv * H, 18);
  const auto pk = Random(Nkv * P * H, 19), pv = Random(Nkv * P * H, 20);
  const auto kk = Concat(pk, ToHeads(k, B, S, Nkv, H, Nkv * H), B, Nkv, P, S, H);
  const auto vv = Concat(pv, ToHeads(v, B, S, Nkv, H, Nkv * H), B, Nkv, P, S, H);
  const auto expected = Reference(ToHeads(q, B, S, N, H, N * H), kk, vv, B, N, Nkv, S, T, H, 1.0f / std::sqrt(2.0f),
                                  -INFINITY, [](int64_t, int64_t, int64_t) { return true; });
  OpTest test("GroupQueryAttention", 1, kMsDomain);
  test.Input(F({B, S, N * H}, q)).Input(F({B, S, Nkv * H}, k)).Input(F({B, S, Nkv * H}, v));
  test.Input(F({B, Nkv, P, H}, pk)).Input(F({B, Nkv, P, H}, pv));
  test.Input(Tensor::FromVector<int32_t>({B}, {static_cast<int32_t>(T - 1)}))
      .Input(Tensor::FromVector<int32_t>({}, {static_cast<int32_t>(T)}));
  test.Attr("num_heads", N).Attr("kv_num_heads", Nkv).Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({B, S, N * H}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
  EXPECT_TRUE(TensorsNear(F({B, Nkv, T, H}, kk), (*out)[1].tensor()));
}

// A float16 decoder step (the q4f16 and fp16 LLM exports): the present's past rows are the past's
// own bits, the new row is the new key rounded to half, the output the float attention over the
// half values, rounded. Past and query of different types are refused by name.
TEST(GroupQueryAttention, HalfTokenStepExtendsTheCacheInHalf) {
  const int64_t S = 1, P = 3, N = 4, Nkv = 2, H = 8, T = P + S;
  auto rounded = [](std::vector<float> x) {
    for (float& f : x) f = HalfToFloat(FloatToHalf(f));
    return x;
  };
  auto half = [](Shape shape, const std::vector<float>& x) {
    std::vector<Float16> h;
    for (float f : x) h.push_back(Float16{FloatToHalf(f)});
    return Tensor::FromVector<Float16>(std::move(shape), h);
  };
  const auto q = rounded(Random(N * H, 50)), k = rounded(Random(Nkv * H, 51)), v = rounded(Random(Nkv * H, 52));
  const auto pk = rounded(Random(Nkv * P * H, 53)), pv = rounded(Random(Nkv * P * H, 54));
  const auto kk = Concat(pk, ToHeads(k, 1, S, Nkv, H, Nkv * H), 1, Nkv, P, S, H);
  const auto vv = Concat(pv, ToHeads(v, 1, S, Nkv, H, Nkv * H), 1, Nkv, P, S, H);
  const auto expected = Reference(ToHeads(q, 1, S, N, H, N * H), kk, vv, 1, N, Nkv, S, T, H,
                                  1.0f / std::sqrt(static_cast<float>(H)), -INFINITY,
                                  [](int64_t, int64_t, int64_t) { return true; });
  for (const bool float_past : {false, true}) {
    OpTest test("GroupQueryAttention", 1, kMsDomain);
    test.Input(half({1, S, N * H}, q)).Input(half({1, S, Nkv * H}, k)).Input(half({1, S, Nkv * H}, v));
    if (float_past) {
      test.Input(F({1, Nkv, P, H}, pk)).Input(F({1, Nkv, P, H}, pv));
    } else {
      test.Input(half({1, Nkv, P, H}, pk)).Input(half({1, Nkv, P, H}, pv));
    }
    test.Input(Tensor::FromVector<int32_t>({1}, {static_cast<int32_t>(T - 1)}))
        .Input(Tensor::FromVector<int32_t>({}, {static_cast<int32_t>(T)}));
    test.Attr("num_heads", N).Attr("kv_num_heads", Nkv).Outputs(3);
    auto out = test.Run(RegisterAllKernels);
    if (float_past) {
      ASSERT_FALSE(out.ok());
      EXPECT_NE(out.status().message().find("past_key and past_value must have the query's type"), std::string::npos)
          << out.status().ToString();
      continue;
    }
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(half({1, S, N * H}, expected), (*out)[0].tensor(), 2e-3, 2e-3));
    // Bit for bit: every value was a half to begin with.
    EXPECT_TRUE(TensorsNear(half({1, Nkv, T, H}, kk), (*out)[1].tensor(), 0.0, 0.0));
    EXPECT_TRUE(TensorsNear(half({1, Nkv, T, H}, vv), (*out)[2].tensor(), 0.0, 0.0));
  }
}

// A batch of two decoder steps over a padded past buffer of 3 rows: entry 0 holds 3 tokens, entry
// 1 holds 1 (seqlens_k 3 and 1). Each new token goes at its own entry's length, entry 1's rows
// after it are zeros, and each query sees only its own entry's tokens.
TEST(GroupQueryAttention, BatchOfUnequalLengthsWritesEachAtItsOwnRow) {
  const int64_t B = 2, P = 3, H = 2, T = 4;
  const std::vector<int64_t> past_len = {3, 1};
  const auto q = Random(B * H, 70), k = Random(B * H, 71), v = Random(B * H, 72);
  const auto pk = Random(B * P * H, 73), pv = Random(B * P * H, 74);
  std::vector<float> kk(B * T * H, 0.0f), vv(B * T * H, 0.0f);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t r = 0; r < past_len[b]; ++r) {
      for (int64_t d = 0; d < H; ++d) {
        kk[(b * T + r) * H + d] = pk[(b * P + r) * H + d];
        vv[(b * T + r) * H + d] = pv[(b * P + r) * H + d];
      }
    }
    for (int64_t d = 0; d < H; ++d) {
      kk[(b * T + past_len[b]) * H + d] = k[b * H + d];
      vv[(b * T + past_len[b]) * H + d] = v[b * H + d];
    }
  }
  const auto expected = Reference(q, kk, vv, B, 1, 1, 1, T, H, 1.0f / std::sqrt(2.0f), -INFINITY,
                                  [&](int64_t b, int64_t, int64_t j) { return j <= past_len[b]; });
  OpTest test("GroupQueryAttention", 1, kMsDomain);
  test.Input(F({B, 1, H}, q)).Input(F({B, 1, H}, k)).Input(F({B, 1, H}, v));
  test.Input(F({B, 1, P, H}, pk)).Input(F({B, 1, P, H}, pv));
  test.Input(Tensor::FromVector<int32_t>({B}, {3, 1})).Input(Tensor::FromVector<int32_t>({}, {4}));
  test.Attr("num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({B, 1, H}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
  EXPECT_TRUE(TensorsNear(F({B, 1, T, H}, kk), (*out)[1].tensor(), 0.0, 0.0));
  EXPECT_TRUE(TensorsNear(F({B, 1, T, H}, vv), (*out)[2].tensor(), 0.0, 0.0));
}

// A hostile prompt: 4 new tokens with no past and total_sequence_length 2 would write past the end
// of a 2-row present; it is refused.
TEST(GroupQueryAttention, RefusesMoreNewTokensThanThePresentHolds) {
  const int64_t S = 4, H = 2;
  const auto q = Random(S * H, 60);
  OpTest test("GroupQueryAttention", 1, kMsDomain);
  test.Input(F({1, S, H}, q)).Input(F({1, S, H}, q)).Input(F({1, S, H}, q)).AbsentInput().AbsentInput();
  test.Input(Tensor::FromVector<int32_t>({1}, {1})).Input(Tensor::FromVector<int32_t>({}, {2}));
  test.Attr("num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("does not fit 4 new tokens"), std::string::npos) << out.status().ToString();
}

// ONNX Runtime's optimizer saves every GroupQueryAttention with smooth_softmax = -1 ("unset"): the
// plain softmax, as 0 is (only 1 adds the sink of 0 to the denominator).
TEST(GroupQueryAttention, SmoothSoftmaxMinusOneIsThePlainSoftmax) {
  const int64_t S = 2, H = 2;
  const auto q = Random(S * H, 40), k = Random(S * H, 41), v = Random(S * H, 42);
  const auto expected = Reference(q, k, v, 1, 1, 1, S, S, H, 1.0f / std::sqrt(2.0f), -INFINITY,
                                  [](int64_t, int64_t i, int64_t j) { return j <= i; });
  OpTest test("GroupQueryAttention", 1, kMsDomain);
  test.Input(F({1, S, H}, q)).Input(F({1, S, H}, k)).Input(F({1, S, H}, v)).AbsentInput().AbsentInput();
  test.Input(Tensor::FromVector<int32_t>({1}, {static_cast<int32_t>(S - 1)}))
      .Input(Tensor::FromVector<int32_t>({}, {static_cast<int32_t>(S)}));
  test.Attr("num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Attr("smooth_softmax", int64_t{-1}).Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, S, H}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
}

TEST(GroupQueryAttention, PromptIsCausalAndRotaryRotatesQAndK) {
  // One head of size 2, rotary over both values: position p rotates by angle p * 0.5.
  const int64_t S = 3, H = 2;
  const auto q = Random(S * H, 21), k = Random(S * H, 22), v = Random(S * H, 23);
  std::vector<float> cos(4), sin(4);
  for (int p = 0; p < 4; ++p) {
    cos[p] = std::cos(0.5f * p);
    sin[p] = std::sin(0.5f * p);
  }
  auto rotate = [&](std::vector<float> x) {
    for (int64_t s = 0; s < S; ++s) {
      const float a = x[s * 2], b = x[s * 2 + 1];
      x[s * 2] = a * cos[s] - b * sin[s];
      x[s * 2 + 1] = b * cos[s] + a * sin[s];
    }
    return x;
  };
  const auto expected = Reference(rotate(q), rotate(k), v, 1, 1, 1, S, S, H, 1.0f / std::sqrt(2.0f), -INFINITY,
                                  [](int64_t, int64_t i, int64_t j) { return j <= i; });
  OpTest test("GroupQueryAttention", 1, kMsDomain);
  test.Input(F({1, S, H}, q)).Input(F({1, S, H}, k)).Input(F({1, S, H}, v)).AbsentInput().AbsentInput();
  test.Input(Tensor::FromVector<int32_t>({1}, {static_cast<int32_t>(S - 1)}))
      .Input(Tensor::FromVector<int32_t>({}, {static_cast<int32_t>(S)}));
  test.Input(F({4, 1}, cos)).Input(F({4, 1}, sin));
  test.Attr("num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Attr("do_rotary", int64_t{1}).Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, S, H}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
}

TEST(GroupQueryAttention, LocalWindowHidesOldKeys) {
  const int64_t S = 4, H = 2;
  const auto q = Random(S * H, 24), k = Random(S * H, 25), v = Random(S * H, 26);
  // Window 2: a query sees its own key and the one before (ONNX Runtime 1.30's CPU kernel).
  const auto expected = Reference(q, k, v, 1, 1, 1, S, S, H, 1.0f / std::sqrt(2.0f), -INFINITY,
                                  [](int64_t, int64_t i, int64_t j) { return j <= i && j > i - 2; });
  auto run = [&](int64_t window) {
    OpTest test("GroupQueryAttention", 1, kMsDomain);
    test.Input(F({1, S, H}, q)).Input(F({1, S, H}, k)).Input(F({1, S, H}, v)).AbsentInput().AbsentInput();
    test.Input(Tensor::FromVector<int32_t>({1}, {static_cast<int32_t>(S - 1)}))
        .Input(Tensor::FromVector<int32_t>({}, {static_cast<int32_t>(S)}));
    test.Attr("num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Attr("local_window_size", window).Outputs(3);
    return test.Run(RegisterAllKernels);
  };
  auto out = run(2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, S, H}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
  // Window 0 leaves no key: zeros, as ONNX Runtime writes; the cache is still written.
  auto zeros = run(0);
  ASSERT_TRUE(zeros.ok()) << zeros.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, S, H}, std::vector<float>(S * H, 0.0f)), (*zeros)[0].tensor(), 0, 0));
  EXPECT_TRUE(TensorsNear(F({1, 1, S, H}, k), (*zeros)[1].tensor(), 0, 0));
}

// Past 1024 keys RunAttention goes 512 keys at a time with an online softmax: a causal window
// (keys hidden with -inf, whole chunks of them for late rows) and causal attention with padded key
// lengths (-10000 added) over 1100 tokens still match the reference.
TEST(GroupQueryAttention, LongPromptWindowGoesByKeyChunks) {
  const int64_t S = 1100, H = 4, W = 600;
  const auto q = Random(S * H, 27), k = Random(S * H, 28), v = Random(S * H, 29);
  const auto expected = Reference(q, k, v, 1, 1, 1, S, S, H, 0.5f, -INFINITY,
                                  [](int64_t, int64_t i, int64_t j) { return j <= i && j > i - W; });
  OpTest test("GroupQueryAttention", 1, kMsDomain);
  test.Input(F({1, S, H}, q)).Input(F({1, S, H}, k)).Input(F({1, S, H}, v)).AbsentInput().AbsentInput();
  test.Input(Tensor::FromVector<int32_t>({1}, {static_cast<int32_t>(S - 1)}))
      .Input(Tensor::FromVector<int32_t>({}, {static_cast<int32_t>(S)}));
  test.Attr("num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Attr("local_window_size", W).Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, S, H}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
}

TEST(MultiHeadAttention, LongCausalWithKeyLengthsGoesByKeyChunks) {
  const int64_t B = 2, S = 1100, N = 2, H = 4, D = N * H;
  const auto q = Random(B * S * D, 30), k = Random(B * S * D, 31), v = Random(B * S * D, 32);
  const std::vector<int32_t> lengths = {1100, 700};
  const auto expected = Reference(ToHeads(q, B, S, N, H, D), ToHeads(k, B, S, N, H, D), ToHeads(v, B, S, N, H, D), B, N,
                                  N, S, S, H, 0.5f, -10000.0f,
                                  [&](int64_t b, int64_t i, int64_t j) { return j <= i && j < lengths[b]; });
  OpTest test("MultiHeadAttention", 1, kMsDomain);
  test.Input(F({B, S, D}, q)).Input(F({B, S, D}, k)).Input(F({B, S, D}, v)).AbsentInput();
  test.Input(Tensor::FromVector<int32_t>({B}, lengths)).Attr("num_heads", N).Attr("unidirectional", int64_t{1});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({B, S, D}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
}

// A prompt of 40 tokens, 4 query heads over 2 kv heads: the two heads of a group and the query
// blocks share K^T and V packed once (attention_core.cc SharedKeys).
TEST(GroupQueryAttention, GroupedPromptSharesPackedKeys) {
  const int64_t S = 40, N = 4, Nkv = 2, H = 8;
  const auto q = Random(S * N * H, 33), k = Random(S * Nkv * H, 34), v = Random(S * Nkv * H, 35);
  const auto expected = Reference(ToHeads(q, 1, S, N, H, N * H), ToHeads(k, 1, S, Nkv, H, Nkv * H),
                                  ToHeads(v, 1, S, Nkv, H, Nkv * H), 1, N, Nkv, S, S, H, 1.0f / std::sqrt(8.0f),
                                  -INFINITY, [](int64_t, int64_t i, int64_t j) { return j <= i; });
  OpTest test("GroupQueryAttention", 1, kMsDomain);
  test.Input(F({1, S, N * H}, q)).Input(F({1, S, Nkv * H}, k)).Input(F({1, S, Nkv * H}, v)).AbsentInput().AbsentInput();
  test.Input(Tensor::FromVector<int32_t>({1}, {static_cast<int32_t>(S - 1)}))
      .Input(Tensor::FromVector<int32_t>({}, {static_cast<int32_t>(S)}));
  test.Attr("num_heads", N).Attr("kv_num_heads", Nkv).Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, S, N * H}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
}

// One token over a 1500-token past with padded key lengths (-10000 added past them): the step reads
// the cache as dot products and weighted rows, 512 keys at a time with the online softmax.
TEST(MultiHeadAttention, DecoderStepOverALongPastGoesByKeyChunks) {
  const int64_t B = 2, S = 1, P = 1499, N = 2, H = 4, D = N * H, T = P + S;
  const auto q = Random(B * D, 36), k = Random(B * D, 37), v = Random(B * D, 38);
  const auto pk = Random(B * N * P * H, 39), pv = Random(B * N * P * H, 40);
  const std::vector<int32_t> lengths = {1500, 900};
  const auto kk = Concat(pk, ToHeads(k, B, S, N, H, D), B, N, P, S, H), vv = Concat(pv, ToHeads(v, B, S, N, H, D), B, N, P, S, H);
  const auto expected = Reference(ToHeads(q, B, S, N, H, D), kk, vv, B, N, N, S, T, H, 0.5f, -10000.0f,
                                  [&](int64_t b, int64_t, int64_t j) { return j < lengths[b]; });
  OpTest test("MultiHeadAttention", 1, kMsDomain);
  test.Input(F({B, S, D}, q)).Input(F({B, S, D}, k)).Input(F({B, S, D}, v)).AbsentInput();
  test.Input(Tensor::FromVector<int32_t>({B}, lengths)).AbsentInput();
  test.Input(F({B, N, P, H}, pk)).Input(F({B, N, P, H}, pv)).Attr("num_heads", N).Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({B, S, D}, expected), (*out)[0].tensor(), 1e-4, 1e-5));
}

TEST(RotaryEmbedding, ContribInputOrderWithScalarPositionOffset) {
  // (B=1, S=2, hidden=4) with heads of 4, rotary over all of it: token s at position 1 + s.
  const std::vector<float> cos = {9, 9, 0.5f, 0.0f, 1.0f, 0.0f}, sin = {9, 9, 0.25f, 1.0f, 0.0f, 1.0f};
  OpTest test("RotaryEmbedding", 1, kMsDomain);
  test.Input(F({1, 2, 4}, {1, 2, 3, 4, 1, 2, 3, 4}))
      .Input(Tensor::FromVector<int64_t>({1}, {1}))
      .Input(F({3, 2}, cos))
      .Input(F({3, 2}, sin));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // token 0 (row 1): pairs (1, 3) by (0.5, 0.25) and (2, 4) by (0, 1); token 1 (row 2): (1, 0) and (0, 1).
  EXPECT_TRUE(TensorsNear(F({1, 2, 4}, {0.5f - 0.75f, -4, 0.25f + 1.5f, 2, 1, -4, 3, 2}), (*out)[0].tensor()));
}

TEST(Attention, RefusesDoRotary) {
  OpTest test("Attention", 1, kMsDomain);
  test.Input(F({1, 1, 2}, {1, 2})).Input(F({2, 6}, std::vector<float>(12, 0.0f)));
  test.Attr("num_heads", int64_t{1}).Attr("do_rotary", int64_t{1});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnimplemented);
}

// com.onnxflow FusedAttention with q, k and v packed in one projection's output (graph/qkv_merge.cc),
// heads of D for q and k and of Dv for v: the same values as the three read separately; a packed
// input of another width is refused, its shape named.
TEST(FusedAttention, PackedProjectionReadsAsThreeInputs) {
  const int64_t B = 2, S = 3, N = 2, D = 4, Dv = 3, W = N * (2 * D + Dv);
  const std::vector<float> packed = Random(static_cast<size_t>(B * S * W), 41);
  std::vector<float> q, k, v;
  for (int64_t r = 0; r < B * S; ++r) {
    const float* row = packed.data() + r * W;
    q.insert(q.end(), row, row + N * D);
    k.insert(k.end(), row + N * D, row + 2 * N * D);
    v.insert(v.end(), row + 2 * N * D, row + W);
  }
  const Tensor mask = F({1, 1, 1, S}, {0.0f, -10000.0f, 0.0f});
  OpTest separate("FusedAttention", 1, kOnnxflowDomain);
  separate.Input(F({B, S, N, D}, q)).Input(F({B, S, N, D}, k)).Input(F({B, S, N, Dv}, v)).Input(mask);
  separate.Attr("scale", 0.5f);
  auto want = separate.Run(RegisterAllKernels);
  ASSERT_TRUE(want.ok()) << want.status().ToString();

  auto run_packed = [&](const Tensor& qkv) {
    OpTest test("FusedAttention", 1, kOnnxflowDomain);
    test.Input(qkv).AbsentInput().AbsentInput().Input(mask).Attr("scale", 0.5f);
    test.Attr("packed_heads", N).Attr("packed_head_size", D).Attr("packed_v_head_size", Dv);
    return test.Run(RegisterAllKernels);
  };
  auto got = run_packed(F({B, S, W}, packed));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const Tensor& a = (*want)[0].tensor();
  const Tensor& b = (*got)[0].tensor();
  ASSERT_EQ(a.shape(), (Shape{B, S, N, Dv}));
  ASSERT_EQ(b.shape(), a.shape());
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;

  auto wrong = run_packed(F({B, S, W - 1}, std::vector<float>(static_cast<size_t>(B * S * (W - 1)), 0.0f)));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("the packed q, k, v [2,3,21] is not (B, S) rows of 22 for 2 heads of 4 and 3 with B, S "
                                           "as Reshape entries 0, 0"),
            std::string::npos)
      << wrong.status().message();
}

// FusedAttention on a float16 model's stored activations (graph/blocked_half): 16-bit q, k, v
// (packed, or separate and mixed with float, grouped heads in a cache layout) with a mask per
// batch entry and head, read one head at a time; the same values as the float kernel on the
// widened inputs, rounded once when output_type is FLOAT16, q's type without it.
TEST(FusedAttention, SixteenBitOperandsOneHeadAtATime) {
  const int64_t B = 2, S = 5, N = 3, D = 8, Dv = 6, W = N * (2 * D + Dv);
  const SixteenBitValues qkv = RoundToSixteenBits(Random(static_cast<size_t>(B * S * W), 51), DataType::kFloat16, {B, S, W});
  const Tensor mask = F({B, N, S, S}, Random(static_cast<size_t>(B * N * S * S), 52));
  auto run = [&](const Tensor& input, int64_t output_type) {
    OpTest test("FusedAttention", 1, kOnnxflowDomain);
    test.Input(input).AbsentInput().AbsentInput().Input(mask).Attr("scale", 0.35f);
    test.Attr("packed_heads", N).Attr("packed_head_size", D).Attr("packed_v_head_size", Dv);
    if (output_type != 0) test.Attr("output_type", output_type);
    return test.Run(RegisterAllKernels);
  };
  auto want = run(F({B, S, W}, qkv.widened), 0);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const Tensor& w = (*want)[0].tensor();
  for (const int64_t output_type : {int64_t{0}, int64_t{1}, int64_t{10}}) {
    auto got = run(qkv.tensor, output_type);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    const Tensor& y = (*got)[0].tensor();
    ASSERT_EQ(y.dtype(), output_type == 1 ? DataType::kFloat : DataType::kFloat16) << output_type;
    ASSERT_EQ(y.shape(), w.shape());
    for (int64_t i = 0; i < y.size(); ++i) {
      const float e = w.data<float>()[i];
      const float g = y.dtype() == DataType::kFloat ? y.data<float>()[i] : HalfToFloat(y.data<Float16>()[i].bits);
      ASSERT_NEAR(g, e, y.dtype() == DataType::kFloat ? 1e-5f : 1e-3f * (1.0f + std::fabs(e)))
          << "output_type " << output_type << " at " << i;
    }
  }

  // Grouped heads over a (B, Nkv, T, D) cache: a float16 q with float k and v.
  const int64_t Nq = 4, Nkv = 2, T = 7;
  const SixteenBitValues q = RoundToSixteenBits(Random(static_cast<size_t>(B * S * Nq * D), 53), DataType::kFloat16, {B, S, Nq, D});
  const std::vector<float> k = Random(static_cast<size_t>(B * Nkv * T * D), 54), v = Random(static_cast<size_t>(B * Nkv * T * Dv), 55);
  auto grouped = [&](const Tensor& q_in) {
    OpTest test("FusedAttention", 1, kOnnxflowDomain);
    test.Input(q_in).Input(F({B, Nkv, T, D}, k)).Input(F({B, Nkv, T, Dv}, v)).Attr("scale", 0.5f);
    test.Attr("kv_layout", std::string("BNSD")).Attr("kv_repeat", int64_t{2}).Attr("output_type", int64_t{1});
    return test.Run(RegisterAllKernels);
  };
  auto float_q = grouped(F({B, S, Nq, D}, q.widened));
  auto half_q = grouped(q.tensor);
  ASSERT_TRUE(float_q.ok() && half_q.ok()) << float_q.status().ToString() << " " << half_q.status().ToString();
  const Tensor& a = (*float_q)[0].tensor();
  const Tensor& b = (*half_q)[0].tensor();
  ASSERT_EQ(b.shape(), (Shape{B, S, Nq, Dv}));
  for (int64_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-5f) << i;

  EXPECT_TRUE(Refused(run(qkv.tensor, 3), StatusCode::kInvalidArgument,
                      "FusedAttention: output_type must be FLOAT (1), FLOAT16 (10) or BFLOAT16 (16), got 3"));
}

}  // namespace
}  // namespace onnxflow
