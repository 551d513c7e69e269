#include <cmath>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/domains.h"
#include "ops/framework/registry.h"
#include "ops/framework/testing.h"
#include "ops/register_all.h"

namespace onnxflow {
namespace {

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

Result<std::vector<Value>> RunUnary(const std::string& op, const Tensor& x, const Tensor* bias = nullptr) {
  OpTest test(op, 1, kMsDomain);
  test.Input(x);
  if (bias != nullptr) test.Input(*bias);
  return test.Run(RegisterAllKernels);
}

TEST(Gelu, ErfForm) {
  auto out = RunUnary("Gelu", F({4}, {0, 1, -1, 2.5f}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({4}, {0, 0.8413447f, -0.1586553f, 2.4844758f}), (*out)[0].tensor(), 1e-5, 1e-6));
}

TEST(Gelu, BiasGeluAddsThePerColumnBiasFirst) {
  const Tensor b = F({2}, {0.5f, 0.5f});
  auto out = RunUnary("BiasGelu", F({2, 2}, {0.5f, -0.5f, 2.0f, 0.5f}), &b);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2, 2}, {0.8413447f, 0, 2.4844758f, 0.8413447f}), (*out)[0].tensor(), 1e-5, 1e-6));
}

TEST(Gelu, FastGeluTanhFormWithAndWithoutBias) {
  auto out = RunUnary("FastGelu", F({2}, {1, -0.5f}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2}, {0.84119199f, -0.15428599f}), (*out)[0].tensor(), 1e-5, 1e-6));
  const Tensor b = F({2}, {0.5f, -0.5f});
  out = RunUnary("FastGelu", F({2}, {0.5f, 0.0f}), &b);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2}, {0.84119199f, -0.15428599f}), (*out)[0].tensor(), 1e-5, 1e-6));
}

TEST(Gelu, QuickGeluDefaultAndGivenAlpha) {
  auto out = RunUnary("QuickGelu", F({2}, {1, -2}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({2}, {0.84579577f, -0.06434138f}), (*out)[0].tensor(), 1e-5, 1e-6));
  OpTest test("QuickGelu", 1, kMsDomain);
  test.Input(F({1}, {1})).Attr("alpha", 1.0f);
  out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1}, {1.0f / (1.0f + std::exp(-1.0f))}), (*out)[0].tensor()));
}

TEST(Gelu, Float16InFloat16Out) {
  std::vector<Float16> x = {Float16{FloatToHalf(1.0f)}, Float16{FloatToHalf(-1.0f)}};
  auto out = RunUnary("Gelu", Tensor::FromVector<Float16>({2}, x));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_NEAR(HalfToFloat(y.data<Float16>()[0].bits), 0.8413f, 1e-3);
  EXPECT_NEAR(HalfToFloat(y.data<Float16>()[1].bits), -0.1587f, 1e-3);
}

TEST(Gelu, BiasOfTheWrongLengthIsRefused) {
  const Tensor b = F({3}, {1, 2, 3});
  auto out = RunUnary("BiasGelu", F({2, 2}, {1, 2, 3, 4}), &b);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("bias must be 2 values"), std::string::npos) << out.status().message();
}

TEST(BiasAdd, AddsBiasAndSkip) {
  OpTest test("BiasAdd", 1, kMsDomain);
  test.Input(F({1, 2, 2}, {1, 2, 3, 4})).Input(F({2}, {10, 20})).Input(F({1, 2, 2}, {100, 200, 300, 400}));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 2, 2}, {111, 222, 313, 424}), (*out)[0].tensor()));
}

TEST(BiasSoftmax, SoftmaxOfTheSum) {
  OpTest test("BiasSoftmax", 1, kMsDomain);
  test.Input(F({2, 2}, {0, 0, 1, 0})).Input(F({1, 2}, {0, std::log(3.0f)}));
  test.Attr("axis", int64_t{1}).Attr("is_inner_broadcast", int64_t{0});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float e = std::exp(1.0f);
  EXPECT_TRUE(TensorsNear(F({2, 2}, {0.25f, 0.75f, e / (e + 3), 3 / (e + 3)}), (*out)[0].tensor()));
}

// Layer normalization of one row, the reference for the norm tests.
std::vector<float> NormRow(const std::vector<float>& x, bool rms, float eps, const std::vector<float>& gamma,
                           const std::vector<float>& beta) {
  double mean = 0, var = 0;
  if (!rms) {
    for (float v : x) mean += v;
    mean /= x.size();
  }
  for (float v : x) var += (v - mean) * (v - mean);
  var /= x.size();
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    y[i] = static_cast<float>((x[i] - mean) / std::sqrt(var + eps)) * gamma[i] + (beta.empty() ? 0.0f : beta[i]);
  }
  return y;
}

TEST(SkipLayerNormalization, SumThenNormalizeWithAllOutputs) {
  OpTest test("SkipLayerNormalization", 1, kMsDomain);
  test.Input(F({1, 2, 3}, {1, 2, 3, 0, 0, 6}))
      .Input(F({1, 2, 3}, {1, 0, 0, 1, 1, 1}))
      .Input(F({3}, {1, 2, 0.5f}))
      .Input(F({3}, {0, 1, 0}))
      .Input(F({3}, {0, 0, 1}))
      .Attr("epsilon", 1e-5f)
      .Outputs(4);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> y = NormRow({2, 2, 4}, false, 1e-5f, {1, 2, 0.5f}, {0, 1, 0});
  std::vector<float> y2 = NormRow({1, 1, 8}, false, 1e-5f, {1, 2, 0.5f}, {0, 1, 0});
  y.insert(y.end(), y2.begin(), y2.end());
  EXPECT_TRUE(TensorsNear(F({1, 2, 3}, y), (*out)[0].tensor(), 1e-5, 1e-6));
  EXPECT_TRUE(TensorsNear(F({1, 2, 1}, {8.0f / 3, 10.0f / 3}), (*out)[1].tensor(), 1e-5, 1e-6));
  EXPECT_TRUE(TensorsNear(F({1, 2, 3}, {2, 2, 4, 1, 1, 8}), (*out)[3].tensor()));
}

TEST(SkipLayerNormalization, SkipRepeatedOverTheBatch) {
  OpTest test("SkipLayerNormalization", 1, kMsDomain);
  test.Input(F({2, 1, 2}, {1, 2, 3, 5})).Input(F({1, 2}, {1, 0})).Input(F({2}, {1, 1}));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> y = NormRow({2, 2}, false, 1e-12f, {1, 1}, {});
  std::vector<float> y2 = NormRow({4, 5}, false, 1e-12f, {1, 1}, {});
  y.insert(y.end(), y2.begin(), y2.end());
  EXPECT_TRUE(TensorsNear(F({2, 1, 2}, y), (*out)[0].tensor(), 1e-5, 1e-6));
}

TEST(SkipSimplifiedLayerNormalization, RmsOfTheSum) {
  OpTest test("SkipSimplifiedLayerNormalization", 1, kMsDomain);
  test.Input(F({1, 1, 2}, {1, 2})).Input(F({1, 1, 2}, {2, 2})).Input(F({2}, {1, 2})).Attr("epsilon", 1e-6f).Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 1, 2}, NormRow({3, 4}, true, 1e-6f, {1, 2}, {})), (*out)[0].tensor(), 1e-5, 1e-6));
  // The mean an RMS norm does not take: zeros, as ONNX Runtime writes them.
  EXPECT_TRUE(TensorsNear(F({1, 1, 1}, {0}), (*out)[1].tensor(), 0, 0));
  EXPECT_TRUE(TensorsNear(F({1, 1, 1}, {1.0f / std::sqrt(12.5f + 1e-6f)}), (*out)[2].tensor(), 1e-5, 1e-6));
}

TEST(SimplifiedLayerNormalization, DefaultDomainBelowOpset17WithInvStdDev) {
  OpTest test("SimplifiedLayerNormalization", 13);
  test.Input(F({1, 2}, {3, 4})).Input(F({2}, {1, 1})).Attr("epsilon", 0.0f).Outputs(2);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float inv = 1.0f / std::sqrt(12.5f);
  EXPECT_TRUE(TensorsNear(F({1, 2}, {3 * inv, 4 * inv}), (*out)[0].tensor()));
  EXPECT_TRUE(TensorsNear(F({1, 1}, {inv}), (*out)[1].tensor()));
}

// stash_type 0 keeps inv_std_var in X's type (float16 here).
TEST(SimplifiedLayerNormalization, StashTypeZeroKeepsInvStdDevInXsType) {
  auto half = [](Shape shape, const std::vector<float>& v) {
    std::vector<Float16> h;
    for (float x : v) h.push_back(Float16{FloatToHalf(x)});
    return Tensor::FromVector<Float16>(std::move(shape), h);
  };
  for (const int64_t stash : {0, 1}) {
    OpTest test("SimplifiedLayerNormalization", 13);
    test.Input(half({1, 2}, {3, 4})).Input(half({2}, {1, 1})).Attr("epsilon", 0.0f).Attr("stash_type", stash).Outputs(2);
    auto out = test.Run(RegisterAllKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const float inv = 1.0f / std::sqrt(12.5f);
    EXPECT_TRUE(TensorsNear(stash == 0 ? half({1, 1}, {inv}) : F({1, 1}, {inv}), (*out)[1].tensor(), 1e-3, 1e-3));
  }
}

TEST(LayerNormalization, DefaultDomainBelowOpset17) {
  OpTest test("LayerNormalization", 13);
  test.Input(F({1, 2}, {1, 3})).Input(F({2}, {1, 1})).Input(F({2}, {0, 0})).Attr("epsilon", 0.0f);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(F({1, 2}, {-1, 1}), (*out)[0].tensor()));
}

TEST(EmbedLayerNormalization, WordPositionSegmentThenNorm) {
  OpTest test("EmbedLayerNormalization", 1, kMsDomain);
  test.Input(Tensor::FromVector<int32_t>({1, 2}, {1, 0}))
      .Input(Tensor::FromVector<int32_t>({1, 2}, {0, 1}))
      .Input(F({2, 2}, {0, 0, 1, 3}))    // word
      .Input(F({2, 2}, {0, 1, 2, 0}))    // position
      .Input(F({2, 2}, {0, 0, 5, 0}))    // segment
      .Input(F({2}, {1, 1}))
      .Input(F({2}, {0, 0}))
      .Input(Tensor::FromVector<int32_t>({1, 2}, {1, 0}))
      .Attr("epsilon", 0.0f)
      .Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // token 0: word 1 (1, 3) + position 0 (0, 1) + segment 0 = (1, 4); token 1: (0, 0) + (2, 0) + (5, 0) = (7, 0)
  EXPECT_TRUE(TensorsNear(F({1, 2, 2}, {-1, 1, 1, -1}), (*out)[0].tensor()));
  EXPECT_EQ((*out)[1].tensor().data<int32_t>()[0], 1);
  EXPECT_TRUE(TensorsNear(F({1, 2, 2}, {1, 4, 7, 0}), (*out)[2].tensor()));
}

// mask_index_type informs shape inference only: the ones of the mask are counted whatever it says,
// as ONNX Runtime does.
TEST(EmbedLayerNormalization, MaskIndexCountsOnesWhateverItsType) {
  for (const int64_t type : {0, 1}) {
    OpTest test("EmbedLayerNormalization", 1, kMsDomain);
    test.Input(Tensor::FromVector<int32_t>({2, 3}, {1, 0, 1, 1, 1, 0}))
        .AbsentInput()
        .Input(F({2, 2}, {0, 0, 1, 3}))
        .Input(F({3, 2}, {0, 1, 2, 0, 1, 1}))
        .AbsentInput()
        .Input(F({2}, {1, 1}))
        .Input(F({2}, {0, 0}))
        .Input(Tensor::FromVector<int32_t>({2, 3}, {1, 1, 1, 1, 0, 0}))
        .Attr("mask_index_type", type)
        .Outputs(2);
    auto out = test.Run(RegisterAllKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2}, {3, 1}), (*out)[1].tensor())) << "type " << type;
  }
}

// QEmbedLayerNormalization gives EmbedLayerNormalization's values on the dequantized tables,
// (q - zero_point) * scale, bit for bit: uint8 and int8 tables, a segment table, a mask.
template <typename Q>
void CheckQuantizedEmbedding() {
  const int64_t B = 2, S = 3, V = 5, P = 4, H = 8;
  auto table = [](int64_t n, int seed) {
    std::vector<Q> q(n);
    for (int64_t i = 0; i < n; ++i) q[i] = static_cast<Q>((i * 37 + seed * 11) % 200 - (std::is_signed_v<Q> ? 100 : 0));
    return q;
  };
  const std::vector<Q> word = table(V * H, 1), pos = table(P * H, 2), seg = table(2 * H, 3), gamma = table(H, 4),
                       beta = table(H, 5);
  const float scales[5] = {0.02f, 0.01f, 0.03f, 0.015f, 0.005f};
  const Q zeros[5] = {3, 7, 0, 9, 2};
  auto dequant = [](const std::vector<Q>& q, float s, Q z) {
    std::vector<float> f(q.size());
    for (size_t i = 0; i < q.size(); ++i) f[i] = static_cast<float>(static_cast<int32_t>(q[i]) - z) * s;
    return f;
  };
  const auto ids = Tensor::FromVector<int32_t>({B, S}, {4, 0, 2, 1, 3, 3});
  const auto segs = Tensor::FromVector<int32_t>({B, S}, {0, 1, 1, 0, 0, 1});
  const auto mask = Tensor::FromVector<int32_t>({B, S}, {1, 1, 0, 1, 1, 1});
  OpTest plain("EmbedLayerNormalization", 1, kMsDomain);
  plain.Input(ids).Input(segs).Input(F({V, H}, dequant(word, scales[0], zeros[0])));
  plain.Input(F({P, H}, dequant(pos, scales[1], zeros[1]))).Input(F({2, H}, dequant(seg, scales[2], zeros[2])));
  plain.Input(F({H}, dequant(gamma, scales[3], zeros[3]))).Input(F({H}, dequant(beta, scales[4], zeros[4]))).Input(mask);
  plain.Outputs(2);
  OpTest quant("QEmbedLayerNormalization", 1, kMsDomain);
  quant.Input(ids).Input(segs).Input(Tensor::FromVector<Q>({V, H}, word)).Input(Tensor::FromVector<Q>({P, H}, pos));
  quant.Input(Tensor::FromVector<Q>({2, H}, seg)).Input(Tensor::FromVector<Q>({H}, gamma));
  quant.Input(Tensor::FromVector<Q>({H}, beta)).Input(mask);
  for (float s : scales) quant.Input(Tensor::Scalar<float>(s));
  for (Q z : zeros) quant.Input(Tensor::Scalar<Q>(z));
  quant.Outputs(2);
  auto a = plain.Run(RegisterAllKernels);
  auto b = quant.Run(RegisterAllKernels);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << " " << b.status().ToString();
  EXPECT_TRUE(TensorsNear((*a)[0].tensor(), (*b)[0].tensor(), 0.0, 0.0));
  EXPECT_EQ((*b)[1].tensor().data<int32_t>()[0], 2);
  EXPECT_EQ((*b)[1].tensor().data<int32_t>()[1], 3);
}

TEST(QEmbedLayerNormalization, IsEmbedLayerNormalizationOnTheDequantizedTables) {
  CheckQuantizedEmbedding<uint8_t>();
  CheckQuantizedEmbedding<int8_t>();
}

// A quantized table without its scale and zero point of its type, or a float table, is refused
// with the input named.
TEST(QEmbedLayerNormalization, RefusesTablesWithoutTheirQuantization) {
  auto run = [](const Tensor& word_zero, const Tensor& word) {
    OpTest test("QEmbedLayerNormalization", 1, kMsDomain);
    test.Input(Tensor::FromVector<int32_t>({1, 1}, {0})).AbsentInput().Input(word);
    test.Input(Tensor::FromVector<uint8_t>({1, 2}, {1, 2})).AbsentInput();
    test.Input(Tensor::FromVector<uint8_t>({2}, {1, 2})).Input(Tensor::FromVector<uint8_t>({2}, {1, 2})).AbsentInput();
    for (int i = 0; i < 5; ++i) {
      if (i == 2) test.AbsentInput();
      else test.Input(Tensor::Scalar<float>(0.1f));
    }
    for (int i = 0; i < 5; ++i) {
      if (i == 2) test.AbsentInput();
      else test.Input(i == 0 ? word_zero : Tensor::Scalar<uint8_t>(0));
    }
    auto out = test.Run(RegisterAllKernels);
    return out.ok() ? std::string("ok") : out.status().message();
  };
  const Tensor u8_word = Tensor::FromVector<uint8_t>({1, 2}, {3, 4});
  EXPECT_EQ(run(Tensor::Scalar<uint8_t>(0), u8_word), "ok");
  EXPECT_NE(run(Tensor::Scalar<int8_t>(0), u8_word).find("the scale and zero point of 'word_embedding'"), std::string::npos)
      << run(Tensor::Scalar<int8_t>(0), u8_word);
  const std::string float_table = run(Tensor::Scalar<uint8_t>(0), F({1, 2}, {3, 4}));
  EXPECT_NE(float_table.find("input 'word_embedding' must be uint8 or int8"), std::string::npos) << float_table;
}

TEST(EmbedLayerNormalization, OutOfRangeIdIsRefused) {
  OpTest test("EmbedLayerNormalization", 1, kMsDomain);
  test.Input(Tensor::FromVector<int32_t>({1, 1}, {5}))
      .AbsentInput()
      .Input(F({2, 2}, {0, 0, 1, 3}))
      .Input(F({2, 2}, {0, 1, 2, 0}))
      .AbsentInput()
      .Input(F({2}, {1, 1}))
      .Input(F({2}, {0, 0}));
  auto out = test.Run(RegisterAllKernels);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("indexes past an embedding table (id 5"), std::string::npos)
      << out.status().message();
}

// com.onnxflow AddLayerNormalization on a float16 model's stored activations (graph/blocked_half):
// a float16 operand beside a float one, rows widened one at a time, the output in the type
// output_type names, rounded once, and the sum then in float (both in the input's type without
// it); the broadcast form too. Values as the float kernel's on the widened operands.
TEST(AddLayerNormalization, SixteenBitOperandsAndOutputType) {
  const int64_t rows = 6, n = 40;
  std::vector<float> xs(rows * n), skip(rows * n), gamma(n), beta(n);
  for (int64_t i = 0; i < rows * n; ++i) {
    xs[i] = std::sin(0.37f * i);
    skip[i] = std::cos(0.11f * i) * 2;
  }
  for (int64_t j = 0; j < n; ++j) {
    gamma[j] = 0.5f + 0.01f * j;
    beta[j] = 0.1f * (j % 3);
  }
  const SixteenBitValues x = RoundToSixteenBits(xs, DataType::kFloat16, {2, 3, n});
  auto run = [&](const Tensor& a, const Tensor& b, int64_t output_type) {
    OpTest test("AddLayerNormalization", 1, kOnnxflowDomain);
    test.Input(a).Input(b).Input(F({n}, gamma)).Input(F({n}, beta)).Attr("epsilon", 1e-5f).Outputs(4);
    if (output_type != 0) test.Attr("output_type", output_type);
    return test.Run(RegisterAllKernels);
  };
  for (const bool broadcast : {false, true}) {
    const Tensor b = broadcast ? F({n}, std::vector<float>(skip.begin(), skip.begin() + n)) : F({2, 3, n}, skip);
    auto want = run(F({2, 3, n}, x.widened), b, 0);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    for (const int64_t output_type : {int64_t{0}, int64_t{1}, int64_t{10}}) {
      auto got = run(x.tensor, b, output_type);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      for (const int out : {0, 3}) {
        const Tensor& e = (*want)[out].tensor();
        const Tensor& y = (*got)[out].tensor();
        // The sum is float wherever output_type is given (a float16 model's residual stream).
        const bool float_out = output_type == 1 || (out == 3 && output_type != 0);
        ASSERT_EQ(y.dtype(), float_out ? DataType::kFloat : DataType::kFloat16) << output_type << " output " << out;
        ASSERT_EQ(y.shape(), e.shape());
        for (int64_t i = 0; i < y.size(); ++i) {
          const float ev = e.data<float>()[i];
          const float g = y.dtype() == DataType::kFloat ? y.data<float>()[i] : HalfToFloat(y.data<Float16>()[i].bits);
          ASSERT_NEAR(g, ev, y.dtype() == DataType::kFloat ? 1e-6f : 1e-3f * (1.0f + std::fabs(ev)))
              << "broadcast " << broadcast << " output " << out << " output_type " << output_type << " at " << i;
        }
      }
    }
  }
  EXPECT_TRUE(Refused(run(x.tensor, F({2, 3, n}, skip), 5), StatusCode::kInvalidArgument,
                      "AddLayerNormalization: output_type must be FLOAT (1), FLOAT16 (10) or BFLOAT16 (16), got 5"));
}

}  // namespace
}  // namespace onnxflow
