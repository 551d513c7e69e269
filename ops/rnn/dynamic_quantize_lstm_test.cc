// com.microsoft DynamicQuantizeLSTM against a plain float reference that quantizes the activations
// the way ONNX Runtime does (one uint8 scale per GEMM call: X's rows once, the hidden states once
// per step), so the integer sums are exact and the results agree up to float rounding; plus the
// float LSTM on the dequantized weights, within what the activations' quantization explains, and
// the refusals.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/rnn/activation.h"
#include "ops/rnn/register.h"

namespace onnxflow {
namespace {

std::vector<float> Uniform(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

std::vector<int32_t> Ints(int64_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int32_t& x : v) x = dist(gen);
  return v;
}

Tensor F(Shape shape, std::vector<float> v) { return Tensor::FromVector<float>(std::move(shape), std::move(v)); }

// int8 or uint8 tensor of the given values.
Tensor Q8(bool is_signed, Shape shape, const std::vector<int32_t>& v) {
  if (is_signed) return Tensor::FromVector<int8_t>(std::move(shape), std::vector<int8_t>(v.begin(), v.end()));
  return Tensor::FromVector<uint8_t>(std::move(shape), std::vector<uint8_t>(v.begin(), v.end()));
}

// DynamicQuantizeLinear's uint8 parameters and rounding, from the ONNX spec.
struct Quant {
  float scale = 1.0f;
  int32_t zero = 0;
};
Quant ParamsOf(float lo, float hi) {
  Quant q;
  q.scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  q.zero = static_cast<int32_t>(std::nearbyint(std::clamp(-lo / q.scale, 0.0f, 255.0f)));
  return q;
}
int32_t QuantizeOne(float v, const Quant& q) {
  return static_cast<int32_t>(std::clamp(std::nearbyint(v / q.scale) + static_cast<float>(q.zero), 0.0f, 255.0f));
}

float Sigmoid(float v) {
  if (v >= 0) return 1.0f / (1.0f + std::exp(-v));
  const float e = std::exp(v);
  return e / (1.0f + e);
}

// The functions as the kernel's cell computes them: without peepholes each gate's function runs
// vectorized (rnn::ApplyInPlace), whose last bit differs from std::exp's; H is quantized again at
// every step, so over 4,100 steps one such bit moves the result by percents.
float Gate(rnn::ActivationKind kind, float v, bool vectorized) {
  if (!vectorized) return kind == rnn::ActivationKind::kSigmoid ? Sigmoid(v) : std::tanh(v);
  rnn::Activation a;
  a.kind = kind;
  rnn::ApplyInPlace(a, &v, 1);
  return v;
}

// One quantized weight: int values [D, K, 4H] with scales and zero points per direction or column.
struct QWeight {
  bool is_signed = true, per_column = false;
  std::vector<int32_t> q;
  std::vector<float> scale;
  std::vector<int32_t> zero;

  float Scale(int64_t d, int64_t j, int64_t cols) const { return per_column ? scale[d * cols + j] : scale[d]; }
  int32_t Zero(int64_t d, int64_t j, int64_t cols) const { return per_column ? zero[d * cols + j] : zero[d]; }
  // The value it stands for.
  float At(int64_t d, int64_t k, int64_t j, int64_t rows, int64_t cols) const {
    return static_cast<float>(q[(d * rows + k) * cols + j] - Zero(d, j, cols)) * Scale(d, j, cols);
  }
};

QWeight MakeWeight(bool is_signed, bool per_column, int64_t d, int64_t k, int64_t cols, uint32_t seed) {
  QWeight w;
  w.is_signed = is_signed;
  w.per_column = per_column;
  const int64_t params = per_column ? d * cols : d;
  w.q = is_signed ? Ints(d * k * cols, seed, -128, 127) : Ints(d * k * cols, seed, 0, 255);
  w.scale = Uniform(params, seed + 1, 0.5f / 127, 1.0f / 127);
  // int8 weights are symmetric in practice, but the kernel takes any zero point: use some.
  w.zero = is_signed ? Ints(params, seed + 2, -3, 3) : Ints(params, seed + 2, 120, 136);
  return w;
}

// One layer in layout 0, written from ONNX Runtime's description of the quantized LSTM.
struct Ref {
  int64_t S = 1, B = 1, I = 1, H = 1, D = 1;
  bool reverse = false, input_forget = false;
  float clip = 0.0f;
  QWeight w, r;
  std::vector<float> x, bias, h0, c0, p;  // bias, states and P empty when absent
  std::vector<int64_t> lens;              // empty: every row runs S steps
  std::vector<float> y, yh, yc;

  int64_t Len(int64_t b) const { return lens.empty() ? S : lens[b]; }
  float Cl(float v) const { return clip > 0 ? std::max(-clip, std::min(clip, v)) : v; }
  const float* X(int64_t t, int64_t b) const { return x.data() + (t * B + b) * I; }

  // sum_k (q(v_k) - zero) * (W[k, j] - w_zero) dequantized as the kernel's epilogue does.
  static float Product(const QWeight& w, int64_t d, int64_t rows, int64_t cols, const float* v, const Quant& q,
                       int64_t j) {
    int64_t sum = 0;
    for (int64_t k = 0; k < rows; ++k) {
      sum += int64_t{QuantizeOne(v[k], q) - q.zero} * (w.q[(d * rows + k) * cols + j] - w.Zero(d, j, cols));
    }
    return static_cast<float>(sum) * (q.scale * w.Scale(d, j, cols));
  }

  void Run() {
    const int64_t G = 4 * H;
    y.assign(S * D * B * H, 0.0f);
    yh.assign(D * B * H, 0.0f);
    yc.assign(D * B * H, 0.0f);
    int64_t steps = 0;
    for (int64_t b = 0; b < B; ++b) steps = std::max(steps, Len(b));
    // X's range: every batch row's first `steps` time steps, padding included.
    float xlo = 0, xhi = 0;
    for (int64_t i = 0; i < steps * B * I; ++i) {
      xlo = std::min(xlo, x[i]);
      xhi = std::max(xhi, x[i]);
    }
    const Quant qx = ParamsOf(xlo, xhi);
    for (int64_t d = 0; d < D; ++d) {
      const bool backward = reverse || d == 1;
      std::vector<std::vector<float>> h(B, std::vector<float>(H, 0.0f)), c = h;
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t k = 0; k < H; ++k) {
          if (!h0.empty()) h[b][k] = h0[(d * B + b) * H + k];
          if (!c0.empty()) c[b][k] = c0[(d * B + b) * H + k];
        }
      }
      for (int64_t s = 0; s < steps; ++s) {
        // The hidden states' range at step s: the rows whose state came from step s - 1.
        float hlo = 0, hhi = 0;
        for (int64_t b = 0; b < B; ++b) {
          if (Len(b) < s) continue;
          for (float v : h[b]) {
            hlo = std::min(hlo, v);
            hhi = std::max(hhi, v);
          }
        }
        const Quant qh = ParamsOf(hlo, hhi);
        std::vector<std::vector<float>> nh = h;
        for (int64_t b = 0; b < B; ++b) {
          if (s >= Len(b)) continue;
          const int64_t t = backward ? Len(b) - 1 - s : s;
          auto pre = [&](int64_t gate, int64_t k) {
            const int64_t j = gate * H + k;
            const float bj = bias.empty() ? 0.0f : bias[d * 2 * G + j] + bias[d * 2 * G + G + j];
            return Product(w, d, I, G, X(t, b), qx, j) + Product(r, d, H, G, h[b].data(), qh, j) + bj;
          };
          for (int64_t k = 0; k < H; ++k) {
            const float pi = p.empty() ? 0 : p[d * 3 * H + k], po = p.empty() ? 0 : p[d * 3 * H + H + k],
                        pf = p.empty() ? 0 : p[d * 3 * H + 2 * H + k];
            float& ck = c[b][k];
            const bool vec = p.empty();
            constexpr auto kSig = rnn::ActivationKind::kSigmoid;
            constexpr auto kTanh = rnn::ActivationKind::kTanh;
            const float ig = Gate(kSig, Cl(pre(0, k) + pi * ck), vec);
            const float fg = input_forget ? 1.0f - ig : Gate(kSig, Cl(pre(2, k) + pf * ck), vec);
            const float cg = Gate(kTanh, Cl(pre(3, k)), vec);
            ck = fg * ck + ig * cg;
            const float og = Gate(kSig, Cl(pre(1, k) + po * ck), vec);
            nh[b][k] = og * Gate(kTanh, ck, vec);
            y[((t * D + d) * B + b) * H + k] = nh[b][k];
          }
        }
        h = nh;
      }
      for (int64_t b = 0; b < B; ++b) {
        if (Len(b) == 0) continue;  // zeros, as ONNX Runtime
        for (int64_t k = 0; k < H; ++k) {
          yh[(d * B + b) * H + k] = h[b][k];
          yc[(d * B + b) * H + k] = c[b][k];
        }
      }
    }
  }
};

struct Options {
  bool w_signed = true, r_signed = true, w_per_column = false, r_per_column = false;
  bool with_bias = true, with_states = true, with_peepholes = true;
};

Ref MakeRef(int64_t S, int64_t B, int64_t I, int64_t H, int64_t D, const Options& o, uint32_t seed) {
  Ref r;
  r.S = S, r.B = B, r.I = I, r.H = H, r.D = D;
  r.x = Uniform(S * B * I, seed);
  r.w = MakeWeight(o.w_signed, o.w_per_column, D, I, 4 * H, seed + 10);
  r.r = MakeWeight(o.r_signed, o.r_per_column, D, H, 4 * H, seed + 20);
  if (o.with_bias) r.bias = Uniform(D * 8 * H, seed + 3, -0.5f, 0.5f);
  if (o.with_states) {
    r.h0 = Uniform(D * B * H, seed + 4);
    r.c0 = Uniform(D * B * H, seed + 5);
  }
  if (o.with_peepholes) r.p = Uniform(D * 3 * H, seed + 6, -0.5f, 0.5f);
  return r;
}

// The node for `r`: inputs 0-7 as LSTM's (absent ones given as ""), then the scales and zero points.
OpTest MakeTest(const Ref& r) {
  OpTest t("DynamicQuantizeLSTM", 1, "com.microsoft");
  const int64_t G = 4 * r.H;
  t.Input(F({r.S, r.B, r.I}, r.x));
  t.Input(Q8(r.w.is_signed, {r.D, r.I, G}, r.w.q)).Input(Q8(r.r.is_signed, {r.D, r.H, G}, r.r.q));
  if (r.bias.empty()) t.AbsentInput(); else t.Input(F({r.D, 2 * G}, r.bias));
  if (r.lens.empty()) {
    t.AbsentInput();
  } else {
    t.Input(Tensor::FromVector<int32_t>({r.B}, std::vector<int32_t>(r.lens.begin(), r.lens.end())));
  }
  if (r.h0.empty()) t.AbsentInput(); else t.Input(F({r.D, r.B, r.H}, r.h0));
  if (r.c0.empty()) t.AbsentInput(); else t.Input(F({r.D, r.B, r.H}, r.c0));
  if (r.p.empty()) t.AbsentInput(); else t.Input(F({r.D, 3 * r.H}, r.p));
  for (const QWeight* w : {&r.w, &r.r}) {
    const Shape params = w->per_column ? Shape{r.D, G} : Shape{r.D};
    t.Input(F(params, w->scale)).Input(Q8(w->is_signed, params, w->zero));
  }
  t.Attr("hidden_size", r.H);
  if (r.D == 2) t.Attr("direction", std::string("bidirectional"));
  if (r.reverse) t.Attr("direction", std::string("reverse"));
  if (r.input_forget) t.Attr("input_forget", int64_t{1});
  if (r.clip > 0) t.Attr("clip", r.clip);
  t.Outputs(3);
  return t;
}

// Runs the node and compares all three outputs with the reference.
void ExpectMatches(const Ref& r, OpTest t, const std::string& what) {
  auto out = t.Run(RegisterRnnKernels);
  ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
  // Only float rounding may differ (the reference adds in the kernel's order): one rounding step of
  // a quantized hidden state moving would show as ~1e-3.
  EXPECT_TRUE(TensorsNear(F({r.S, r.D, r.B, r.H}, r.y), (*out)[0].tensor(), 1e-5, 1e-5)) << what;
  EXPECT_TRUE(TensorsNear(F({r.D, r.B, r.H}, r.yh), (*out)[1].tensor(), 1e-5, 1e-5)) << what;
  EXPECT_TRUE(TensorsNear(F({r.D, r.B, r.H}, r.yc), (*out)[2].tensor(), 1e-5, 1e-5)) << what;
}

// The reference of these sizes and options, changed by `tweak`, against the node.
void Check(const std::string& what, int64_t S, int64_t B, int64_t I, int64_t H, int64_t D, const Options& o,
           uint32_t seed, const std::function<void(Ref&)>& tweak = nullptr) {
  Ref r = MakeRef(S, B, I, H, D, o, seed);
  if (tweak) tweak(r);
  r.Run();
  ExpectMatches(r, MakeTest(r), what);
}

TEST(DynamicQuantizeLstm, ForwardInt8PerDirection) { Check("forward int8", 5, 3, 6, 4, 1, Options{}, 100); }

TEST(DynamicQuantizeLstm, ReverseUint8PerColumnWithSequenceLens) {
  Options o;
  o.w_signed = o.r_signed = false;
  o.w_per_column = o.r_per_column = true;
  // The longest sequence is shorter than X: X's range covers only the steps that run, so a large
  // value in the last step must not widen it (while padding inside the longest sequence does).
  Check("reverse uint8 per column", 5, 3, 5, 3, 1, o, 200, [](Ref& r) {
    r.reverse = true;
    r.lens = {4, 2, 0};
    r.x[(4 * r.B + 0) * r.I] = 3.0f;
  });
}

TEST(DynamicQuantizeLstm, BidirectionalMixedTypesWithoutOptionalInputs) {
  // W int8 per column, R uint8 per direction; no B, initial states or P.
  Options o;
  o.w_per_column = true;
  o.r_signed = false;
  o.with_bias = o.with_states = o.with_peepholes = false;
  Check("bidirectional", 3, 2, 4, 5, 2, o, 300);
}

TEST(DynamicQuantizeLstm, BidirectionalSequenceLensInputForgetClip) {
  Options o;
  o.w_signed = false;
  o.r_per_column = true;
  Check("bidirectional with lengths", 4, 4, 3, 3, 2, o, 400, [](Ref& r) {
    r.lens = {2, 4, 1, 3};
    r.input_forget = true;
    r.clip = 0.8f;
  });
}

TEST(DynamicQuantizeLstm, LargerSizesSplitOverThreadsAndPackedAtLoad) {
  // 4H = 200 columns: several strips of the GEMM's packed B, split over two threads.
  Options o;
  o.w_per_column = true;
  Ref r = MakeRef(3, 5, 70, 50, 2, o, 500);
  r.lens = {3, 1, 2, 3, 0};
  r.Run();
  for (int threads : {1, 2}) {
    for (bool constant : {false, true}) {
      OpTest t = MakeTest(r);
      t.Threads(threads);
      if (constant) t.ConstantInput(1).ConstantInput(2);
      ExpectMatches(r, std::move(t), "threads " + std::to_string(threads) + (constant ? " packed at load" : ""));
    }
  }
}

TEST(DynamicQuantizeLstm, OneXScaleAcrossProjectionChunks) {
  // 4100 steps of one batch row with 4H = 256 gate columns: the input projections run in chunks of
  // 4096 steps (recurrent.h's ChunkSteps), all quantized with X's one range; a large value in the
  // second chunk sets it.
  Options o;
  o.with_peepholes = false;
  Check("chunked", 4100, 1, 2, 64, 1, o, 800, [](Ref& r) { r.x[4098 * 2] = 4.0f; });
}

TEST(DynamicQuantizeLstm, CloseToFloatLstmOnDequantizedWeights) {
  // The float LSTM on W and R dequantized differs only by the activations' rounding: each X or H
  // value moves by at most half its quantization step (range / 255 / 2), so a gate's
  // pre-activation moves by at most e = sum_k |W_jk| * step_x / 2 + sum_k |R_jk| * step_h / 2 per
  // step, with step_h <= 2 / 255 (|H| < 1). The gates' functions have slopes <= 1 and these small
  // weights do not amplify, so S steps stay within S * 2e.
  Options o;
  o.w_per_column = true;
  o.r_signed = false;
  Ref r = MakeRef(4, 2, 6, 5, 2, o, 600);
  const int64_t S = r.S, B = r.B, I = r.I, H = r.H, D = r.D, G = 4 * H;
  std::vector<float> wf(D * G * I), rf(D * G * H);
  float e = 0.0f, xlo = 0.0f, xhi = 0.0f;
  for (float v : r.x) xlo = std::min(xlo, v), xhi = std::max(xhi, v);
  const float step_x = (xhi - xlo) / 255.0f, step_h = 2.0f / 255.0f;
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t j = 0; j < G; ++j) {
      float sw = 0.0f, sr = 0.0f;
      for (int64_t k = 0; k < I; ++k) sw += std::abs(wf[(d * G + j) * I + k] = r.w.At(d, k, j, I, G));
      for (int64_t k = 0; k < H; ++k) sr += std::abs(rf[(d * G + j) * H + k] = r.r.At(d, k, j, H, G));
      e = std::max(e, sw * step_x / 2 + sr * step_h / 2);
    }
  }
  const float tol = static_cast<float>(S) * 2.0f * e;
  ASSERT_LT(tol, 0.2f) << "the bound would not tell a broken kernel from a working one";

  OpTest f("LSTM", 22);
  f.Input(F({S, B, I}, r.x)).Input(F({D, G, I}, wf)).Input(F({D, G, H}, rf)).Input(F({D, 2 * G}, r.bias));
  f.AbsentInput().Input(F({D, B, H}, r.h0)).Input(F({D, B, H}, r.c0)).Input(F({D, 3 * H}, r.p));
  f.Attr("hidden_size", H).Attr("direction", std::string("bidirectional")).Outputs(3);
  auto want = f.Run(RegisterRnnKernels);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  auto got = MakeTest(r).Run(RegisterRnnKernels);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  float worst = 0.0f;
  for (int i = 0; i < 3; ++i) {
    const Tensor& a = (*want)[i].tensor();
    const Tensor& b = (*got)[i].tensor();
    ASSERT_EQ(a.shape(), b.shape()) << "output " << i;
    for (int64_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::abs(a.data<float>()[k] - b.data<float>()[k]));
  }
  EXPECT_LE(worst, tol);
  std::printf("largest difference from the float LSTM: %g (bound %g)\n", worst, tol);
  EXPECT_GT(worst, 0.0f) << "no difference at all: were the activations quantized?";
}

TEST(DynamicQuantizeLstm, Refusals) {
  const Ref r = MakeRef(2, 1, 3, 2, 1, Options{}, 700);
  {  // W in ONNX LSTM's layout [D, 4H, I] instead of [D, I, 4H]
    OpTest t("DynamicQuantizeLSTM", 1, "com.microsoft");
    t.Input(F({2, 1, 3}, r.x)).Input(Q8(true, {1, 8, 3}, r.w.q)).Input(Q8(true, {1, 2, 8}, r.r.q));
    for (int i = 0; i < 5; ++i) t.AbsentInput();
    t.Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0})).Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0}));
    t.Attr("hidden_size", int64_t{2});
    auto out = t.Run(RegisterRnnKernels);
    EXPECT_TRUE(Refused(out, StatusCode::kInvalidArgument, "DynamicQuantizeLSTM: W has shape [1,8,3]"));
  }
  {  // R_scale with one value per gate instead of per column or per direction
    OpTest u("DynamicQuantizeLSTM", 1, "com.microsoft");
    u.Input(F({2, 1, 3}, r.x)).Input(Q8(true, {1, 3, 8}, r.w.q)).Input(Q8(true, {1, 2, 8}, r.r.q));
    for (int i = 0; i < 5; ++i) u.AbsentInput();
    u.Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0})).Input(F({1, 4}, {0.01f, 0.01f, 0.01f, 0.01f}));
    u.Input(Q8(true, {1}, {0})).Attr("hidden_size", int64_t{2});
    EXPECT_TRUE(Refused(u.Run(RegisterRnnKernels), StatusCode::kInvalidArgument, "DynamicQuantizeLSTM: R_scale has shape [1,4]"));
  }
  {  // a uint8 zero point for int8 weights
    OpTest t("DynamicQuantizeLSTM", 1, "com.microsoft");
    t.Input(F({2, 1, 3}, r.x)).Input(Q8(true, {1, 3, 8}, r.w.q)).Input(Q8(true, {1, 2, 8}, r.r.q));
    for (int i = 0; i < 5; ++i) t.AbsentInput();
    t.Input(F({1}, {0.01f})).Input(Q8(false, {1}, {0})).Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0}));
    t.Attr("hidden_size", int64_t{2});
    EXPECT_TRUE(Refused(t.Run(RegisterRnnKernels), StatusCode::kInvalidArgument, "W_zero_point must have its weight's type"));
  }
  {  // float weights
    OpTest t("DynamicQuantizeLSTM", 1, "com.microsoft");
    t.Input(F({2, 1, 3}, r.x)).Input(F({1, 3, 8}, Uniform(24, 1))).Input(Q8(true, {1, 2, 8}, r.r.q));
    for (int i = 0; i < 5; ++i) t.AbsentInput();
    t.Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0})).Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0}));
    t.Attr("hidden_size", int64_t{2});
    EXPECT_TRUE(Refused(t.Run(RegisterRnnKernels), StatusCode::kInvalidArgument, "DynamicQuantizeLSTM: W must be int8 or uint8"));
  }
  {  // X without its batch axis, and a W_scale that is not float
    OpTest t("DynamicQuantizeLSTM", 1, "com.microsoft");
    t.Input(F({2, 3}, r.x)).Input(Q8(true, {1, 3, 8}, r.w.q)).Input(Q8(true, {1, 2, 8}, r.r.q));
    for (int i = 0; i < 5; ++i) t.AbsentInput();
    t.Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0})).Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0}));
    t.Attr("hidden_size", int64_t{2});
    EXPECT_TRUE(Refused(t.Run(RegisterRnnKernels), StatusCode::kInvalidArgument, "DynamicQuantizeLSTM: X must be 3D, got shape [2,3]"));
    OpTest u("DynamicQuantizeLSTM", 1, "com.microsoft");
    u.Input(F({2, 1, 3}, r.x)).Input(Q8(true, {1, 3, 8}, r.w.q)).Input(Q8(true, {1, 2, 8}, r.r.q));
    for (int i = 0; i < 5; ++i) u.AbsentInput();
    u.Input(Q8(true, {1}, {1})).Input(Q8(true, {1}, {0})).Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0}));
    u.Attr("hidden_size", int64_t{2});
    EXPECT_TRUE(Refused(u.Run(RegisterRnnKernels), StatusCode::kInvalidArgument, "DynamicQuantizeLSTM: W_scale must be float, got int8"));
  }
  // W or R not 3D (W also as a constant, which is then left unpacked and refused at run), and R in
  // ONNX LSTM's layout [D, 4H, H] instead of [D, H, 4H].
  struct Case {
    const char* what;
    Shape w, r;
    bool constant_w;
    const char* reason;
  };
  const Case cases[] = {
      {"2D W", {3, 8}, {1, 2, 8}, false, "DynamicQuantizeLSTM: W must be 3D, got shape [3,8]"},
      {"2D constant W", {3, 8}, {1, 2, 8}, true, "DynamicQuantizeLSTM: W must be 3D, got shape [3,8]"},
      {"2D R", {1, 3, 8}, {2, 8}, false, "DynamicQuantizeLSTM: R must be 3D, got shape [2,8]"},
      {"R as [D, 4H, H]", {1, 3, 8}, {1, 8, 2}, false, "DynamicQuantizeLSTM: R has shape [1,8,2], expected [1,2,8]"},
  };
  for (const Case& c : cases) {
    OpTest t("DynamicQuantizeLSTM", 1, "com.microsoft");
    t.Input(F({2, 1, 3}, r.x)).Input(Q8(true, c.w, r.w.q)).Input(Q8(true, c.r, r.r.q));
    for (int i = 0; i < 5; ++i) t.AbsentInput();
    t.Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0})).Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0}));
    t.Attr("hidden_size", int64_t{2});
    if (c.constant_w) t.ConstantInput(1);
    EXPECT_TRUE(Refused(t.Run(RegisterRnnKernels), StatusCode::kInvalidArgument, c.reason)) << c.what;
  }
  {  // X in double: refused when the kernel is made, before any run
    OpTest t("DynamicQuantizeLSTM", 1, "com.microsoft");
    t.Input(Tensor::FromVector<double>({2, 1, 3}, std::vector<double>(r.x.begin(), r.x.end())));
    t.Input(Q8(true, {1, 3, 8}, r.w.q)).Input(Q8(true, {1, 2, 8}, r.r.q));
    for (int i = 0; i < 5; ++i) t.AbsentInput();
    t.Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0})).Input(F({1}, {0.01f})).Input(Q8(true, {1}, {0}));
    t.Attr("hidden_size", int64_t{2});
    EXPECT_TRUE(Refused(t.Run(RegisterRnnKernels), StatusCode::kUnimplemented,
                        "DynamicQuantizeLSTM computes in float only, X is float64"));
  }
}

}  // namespace
}  // namespace onnxflow
