#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/attention/register.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

std::vector<float> Random(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

// The recurrence written out from the spec's equations, one token at a time.
struct Ref {
  int64_t b = 1, t = 1, hq = 1, hkv = 1, dk = 1, dv = 1;
  bool gated = false, delta = false;
  int64_t decay_width = 1, beta_width = 1;  // per head: 1 / dk; beta per head or shared
  float scale = 0.0f;

  void Run(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
           const std::vector<float>& past, const std::vector<float>& g, const std::vector<float>& beta,
           std::vector<float>* out, std::vector<float>* state) const {
    const double s = scale == 0 ? 1.0 / std::sqrt(static_cast<double>(dk)) : scale;
    *state = past.empty() ? std::vector<float>(b * hkv * dk * dv, 0.0f) : past;
    out->assign(b * t * hq * dv, 0.0f);
    for (int64_t bi = 0; bi < b; ++bi) {
      for (int64_t ti = 0; ti < t; ++ti) {
        for (int64_t h = 0; h < hkv; ++h) {
          float* S = state->data() + (bi * hkv + h) * dk * dv;
          const float* kt = k.data() + (bi * t + ti) * hkv * dk + h * dk;
          const float* vt = v.data() + (bi * t + ti) * hkv * dv + h * dv;
          if (gated) {
            for (int64_t d = 0; d < dk; ++d) {
              const float gd = decay_width == 1 ? g[(bi * t + ti) * hkv + h] : g[(bi * t + ti) * hkv * dk + h * dk + d];
              for (int64_t m = 0; m < dv; ++m) S[d * dv + m] *= std::exp(gd);
            }
          }
          std::vector<float> u(vt, vt + dv);
          if (delta) {
            const float bt = beta_width == 1 ? beta[bi * t + ti] : beta[(bi * t + ti) * hkv + h];
            for (int64_t m = 0; m < dv; ++m) {
              double r = 0;
              for (int64_t d = 0; d < dk; ++d) r += S[d * dv + m] * kt[d];
              u[m] = bt * (vt[m] - static_cast<float>(r));
            }
          }
          for (int64_t d = 0; d < dk; ++d)
            for (int64_t m = 0; m < dv; ++m) S[d * dv + m] += kt[d] * u[m];
          for (int64_t qh = h * (hq / hkv); qh < (h + 1) * (hq / hkv); ++qh) {
            const float* qt = q.data() + (bi * t + ti) * hq * dk + qh * dk;
            for (int64_t m = 0; m < dv; ++m) {
              double o = 0;
              for (int64_t d = 0; d < dk; ++d) o += qt[d] * S[d * dv + m];
              (*out)[(bi * t + ti) * hq * dv + qh * dv + m] = static_cast<float>(s * o);
            }
          }
        }
      }
    }
  }
};

TEST(LinearAttention, LinearHandComputed) {
  OpTest test("LinearAttention", 27);
  test.Input(F({1, 1, 2}, {1, 2})).Input(F({1, 1, 2}, {3, 4})).Input(F({1, 1, 1}, {5})).Outputs(2);
  test.Attr("q_num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Attr("update_rule", std::string("linear"));
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 1, 1}, {static_cast<float>(11 * 5 / std::sqrt(2.0))}), (*out)[0].tensor()));
  EXPECT_TRUE(TensorsNear(F({1, 1, 2, 1}, {15, 20}), (*out)[1].tensor()));
}

TEST(LinearAttention, GatedDeltaGqaWithPastMatchesReference) {
  Ref r;
  r.b = 2, r.t = 3, r.hq = 4, r.hkv = 2, r.dk = 3, r.dv = 5, r.gated = r.delta = true, r.decay_width = 3;
  r.beta_width = 2;
  const auto q = Random(r.b * r.t * r.hq * r.dk, 1), k = Random(r.b * r.t * r.hkv * r.dk, 2),
             v = Random(r.b * r.t * r.hkv * r.dv, 3), past = Random(r.b * r.hkv * r.dk * r.dv, 4),
             g = Random(r.b * r.t * r.hkv * r.dk, 5, -0.5f, 0.0f), beta = Random(r.b * r.t * r.hkv, 6, 0.0f, 1.0f);
  std::vector<float> want_out, want_state;
  r.Run(q, k, v, past, g, beta, &want_out, &want_state);
  OpTest test("LinearAttention", 27);
  test.Input(F({2, 3, 12}, q)).Input(F({2, 3, 6}, k)).Input(F({2, 3, 10}, v)).Input(F({2, 2, 3, 5}, past));
  test.Input(F({2, 3, 6}, g)).Input(F({2, 3, 2}, beta)).Outputs(2);
  test.Attr("q_num_heads", int64_t{4}).Attr("kv_num_heads", int64_t{2});
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2, 3, 20}, want_out), (*out)[0].tensor(), 1e-4, 1e-5));
  EXPECT_TRUE(TensorsNear(F({2, 2, 3, 5}, want_state), (*out)[1].tensor(), 1e-4, 1e-5));
}

TEST(LinearAttention, GatedPerHeadDecayAndDeltaSharedBeta) {
  Ref r;
  r.b = 1, r.t = 4, r.hq = 2, r.hkv = 2, r.dk = 2, r.dv = 2, r.scale = 0.5f;
  const auto q = Random(16, 7), k = Random(16, 8), v = Random(16, 9);
  const auto g = Random(8, 10, -1.0f, 0.0f), beta = Random(4, 11, 0.0f, 1.0f);
  {
    Ref gated = r;
    gated.gated = true;
    std::vector<float> want_out, want_state;
    gated.Run(q, k, v, {}, g, {}, &want_out, &want_state);
    OpTest test("LinearAttention", 27);
    test.Input(F({1, 4, 4}, q)).Input(F({1, 4, 4}, k)).Input(F({1, 4, 4}, v)).AbsentInput().Input(F({1, 4, 2}, g));
    test.Attr("q_num_heads", int64_t{2}).Attr("kv_num_heads", int64_t{2}).Attr("scale", 0.5f);
    test.Attr("update_rule", std::string("gated")).Outputs(2);
    auto out = test.Run(RegisterAttentionKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({1, 4, 4}, want_out), (*out)[0].tensor(), 1e-5, 1e-6));
  }
  {
    Ref delta = r;
    delta.delta = true;
    std::vector<float> want_out, want_state;
    delta.Run(q, k, v, {}, {}, beta, &want_out, &want_state);
    OpTest test("LinearAttention", 27);
    test.Input(F({1, 4, 4}, q)).Input(F({1, 4, 4}, k)).Input(F({1, 4, 4}, v)).AbsentInput().AbsentInput();
    test.Input(F({1, 4, 1}, beta)).Outputs(2);
    test.Attr("q_num_heads", int64_t{2}).Attr("kv_num_heads", int64_t{2}).Attr("scale", 0.5f);
    test.Attr("update_rule", std::string("delta"));
    auto out = test.Run(RegisterAttentionKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({1, 4, 4}, want_out), (*out)[0].tensor(), 1e-5, 1e-6));
    EXPECT_TRUE(TensorsNear(F({1, 2, 2, 2}, want_state), (*out)[1].tensor(), 1e-5, 1e-6));
  }
}

TEST(LinearAttention, Float16KeepsStateInFloat) {
  Ref r;
  r.t = 2, r.dk = 2, r.dv = 2;
  const auto q = Random(4, 12), k = Random(4, 13), v = Random(4, 14);
  std::vector<float> want_out, want_state;
  r.Run(q, k, v, {}, {}, {}, &want_out, &want_state);
  auto half = [](const std::vector<float>& x) {
    std::vector<Float16> h;
    for (float f : x) h.push_back(Float16{FloatToHalf(f)});
    return h;
  };
  OpTest test("LinearAttention", 27);
  test.Input(Tensor::FromVector<Float16>({1, 2, 2}, half(q)))
      .Input(Tensor::FromVector<Float16>({1, 2, 2}, half(k)))
      .Input(Tensor::FromVector<Float16>({1, 2, 2}, half(v)))
      .Attr("q_num_heads", int64_t{1})
      .Attr("kv_num_heads", int64_t{1})
      .Attr("update_rule", std::string("linear"))
      .Outputs(2);
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<Float16>({1, 2, 2}, half(want_out)), (*out)[0].tensor(), 5e-3, 5e-3));
  EXPECT_EQ(DataType::kFloat16, (*out)[1].tensor().dtype());
}

// Without a past state, present_state takes the type the model declares (S, which no input binds
// then): float16 over float activations.
TEST(LinearAttention, StateTypeAsDeclaredWithoutPast) {
  Ref r;
  r.t = 2, r.dk = 2, r.dv = 2;
  const auto q = Random(4, 22), k = Random(4, 23), v = Random(4, 24);
  std::vector<float> want_out, want_state;
  r.Run(q, k, v, {}, {}, {}, &want_out, &want_state);
  OpTest test("LinearAttention", 27);
  test.Input(F({1, 2, 2}, q)).Input(F({1, 2, 2}, k)).Input(F({1, 2, 2}, v))
      .Attr("q_num_heads", int64_t{1})
      .Attr("kv_num_heads", int64_t{1})
      .Attr("update_rule", std::string("linear"))
      .Outputs(2)
      .OutputTypes({DataType::kFloat, DataType::kFloat16});
  auto out = test.Run(RegisterAttentionKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().dtype(), DataType::kFloat);
  ASSERT_EQ((*out)[1].tensor().dtype(), DataType::kFloat16);
  for (size_t i = 0; i < want_state.size(); ++i) {
    EXPECT_NEAR(HalfToFloat((*out)[1].tensor().data<Float16>()[i].bits), want_state[i], 2e-3) << i;
  }
}

TEST(LinearAttention, Errors) {
  const auto x = Random(64, 15);
  auto base = [&](OpTest& t) {
    t.Attr("q_num_heads", int64_t{2}).Attr("kv_num_heads", int64_t{2});
    return &t;
  };
  {  // gated_delta (the default) without decay/beta is refused at load
    OpTest t("LinearAttention", 27);
    base(t)->Input(F({1, 1, 4}, x)).Input(F({1, 1, 4}, x)).Input(F({1, 1, 4}, x));
    EXPECT_EQ(StatusCode::kInvalidArgument, t.Run(RegisterAttentionKernels).status().code());
  }
  {  // key width is not kv_num_heads * d_k
    OpTest t("LinearAttention", 27);
    base(t)->Input(F({1, 1, 4}, x)).Input(F({1, 1, 6}, x)).Input(F({1, 1, 4}, x)).Attr("update_rule", std::string("linear"));
    EXPECT_EQ(StatusCode::kInvalidArgument, t.Run(RegisterAttentionKernels).status().code());
  }
  {  // decay of a width that is neither per head nor per key dim
    OpTest t("LinearAttention", 27);
    base(t)->Input(F({1, 1, 4}, x)).Input(F({1, 1, 4}, x)).Input(F({1, 1, 4}, x)).AbsentInput().Input(F({1, 1, 3}, x));
    t.Attr("update_rule", std::string("gated"));
    EXPECT_EQ(StatusCode::kInvalidArgument, t.Run(RegisterAttentionKernels).status().code());
  }
  {  // past_state of the wrong shape
    OpTest t("LinearAttention", 27);
    base(t)->Input(F({1, 1, 4}, x)).Input(F({1, 1, 4}, x)).Input(F({1, 1, 4}, x)).Input(F({1, 2, 2, 3}, x));
    t.Attr("update_rule", std::string("linear"));
    EXPECT_EQ(StatusCode::kInvalidArgument, t.Run(RegisterAttentionKernels).status().code());
  }
  {  // heads that do not divide
    OpTest t("LinearAttention", 27);
    t.Attr("q_num_heads", int64_t{3}).Attr("kv_num_heads", int64_t{2}).Attr("update_rule", std::string("linear"));
    t.Input(F({1, 1, 6}, x)).Input(F({1, 1, 4}, x)).Input(F({1, 1, 4}, x));
    EXPECT_EQ(StatusCode::kInvalidArgument, t.Run(RegisterAttentionKernels).status().code());
  }
}

}  // namespace
}  // namespace onnxflow
