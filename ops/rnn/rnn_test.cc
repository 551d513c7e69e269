// RNN, GRU and LSTM against a plain reference written from the spec's equations, plus
// hand-computed values and the error paths.
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/rnn/register.h"

namespace onnxflow {
namespace {

// The first values of `v` that `shape` holds (the tests draw their operands from one long random
// vector; FromVector itself refuses a count that does not match).
Tensor F(Shape shape, const std::vector<float>& v) {
  const size_t n = static_cast<size_t>(std::min<int64_t>(ElementCount(shape), static_cast<int64_t>(v.size())));
  return Tensor::FromVector<float>(std::move(shape), std::vector<float>(v.begin(), v.begin() + n));
}

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

using Fn = std::function<double(double)>;
double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One layer in layout 0, written straight from the equations.
struct Ref {
  std::string op;  // RNN, GRU, LSTM
  int64_t S = 1, B = 1, I = 1, H = 1, D = 1;
  bool reverse = false, lbr = false, input_forget = false;
  double clip = 0;
  std::vector<Fn> f;  // per direction: RNN 1, GRU 2, LSTM 3 functions
  std::vector<float> x, w, r, bias, h0, c0, p;
  std::vector<int64_t> lens;
  std::vector<float> y, yh, yc;

  int64_t G() const { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }
  double Cl(double v) const { return clip > 0 ? std::max(-clip, std::min(clip, v)) : v; }
  // sum_k m[row, k] * v[k] for the weight block of direction d
  double Mv(const std::vector<float>& m, int64_t d, int64_t row, int64_t n, const double* v) const {
    double s = 0;
    for (int64_t k = 0; k < n; ++k) s += m[(d * G() * H + row) * n + k] * v[k];
    return s;
  }
  double Bias(int64_t d, int64_t i) const { return bias.empty() ? 0.0 : bias[d * 2 * G() * H + i]; }

  void Run() {
    const int64_t g = G(), nf = op == "RNN" ? 1 : op == "GRU" ? 2 : 3;
    y.assign(S * D * B * H, 0.0f);
    yh.assign(D * B * H, 0.0f);
    yc.assign(D * B * H, 0.0f);
    for (int64_t d = 0; d < D; ++d) {
      for (int64_t b = 0; b < B; ++b) {
        std::vector<double> h(H, 0.0), c(H, 0.0);
        for (int64_t k = 0; k < H; ++k) {
          if (!h0.empty()) h[k] = h0[(d * B + b) * H + k];
          if (!c0.empty()) c[k] = c0[(d * B + b) * H + k];
        }
        const int64_t len = lens.empty() ? S : lens[b];
        for (int64_t step = 0; step < len; ++step) {
          const int64_t t = (reverse || d == 1) ? len - 1 - step : step;
          std::vector<double> xt(I);
          for (int64_t i = 0; i < I; ++i) xt[i] = x[(t * B + b) * I + i];
          auto pre = [&](int64_t gate, int64_t k) {
            return Mv(w, d, gate * H + k, I, xt.data()) + Mv(r, d, gate * H + k, H, h.data()) + Bias(d, gate * H + k) +
                   Bias(d, g * H + gate * H + k);
          };
          std::vector<double> nh(H);
          if (op == "RNN") {
            for (int64_t k = 0; k < H; ++k) nh[k] = f[d * nf](Cl(pre(0, k)));
          } else if (op == "GRU") {
            std::vector<double> z(H), rr(H), rh(H);
            for (int64_t k = 0; k < H; ++k) {
              z[k] = f[d * nf](Cl(pre(0, k)));
              rr[k] = f[d * nf](Cl(pre(1, k)));
              rh[k] = rr[k] * h[k];
            }
            for (int64_t k = 0; k < H; ++k) {
              const double wx = Mv(w, d, 2 * H + k, I, xt.data()) + Bias(d, 2 * H + k);
              const double rb = Bias(d, 3 * H + 2 * H + k);
              const double n = lbr ? wx + rr[k] * (Mv(r, d, 2 * H + k, H, h.data()) + rb)
                                   : wx + Mv(r, d, 2 * H + k, H, rh.data()) + rb;
              nh[k] = (1 - z[k]) * f[d * nf + 1](Cl(n)) + z[k] * h[k];
            }
          } else {
            for (int64_t k = 0; k < H; ++k) {
              const double pi = p.empty() ? 0 : p[d * 3 * H + k], po = p.empty() ? 0 : p[d * 3 * H + H + k],
                           pf = p.empty() ? 0 : p[d * 3 * H + 2 * H + k];
              const double i = f[d * nf](Cl(pre(0, k) + pi * c[k]));
              const double fg = input_forget ? 1 - i : f[d * nf](Cl(pre(2, k) + pf * c[k]));
              const double cc = f[d * nf + 1](Cl(pre(3, k)));
              c[k] = fg * c[k] + i * cc;
              const double o = f[d * nf](Cl(pre(1, k) + po * c[k]));
              nh[k] = o * f[d * nf + 2](c[k]);
            }
          }
          h = nh;
          for (int64_t k = 0; k < H; ++k) y[((t * D + d) * B + b) * H + k] = static_cast<float>(h[k]);
        }
        for (int64_t k = 0; k < H; ++k) {
          yh[(d * B + b) * H + k] = static_cast<float>(h[k]);
          yc[(d * B + b) * H + k] = static_cast<float>(c[k]);
        }
      }
    }
  }
};

Ref MakeRef(const std::string& op, int64_t S, int64_t B, int64_t I, int64_t H, int64_t D, uint32_t seed) {
  Ref r;
  r.op = op, r.S = S, r.B = B, r.I = I, r.H = H, r.D = D;
  const int64_t g = r.G();
  r.x = Random(S * B * I, seed);
  r.w = Random(D * g * H * I, seed + 1);
  r.r = Random(D * g * H * H, seed + 2);
  r.bias = Random(D * 2 * g * H, seed + 3);
  r.h0 = Random(D * B * H, seed + 4);
  if (op == "LSTM") {
    r.c0 = Random(D * B * H, seed + 5);
    r.p = Random(D * 3 * H, seed + 6);
  }
  Fn tanh_fn = [](double v) { return std::tanh(v); };
  for (int64_t d = 0; d < D; ++d) {
    if (op == "RNN") r.f.insert(r.f.end(), {tanh_fn});
    if (op == "GRU") r.f.insert(r.f.end(), {Sig, tanh_fn});
    if (op == "LSTM") r.f.insert(r.f.end(), {Sig, tanh_fn, tanh_fn});
  }
  return r;
}

// The node for `r`, with all optional inputs the reference uses.
OpTest MakeTest(const Ref& r, int opset = 22) {
  OpTest t(r.op, opset);
  const int64_t g = r.G();
  t.Input(F({r.S, r.B, r.I}, r.x)).Input(F({r.D, g * r.H, r.I}, r.w)).Input(F({r.D, g * r.H, r.H}, r.r));
  t.Input(F({r.D, 2 * g * r.H}, r.bias));
  if (r.lens.empty()) {
    t.AbsentInput();
  } else {
    std::vector<int32_t> l(r.lens.begin(), r.lens.end());
    t.Input(Tensor::FromVector<int32_t>({r.B}, l));
  }
  t.Input(F({r.D, r.B, r.H}, r.h0));
  if (r.op == "LSTM") {
    t.Input(F({r.D, r.B, r.H}, r.c0));
    if (r.p.empty()) {
      t.AbsentInput();
    } else {
      t.Input(F({r.D, 3 * r.H}, r.p));
    }
  }
  t.Attr("hidden_size", r.H);
  if (r.D == 2) t.Attr("direction", std::string("bidirectional"));
  if (r.reverse) t.Attr("direction", std::string("reverse"));
  t.Outputs(r.op == "LSTM" ? 3 : 2);
  return t;
}

TEST(Rnn, HandComputed) {
  OpTest t("RNN", 22);
  t.Input(F({1, 1, 1}, {1})).Input(F({1, 1, 1}, {2})).Input(F({1, 1, 1}, {3})).Input(F({1, 2}, {0.5f, 0.25f}));
  t.AbsentInput().Input(F({1, 1, 1}, {-1})).Attr("hidden_size", int64_t{1}).Outputs(2);
  auto out = t.Run(RegisterRnnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float want = std::tanh(2.0f * 1 + 3.0f * -1 + 0.75f);
  EXPECT_TRUE(TensorsNear(F({1, 1, 1, 1}, {want}), (*out)[0].tensor()));
  EXPECT_TRUE(TensorsNear(F({1, 1, 1}, {want}), (*out)[1].tensor()));
}

TEST(Rnn, BidirectionalWithSequenceLens) {
  Ref r = MakeRef("RNN", 4, 3, 2, 5, 2, 10);
  r.lens = {4, 2, 0};
  r.Run();
  OpTest t = MakeTest(r);
  auto out = t.Run(RegisterRnnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({4, 2, 3, 5}, r.y), (*out)[0].tensor(), 1e-5, 1e-6));
  EXPECT_TRUE(TensorsNear(F({2, 3, 5}, r.yh), (*out)[1].tensor(), 1e-5, 1e-6));
  // Batch row 1 stops after 2 steps: its Y rows at t = 2, 3 are zero.
  const float* y = (*out)[0].tensor().data<float>();
  for (int64_t t2 = 2; t2 < 4; ++t2)
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(0.0f, y[((t2 * 2 + d) * 3 + 1) * 5 + k]);
}

TEST(Rnn, Layout1MatchesLayout0) {
  Ref r = MakeRef("RNN", 3, 2, 4, 3, 1, 20);
  r.reverse = true;
  r.Run();
  // layout 1: X [B, S, I], Y [B, S, D, H], states [B, D, H]
  std::vector<float> x1(r.x.size()), y1(r.y.size());
  for (int64_t t = 0; t < r.S; ++t)
    for (int64_t b = 0; b < r.B; ++b) {
      for (int64_t i = 0; i < r.I; ++i) x1[(b * r.S + t) * r.I + i] = r.x[(t * r.B + b) * r.I + i];
      for (int64_t k = 0; k < r.H; ++k) y1[(b * r.S + t) * r.H + k] = r.y[(t * r.B + b) * r.H + k];
    }
  OpTest t("RNN", 22);
  t.Input(F({2, 3, 4}, x1)).Input(F({1, 3, 4}, r.w)).Input(F({1, 3, 3}, r.r)).Input(F({1, 6}, r.bias));
  t.AbsentInput().Input(F({2, 1, 3}, r.h0));  // [B, D, H] with D = 1 is the same bytes
  t.Attr("layout", int64_t{1}).Attr("direction", std::string("reverse")).Attr("hidden_size", int64_t{3}).Outputs(2);
  for (bool constant : {false, true}) {  // constant: W and R packed at load, X rows a step apart
    OpTest run = t;
    if (constant) run.ConstantInput(1).ConstantInput(2);
    auto out = run.Run(RegisterRnnKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({2, 3, 1, 3}, y1), (*out)[0].tensor(), 1e-5, 1e-6)) << constant;
    EXPECT_TRUE(TensorsNear(F({2, 1, 3}, r.yh), (*out)[1].tensor(), 1e-5, 1e-6)) << constant;
  }
}

// Constant W and R are packed at load and the products run on the GEMM (packed_rows.h); float
// gates without peepholes run each function over a whole gate (ApplyInPlace). Bidirectional with
// unequal lengths, so the backward direction's projections are copied to their steps per batch row.
TEST(Rnn, PackedWeightsAndWholeGateFunctions) {
  struct Case {
    const char* op;
    bool lbr, input_forget;
    double clip;
  };
  for (const Case& c : {Case{"RNN", false, false, 0}, Case{"GRU", false, false, 0}, Case{"GRU", true, false, 0.9},
                        Case{"LSTM", false, false, 0}, Case{"LSTM", false, true, 0.8}}) {
    Ref r = MakeRef(c.op, 5, 3, 16, 24, 2, 70);
    r.p.clear();
    r.lens = {5, 2, 4};
    r.lbr = c.lbr;
    r.input_forget = c.input_forget;
    r.clip = c.clip;
    r.Run();
    for (int threads : {1, 2}) {
      OpTest t = MakeTest(r);
      t.ConstantInput(1).ConstantInput(2).Threads(threads);
      if (r.op == "GRU") t.Attr("linear_before_reset", int64_t{c.lbr ? 1 : 0});
      if (r.op == "LSTM") t.Attr("input_forget", int64_t{c.input_forget ? 1 : 0});
      if (c.clip > 0) t.Attr("clip", static_cast<float>(c.clip));
      auto out = t.Run(RegisterRnnKernels);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const std::string what = std::string(c.op) + " lbr " + std::to_string(c.lbr) + " threads " + std::to_string(threads);
      EXPECT_TRUE(TensorsNear(F({5, 2, 3, 24}, r.y), (*out)[0].tensor(), 1e-4, 1e-5)) << what;
      EXPECT_TRUE(TensorsNear(F({2, 3, 24}, r.yh), (*out)[1].tensor(), 1e-4, 1e-5)) << what;
      if (r.op == "LSTM") {
        EXPECT_TRUE(TensorsNear(F({2, 3, 24}, r.yc), (*out)[2].tensor(), 1e-4, 1e-5)) << what;
      }
    }
  }
}

TEST(Gru, BothResetModesBidirectional) {
  for (bool lbr : {false, true}) {
    Ref r = MakeRef("GRU", 3, 2, 3, 4, 2, 30);
    r.lbr = lbr;
    r.lens = {3, 1};
    r.Run();
    OpTest t = MakeTest(r);
    t.Attr("linear_before_reset", int64_t{lbr ? 1 : 0});
    auto out = t.Run(RegisterRnnKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({3, 2, 2, 4}, r.y), (*out)[0].tensor(), 1e-5, 1e-6)) << "lbr " << lbr;
    EXPECT_TRUE(TensorsNear(F({2, 2, 4}, r.yh), (*out)[1].tensor(), 1e-5, 1e-6)) << "lbr " << lbr;
  }
}

TEST(Lstm, PeepholesInputForgetAndClip) {
  for (bool input_forget : {false, true}) {
    Ref r = MakeRef("LSTM", 4, 2, 3, 3, 2, 40);
    r.input_forget = input_forget;
    r.clip = 0.7;
    r.Run();
    OpTest t = MakeTest(r);
    t.Attr("input_forget", int64_t{input_forget ? 1 : 0}).Attr("clip", 0.7f);
    auto out = t.Run(RegisterRnnKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({4, 2, 2, 3}, r.y), (*out)[0].tensor(), 1e-5, 1e-6));
    EXPECT_TRUE(TensorsNear(F({2, 2, 3}, r.yh), (*out)[1].tensor(), 1e-5, 1e-6));
    EXPECT_TRUE(TensorsNear(F({2, 2, 3}, r.yc), (*out)[2].tensor(), 1e-5, 1e-6));
  }
}

TEST(Lstm, LargerSizesSplitOverThreads) {
  // Big enough that the products would be split over row blocks; on 2 threads the two directions
  // run side by side instead (ForEachDirection), each on one core.
  Ref r = MakeRef("LSTM", 3, 8, 64, 128, 2, 45);
  r.lens = {3, 1, 2, 3, 0, 3, 2, 1};
  r.Run();
  for (int threads : {1, 2}) {
    OpTest t = MakeTest(r);
    t.Threads(threads);
    auto out = t.Run(RegisterRnnKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({3, 2, 8, 128}, r.y), (*out)[0].tensor(), 1e-4, 1e-5)) << threads;
    EXPECT_TRUE(TensorsNear(F({2, 8, 128}, r.yc), (*out)[2].tensor(), 1e-4, 1e-5)) << threads;
  }
}

TEST(Lstm, ActivationAlphasAreConsumedInOrder) {
  // HardSigmoid takes (0.3, 0.6), Affine takes (2.0, 1.0); Tanh takes nothing.
  Ref r = MakeRef("LSTM", 2, 1, 2, 2, 1, 50);
  r.f = {[](double v) { return std::min(1.0, std::max(0.0, 0.3 * v + 0.6)); }, [](double v) { return 2.0 * v + 1.0; },
         [](double v) { return std::tanh(v); }};
  r.Run();
  OpTest t = MakeTest(r);
  t.Attr("activations", std::vector<std::string>{"HardSigmoid", "affine", "Tanh"});
  t.Attr("activation_alpha", std::vector<float>{0.3f, 2.0f}).Attr("activation_beta", std::vector<float>{0.6f, 1.0f});
  auto out = t.Run(RegisterRnnKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2, 1, 1, 2}, r.y), (*out)[0].tensor(), 1e-5, 1e-6));
}

TEST(Rnn, LeakyReluDefaultAndGivenAlpha) {
  for (bool given : {false, true}) {
    OpTest t("RNN", 22);
    t.Input(F({1, 1, 1}, {-2})).Input(F({1, 1, 1}, {1})).Input(F({1, 1, 1}, {0}));
    t.Attr("activations", std::vector<std::string>{"LeakyRelu"}).Attr("hidden_size", int64_t{1});
    if (given) t.Attr("activation_alpha", std::vector<float>{0.5f});
    auto out = t.Run(RegisterRnnKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsNear(F({1, 1, 1, 1}, {given ? -1.0f : -0.02f}), (*out)[0].tensor()));
  }
}

TEST(Lstm, DoubleAndFloat16) {
  Ref r = MakeRef("LSTM", 2, 2, 3, 2, 1, 60);
  r.Run();
  auto to_double = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  auto to_half = [](const std::vector<float>& v) {
    std::vector<Float16> h;
    for (float f : v) h.push_back(Float16{FloatToHalf(f)});
    return h;
  };
  OpTest d("LSTM", 22);
  d.Input(Tensor::FromVector<double>({2, 2, 3}, to_double(r.x)))
      .Input(Tensor::FromVector<double>({1, 8, 3}, to_double(r.w)))
      .Input(Tensor::FromVector<double>({1, 8, 2}, to_double(r.r)))
      .Input(Tensor::FromVector<double>({1, 16}, to_double(r.bias)))
      .AbsentInput()
      .Input(Tensor::FromVector<double>({1, 2, 2}, to_double(r.h0)))
      .Input(Tensor::FromVector<double>({1, 2, 2}, to_double(r.c0)))
      .Input(Tensor::FromVector<double>({1, 6}, to_double(r.p)))
      .Attr("hidden_size", int64_t{2})
      .Outputs(3);
  auto out_d = d.Run(RegisterRnnKernels);
  ASSERT_TRUE(out_d.ok()) << out_d.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1, 2, 2}, to_double(r.yc)), (*out_d)[2].tensor(), 1e-5, 1e-6));

  OpTest h("LSTM", 22);
  h.Input(Tensor::FromVector<Float16>({2, 2, 3}, to_half(r.x)))
      .Input(Tensor::FromVector<Float16>({1, 8, 3}, to_half(r.w)))
      .Input(Tensor::FromVector<Float16>({1, 8, 2}, to_half(r.r)))
      .Input(Tensor::FromVector<Float16>({1, 16}, to_half(r.bias)))
      .AbsentInput()
      .Input(Tensor::FromVector<Float16>({1, 2, 2}, to_half(r.h0)))
      .Input(Tensor::FromVector<Float16>({1, 2, 2}, to_half(r.c0)))
      .Input(Tensor::FromVector<Float16>({1, 6}, to_half(r.p)))
      .Attr("hidden_size", int64_t{2})
      .Outputs(3);
  auto out_h = h.Run(RegisterRnnKernels);
  ASSERT_TRUE(out_h.ok()) << out_h.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<Float16>({1, 2, 2}, to_half(r.yh)), (*out_h)[1].tensor(), 1e-2, 1e-2));
}

TEST(Rnn, Errors) {
  const auto x = Random(64, 70);
  {  // W of the wrong shape
    OpTest t("GRU", 22);
    t.Input(F({1, 1, 2}, x)).Input(F({1, 6, 3}, x)).Input(F({1, 6, 2}, x)).Attr("hidden_size", int64_t{2});
    EXPECT_EQ(StatusCode::kInvalidArgument, t.Run(RegisterRnnKernels).status().code());
  }
  {  // sequence_lens past seq_length
    OpTest t("RNN", 22);
    t.Input(F({2, 1, 1}, x)).Input(F({1, 1, 1}, x)).Input(F({1, 1, 1}, x)).AbsentInput();
    t.Input(Tensor::FromVector<int32_t>({1}, {3}));
    EXPECT_TRUE(Refused(t.Run(RegisterRnnKernels), StatusCode::kOutOfRange, "sequence_lens[0] = 3"));
  }
  {  // unknown activation refused at load
    OpTest t("RNN", 22);
    t.Input(F({1, 1, 1}, x)).Input(F({1, 1, 1}, x)).Input(F({1, 1, 1}, x));
    t.Attr("activations", std::vector<std::string>{"Swish"});
    EXPECT_EQ(StatusCode::kInvalidArgument, t.Run(RegisterRnnKernels).status().code());
  }
  {  // bidirectional needs two directions of weights
    OpTest t("LSTM", 22);
    t.Input(F({1, 1, 1}, x)).Input(F({1, 4, 1}, x)).Input(F({1, 4, 1}, x)).Attr("direction", std::string("bidirectional"));
    EXPECT_EQ(StatusCode::kInvalidArgument, t.Run(RegisterRnnKernels).status().code());
  }
  {  // an empty X with huge dims: Y would pass the tensor limit
    OpTest t("RNN", 22);
    t.Input(F({int64_t{1} << 30, int64_t{1} << 30, 0}, {})).Input(F({1, 2, 0}, {})).Input(F({1, 2, 2}, x));
    t.Outputs(2);
    EXPECT_TRUE(Refused(t.Run(RegisterRnnKernels), StatusCode::kResourceExhausted, "would pass the"));
  }
  {  // bad direction name
    OpTest t("RNN", 22);
    t.Input(F({1, 1, 1}, x)).Input(F({1, 1, 1}, x)).Input(F({1, 1, 1}, x)).Attr("direction", std::string("sideways"));
    EXPECT_EQ(StatusCode::kInvalidArgument, t.Run(RegisterRnnKernels).status().code());
  }
}

}  // namespace
}  // namespace onnxflow
