#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/attention/register.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

// A plain reference written from the spec, on 4D float data. k/v already hold past + new keys.
struct Ref {
  int64_t b = 1, hq = 1, hkv = 1, sq = 1, t = 1, d = 1, dv = 1;
  float scale = 0.0f;  // 0: 1/sqrt(d)
  float softcap = 0.0f;
  bool causal = false;
  int64_t past = 0;
  std::vector<float> mask;  // additive, [sq, t], or empty
  std::vector<int64_t> nonpad;

  std::vector<float> Run(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                         std::vector<float>* probs = nullptr) const {
    std::vector<float> y(b * hq * sq * dv, 0.0f);
    if (probs) probs->assign(b * hq * sq * t, 0.0f);
    const float s = scale == 0.0f ? 1.0f / std::sqrt(static_cast<float>(d)) : scale;
    for (int64_t bi = 0; bi < b; ++bi) {
      for (int64_t h = 0; h < hq; ++h) {
        const int64_t kh = h / (hq / hkv);
        for (int64_t i = 0; i < sq; ++i) {
          std::vector<double> sc(t), bias(t, 0.0);
          bool all_masked = true;
          for (int64_t j = 0; j < t; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < d; ++e) {
              dot += q[((bi * hq + h) * sq + i) * d + e] * k[((bi * hkv + kh) * t + j) * d + e];
            }
            dot *= s;
            if (softcap > 0) dot = softcap * std::tanh(dot / softcap);
            if (!mask.empty()) bias[j] += mask[i * t + j];
            const int64_t offset = past > 0 ? past : (!nonpad.empty() ? nonpad[bi] - sq : 0);
            if (causal && j > i + offset) bias[j] = -kInf;
            if (!nonpad.empty() && j >= nonpad[bi]) bias[j] = -kInf;
            if (bias[j] != -kInf) all_masked = false;
            sc[j] = dot + bias[j];
          }
          if (all_masked) continue;
          double mx = -kInf, sum = 0;
          for (double x : sc) mx = std::max(mx, x);
          for (double& x : sc) sum += (x = std::exp(x - mx));
          for (int64_t j = 0; j < t; ++j) {
            const double p = sc[j] / sum;
            if (probs) (*probs)[((bi * hq + h) * sq + i) * t + j] = static_cast<float>(p);
            for (int64_t e = 0; e < dv; ++e) {
              y[((bi * hq + h) * sq + i) * dv + e] += static_cast<float>(p * v[((bi * hkv + kh) * t + j) * dv + e]);
            }
          }
        }
      }
    }
    return y;
  }
};

// (B, H, S, D) -> (B, S, H*D)
std::vector<float> To3D(const std::vector<float>& x, int64_t b, int64_t h, int64_t s, int64_t d) {
  std::vector<float> out(x.size());
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t si = 0; si < s; ++si)
        for (int64_t e = 0; e < d; ++e) out[((bi * s + si) * h + hi) * d + e] = x[((bi * h + hi) * s + si) * d + e];
  return out;
}

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

TEST(Attention, HandComputed) {
  OpTest test("Attention", 23);
  test.Input(F({1, 1, 1, 1}, {1})).Input(F({1, 1, 2, 1}, {0, 1})).Input(F({1, 1, 2, 1}, {0, 1})).Attr("scale", 1.0f);
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float e = std::exp(1.0f);
  EXPECT_TRUE(TensorsNear(F({1, 1, 1, 1}, {e / (1 + e)}), (*out)[0].tensor()));
}

TEST(Attention, MaskCausalGqaMatchReference) {
  Ref r;
  r.b = 2, r.hq = 4, r.hkv = 2, r.sq = 3, r.t = 5, r.d = 4, r.dv = 3, r.causal = true;
  r.mask = Random(r.sq * r.t, 9);
  const auto q = Random(r.b * r.hq * r.sq * r.d, 1), k = Random(r.b * r.hkv * r.t * r.d, 2),
             v = Random(r.b * r.hkv * r.t * r.dv, 3);
  for (int threads : {1, 2}) {
    OpTest test("Attention", 23);
    test.Input(F({r.b, r.hq, r.sq, r.d}, q)).Input(F({r.b, r.hkv, r.t, r.d}, k)).Input(F({r.b, r.hkv, r.t, r.dv}, v));
    test.Input(F({r.sq, r.t}, r.mask)).Attr("is_causal", int64_t{1}).Threads(threads);
    auto out = test.Run(RegisterAttentionKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({r.b, r.hq, r.sq, r.dv}, r.Run(q, k, v)), (*out)[0].tensor(), 1e-5, 1e-6));
  }
}

TEST(Attention, LargerSizesSplitOverThreads) {
  Ref r;
  r.b = 2, r.hq = 4, r.hkv = 4, r.sq = 16, r.t = 16, r.d = 32, r.dv = 32, r.causal = true;
  const auto q = Random(r.b * r.hq * r.sq * r.d, 31), k = Random(r.b * r.hkv * r.t * r.d, 32),
             v = Random(r.b * r.hkv * r.t * r.dv, 33);
  for (int threads : {1, 2}) {
    OpTest test("Attention", 23);
    test.Input(F({r.b, r.hq, r.sq, r.d}, q)).Input(F({r.b, r.hkv, r.t, r.d}, k)).Input(F({r.b, r.hkv, r.t, r.dv}, v));
    test.Attr("is_causal", int64_t{1}).Threads(threads);
    auto out = test.Run(RegisterAttentionKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({r.b, r.hq, r.sq, r.dv}, r.Run(q, k, v)), (*out)[0].tensor(), 1e-4, 1e-5));
  }
}

TEST(Attention, ThreeDInputsMatchFourD) {
  Ref r;
  r.b = 2, r.hq = 6, r.hkv = 3, r.sq = 4, r.t = 3, r.d = 2, r.dv = 5, r.scale = 0.3f, r.softcap = 1.5f;
  const auto q = Random(r.b * r.hq * r.sq * r.d, 4), k = Random(r.b * r.hkv * r.t * r.d, 5),
             v = Random(r.b * r.hkv * r.t * r.dv, 6);
  OpTest test("Attention", 23);
  test.Input(F({r.b, r.sq, r.hq * r.d}, To3D(q, r.b, r.hq, r.sq, r.d)))
      .Input(F({r.b, r.t, r.hkv * r.d}, To3D(k, r.b, r.hkv, r.t, r.d)))
      .Input(F({r.b, r.t, r.hkv * r.dv}, To3D(v, r.b, r.hkv, r.t, r.dv)))
      .Attr("q_num_heads", int64_t{6})
      .Attr("kv_num_heads", int64_t{3})
      .Attr("scale", 0.3f)
      .Attr("softcap", 1.5f);
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto want = To3D(r.Run(q, k, v), r.b, r.hq, r.sq, r.dv);
  EXPECT_TRUE(TensorsNear(F({r.b, r.sq, r.hq * r.dv}, want), (*out)[0].tensor(), 1e-5, 1e-6));
}

TEST(Attention, PastAndPresentWithCausalOffset) {
  Ref r;
  r.b = 1, r.hq = 2, r.hkv = 2, r.sq = 2, r.t = 5, r.d = 3, r.dv = 3, r.causal = true, r.past = 3;
  const auto q = Random(r.b * r.hq * r.sq * r.d, 7);
  const auto past_k = Random(r.b * r.hkv * 3 * r.d, 8), new_k = Random(r.b * r.hkv * 2 * r.d, 9);
  const auto past_v = Random(r.b * r.hkv * 3 * r.dv, 10), new_v = Random(r.b * r.hkv * 2 * r.dv, 11);
  auto concat = [&](const std::vector<float>& a, const std::vector<float>& b, int64_t d) {
    std::vector<float> out;
    for (int64_t h = 0; h < r.hkv; ++h) {
      out.insert(out.end(), a.begin() + h * 3 * d, a.begin() + (h + 1) * 3 * d);
      out.insert(out.end(), b.begin() + h * 2 * d, b.begin() + (h + 1) * 2 * d);
    }
    return out;
  };
  const auto k = concat(past_k, new_k, r.d), v = concat(past_v, new_v, r.dv);
  OpTest test("Attention", 23);
  test.Input(F({1, 2, 2, 3}, q)).Input(F({1, 2, 2, 3}, new_k)).Input(F({1, 2, 2, 3}, new_v)).AbsentInput();
  test.Input(F({1, 2, 3, 3}, past_k)).Input(F({1, 2, 3, 3}, past_v)).Attr("is_causal", int64_t{1}).Outputs(3);
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 2, 2, 3}, r.Run(q, k, v)), (*out)[0].tensor(), 1e-5, 1e-6));
  EXPECT_TRUE(TensorsEqual(F({1, 2, 5, 3}, k), (*out)[1].tensor()));
  EXPECT_TRUE(TensorsEqual(F({1, 2, 5, 3}, v), (*out)[2].tensor()));
}

TEST(Attention, BoolMaskEqualsAdditiveAndFullyMaskedRowIsZero) {
  const auto q = Random(1 * 1 * 2 * 4, 12), k = Random(3 * 4, 13), v = Random(3 * 4, 14);
  // Row 0 sees keys 0 and 2; row 1 sees nothing.
  const std::vector<bool> allowed = {true, false, true, false, false, false};
  std::vector<float> additive;
  for (bool a : allowed) additive.push_back(a ? 0.0f : -kInf);
  OpTest with_bool("Attention", 23);
  with_bool.Input(F({1, 1, 2, 4}, q)).Input(F({1, 1, 3, 4}, k)).Input(F({1, 1, 3, 4}, v));
  with_bool.Input(Tensor::FromVector<bool>({2, 3}, allowed)).Outputs(4).Attr("qk_matmul_output_mode", int64_t{3});
  auto a = with_bool.Run(RegisterAttentionKernels);
  ASSERT_TRUE(a.ok()) << a.status().ToString();

  Ref r;
  r.sq = 2, r.t = 3, r.d = 4, r.dv = 4, r.mask = additive;
  std::vector<float> probs;
  const auto want = r.Run(q, k, v, &probs);
  EXPECT_TRUE(TensorsNear(F({1, 1, 2, 4}, want), (*a)[0].tensor()));
  EXPECT_TRUE(TensorsNear(F({1, 1, 2, 3}, probs), (*a)[3].tensor()));
  for (int e = 0; e < 4; ++e) EXPECT_EQ(0.0f, (*a)[0].tensor().data<float>()[4 + e]);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(0.0f, (*a)[3].tensor().data<float>()[3 + j]);

  OpTest with_float("Attention", 23);
  with_float.Input(F({1, 1, 2, 4}, q)).Input(F({1, 1, 3, 4}, k)).Input(F({1, 1, 3, 4}, v)).Input(F({2, 3}, additive));
  auto b = with_float.Run(RegisterAttentionKernels);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(TensorsNear((*a)[0].tensor(), (*b)[0].tensor()));
}

TEST(Attention, QkOutputModes) {
  const std::vector<float> q = {1, 2}, k = {1, 0, 0, 1, 1, 1}, v = {1, 2, 3};
  const std::vector<float> mask = {0.5f, -kInf, 0.0f};
  const float scale = 0.5f, cap = 1.0f;
  std::vector<float> raw, capped, biased;
  for (int j = 0; j < 3; ++j) {
    raw.push_back((q[0] * k[2 * j] + q[1] * k[2 * j + 1]) * scale);
    capped.push_back(cap * std::tanh(raw.back() / cap));
    biased.push_back(capped.back() + mask[j]);
  }
  const std::vector<float>* want[3] = {&raw, &capped, &biased};
  for (int64_t mode = 0; mode < 3; ++mode) {
    OpTest test("Attention", 23);
    test.Input(F({1, 1, 1, 2}, q)).Input(F({1, 1, 3, 2}, k)).Input(F({1, 1, 3, 1}, v)).Input(F({1, 3}, mask));
    test.Attr("scale", scale).Attr("softcap", cap).Attr("qk_matmul_output_mode", mode).Outputs(4);
    auto out = test.Run(RegisterAttentionKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({1, 1, 1, 3}, *want[mode]), (*out)[3].tensor())) << "mode " << mode;
  }
}

TEST(Attention, ShortMaskIsPaddedWithMinusInfinity) {
  const auto q = Random(2 * 4, 15), k = Random(4 * 4, 16), v = Random(4 * 2, 17);
  Ref r;
  r.sq = 2, r.t = 4, r.d = 4, r.dv = 2;
  const std::vector<float> short_mask = {0.1f, 0.2f, -0.3f, 0.4f};  // [2, 2]
  r.mask = {0.1f, 0.2f, -kInf, -kInf, -0.3f, 0.4f, -kInf, -kInf};
  OpTest test("Attention", 23);
  test.Input(F({1, 1, 2, 4}, q)).Input(F({1, 1, 4, 4}, k)).Input(F({1, 1, 4, 2}, v)).Input(F({2, 2}, short_mask));
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 1, 2, 2}, r.Run(q, k, v)), (*out)[0].tensor()));
}

TEST(Attention, NonpadKvSeqlenPadsAndOffsetsCausal) {
  Ref r;
  r.b = 2, r.hq = 2, r.hkv = 1, r.sq = 2, r.t = 6, r.d = 4, r.dv = 4, r.causal = true, r.nonpad = {4, 1};
  const auto q = Random(r.b * r.hq * r.sq * r.d, 18), k = Random(r.b * r.t * r.d, 19), v = Random(r.b * r.t * r.dv, 20);
  OpTest test("Attention", 24);
  test.Input(F({2, 2, 2, 4}, q)).Input(F({2, 1, 6, 4}, k)).Input(F({2, 1, 6, 4}, v));
  test.AbsentInput().AbsentInput().AbsentInput().Input(Tensor::FromVector<int64_t>({2}, r.nonpad));
  test.Attr("is_causal", int64_t{1});
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // Batch 1's first query row has offset -1: no key, a zero row.
  EXPECT_TRUE(TensorsNear(F({2, 2, 2, 4}, r.Run(q, k, v)), (*out)[0].tensor(), 1e-5, 1e-6));
}

TEST(Attention, SlidingWindowAtOpset25) {
  Ref r;
  r.sq = 4, r.t = 4, r.d = 2, r.dv = 2;
  // left 1, right 0: query i sees keys i-1 and i.
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) r.mask.push_back(j == i || j == i - 1 ? 0.0f : -kInf);
  const auto q = Random(8, 21), k = Random(8, 22), v = Random(8, 23);
  OpTest test("Attention", 25);
  test.Input(F({1, 1, 4, 2}, q)).Input(F({1, 1, 4, 2}, k)).Input(F({1, 1, 4, 2}, v));
  test.Attr("left_window_size", int64_t{1}).Attr("right_window_size", int64_t{0});
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 1, 4, 2}, r.Run(q, k, v)), (*out)[0].tensor()));
}

TEST(Attention, DoubleAndFloat16) {
  Ref r;
  r.hq = 2, r.hkv = 2, r.sq = 3, r.t = 4, r.d = 8, r.dv = 8;
  const auto q = Random(2 * 3 * 8, 24), k = Random(2 * 4 * 8, 25), v = Random(2 * 4 * 8, 26);
  const auto want = r.Run(q, k, v);

  auto as_double = [](const std::vector<float>& x) { return std::vector<double>(x.begin(), x.end()); };
  OpTest d("Attention", 23);
  d.Input(Tensor::FromVector<double>({1, 2, 3, 8}, as_double(q)))
      .Input(Tensor::FromVector<double>({1, 2, 4, 8}, as_double(k)))
      .Input(Tensor::FromVector<double>({1, 2, 4, 8}, as_double(v)));
  auto out_d = d.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out_d.ok()) << out_d.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1, 2, 3, 8}, as_double(want)), (*out_d)[0].tensor(), 1e-5, 1e-6));

  auto as_half = [](const std::vector<float>& x) {
    std::vector<Float16> h;
    for (float f : x) h.push_back(Float16{FloatToHalf(f)});
    return h;
  };
  OpTest h("Attention", 23);
  h.Input(Tensor::FromVector<Float16>({1, 2, 3, 8}, as_half(q)))
      .Input(Tensor::FromVector<Float16>({1, 2, 4, 8}, as_half(k)))
      .Input(Tensor::FromVector<Float16>({1, 2, 4, 8}, as_half(v)));
  auto out_h = h.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out_h.ok()) << out_h.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<Float16>({1, 2, 3, 8}, as_half(want)), (*out_h)[0].tensor(), 1e-2, 1e-2));
}

TEST(Attention, BadShapesAreErrors) {
  const auto x = Random(64, 27);
  auto run = [&](OpTest& t) { return t.Run(RegisterAttentionKernels).status(); };
  {  // q heads not a multiple of kv heads
    OpTest t("Attention", 23);
    t.Input(F({1, 3, 1, 2}, x)).Input(F({1, 2, 1, 2}, x)).Input(F({1, 2, 1, 2}, x));
    EXPECT_EQ(StatusCode::kInvalidArgument, run(t).code());
  }
  {  // K head size differs from Q's
    OpTest t("Attention", 23);
    t.Input(F({1, 1, 1, 2}, x)).Input(F({1, 1, 1, 3}, x)).Input(F({1, 1, 1, 2}, x));
    EXPECT_EQ(StatusCode::kInvalidArgument, run(t).code());
  }
  {  // mask that does not broadcast
    OpTest t("Attention", 23);
    t.Input(F({1, 1, 2, 2}, x)).Input(F({1, 1, 3, 2}, x)).Input(F({1, 1, 3, 2}, x)).Input(F({3, 3}, x));
    EXPECT_EQ(StatusCode::kInvalidArgument, run(t).code());
  }
  {  // mask longer than the keys
    OpTest t("Attention", 23);
    t.Input(F({1, 1, 2, 2}, x)).Input(F({1, 1, 3, 2}, x)).Input(F({1, 1, 3, 2}, x)).Input(F({2, 4}, x));
    EXPECT_EQ(StatusCode::kInvalidArgument, run(t).code());
  }
  {  // past_key without past_value
    OpTest t("Attention", 23);
    t.Input(F({1, 1, 1, 2}, x)).Input(F({1, 1, 1, 2}, x)).Input(F({1, 1, 1, 2}, x)).AbsentInput();
    t.Input(F({1, 1, 2, 2}, x));
    EXPECT_EQ(StatusCode::kInvalidArgument, run(t).code());
  }
  {  // 3D inputs without head counts
    OpTest t("Attention", 23);
    t.Input(F({1, 1, 4}, x)).Input(F({1, 1, 4}, x)).Input(F({1, 1, 4}, x));
    EXPECT_EQ(StatusCode::kInvalidArgument, run(t).code());
  }
  {  // nonpad_kv_seqlen of the wrong length
    OpTest t("Attention", 24);
    t.Input(F({2, 1, 1, 2}, x)).Input(F({2, 1, 1, 2}, x)).Input(F({2, 1, 1, 2}, x));
    t.AbsentInput().AbsentInput().AbsentInput().Input(Tensor::FromVector<int64_t>({3}, {1, 1, 1}));
    EXPECT_EQ(StatusCode::kInvalidArgument, run(t).code());
  }
  {  // unknown qk_matmul_output_mode is refused at load
    OpTest t("Attention", 23);
    t.Input(F({1, 1, 1, 2}, x)).Input(F({1, 1, 1, 2}, x)).Input(F({1, 1, 1, 2}, x)).Attr("qk_matmul_output_mode", int64_t{7});
    EXPECT_TRUE(Refused(run(t), StatusCode::kInvalidArgument, "qk_matmul_output_mode must be 0, 1, 2 or 3, got 7"));
  }
}

}  // namespace
}  // namespace onnxflow
