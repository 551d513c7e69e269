// MatMul / FusedMatMul and Gemm / FusedGemm against plain loops: broadcasting, 1-D operands,
// constant (pre-packed) weights, every listed type, bias shapes, and error paths.
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Reference numpy matmul for shapes with explicit (broadcast) batch: a [ba..., m, k], b [bb..., k, n].
std::vector<float> RefBatchedMatMul(const std::vector<float>& a, const std::vector<float>& b, int64_t batch_a,
                                    int64_t batch_b, int64_t m, int64_t k, int64_t n) {
  const int64_t batch = std::max(batch_a, batch_b);
  std::vector<float> y(batch * m * n);
  for (int64_t t = 0; t < batch; ++t) {
    const float* ap = a.data() + (batch_a == 1 ? 0 : t) * m * k;
    const float* bp = b.data() + (batch_b == 1 ? 0 : t) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += static_cast<double>(ap[i * k + q]) * bp[q * n + j];
        y[(t * m + i) * n + j] = static_cast<float>(s);
      }
  }
  return y;
}

TEST(MatMulTest, BroadcastAndConstantB) {
  struct Case { Shape a, b; int64_t ba, bb, m, k, n; Shape y; };
  const std::vector<Case> cases = {
      {{3, 5, 17}, {17, 33}, 3, 1, 5, 17, 33, {3, 5, 33}},      // batches stack into one GEMM
      {{1, 7, 9}, {4, 9, 3}, 1, 4, 7, 9, 3, {4, 7, 3}},         // A broadcasts
      {{4, 7, 9}, {4, 9, 50}, 4, 4, 7, 9, 50, {4, 7, 50}},      // batch pairs
      {{20, 100, 64}, {20, 64, 100}, 20, 20, 100, 64, 100, {20, 100, 100}},
  };
  for (const Case& c : cases) {
    const auto a = Random(ElementCount(c.a), 1), b = Random(ElementCount(c.b), 2);
    const auto expected = RefBatchedMatMul(a, b, c.ba, c.bb, c.m, c.k, c.n);
    for (int constant = 0; constant < 2; ++constant) {
      for (int threads : {1, 2}) {
        OpTest t("MatMul", 13);
        t.Input(Tensor::FromVector<float>(c.a, a)).Input(Tensor::FromVector<float>(c.b, b)).Threads(threads);
        if (constant) t.ConstantInput(1);
        auto out = t.Run(RegisterMathKernels);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(c.y, expected), (*out)[0].tensor(), 1e-4, 1e-5));
      }
    }
  }
}

// A half model's MatMul and Gemm after graph/half_compute: float A, a constant 16-bit B kept in 16
// bits (ops/math/constant_b.h). Widening a 16-bit value is exact and the blocks come out in the
// GEMM's own layout, so the result equals the float product of the widened B bit for bit: over
// several strips and K blocks, 1 and 2 threads, B as is and transposed.
TEST(MatMulTest, SixteenBitConstantBEqualsItsFloatProduct) {
  const int64_t m = 37, k = 300, n = 70;
  const auto a = Random(m * k, 3), b = Random(k * n, 4);
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    for (int trans : {0, 1}) {
      // Gemm with transB reads B as [n, k]: the same values, stored transposed.
      Shape b_shape = trans ? Shape{n, k} : Shape{k, n};
      std::vector<float> stored(b.size());
      for (int64_t r = 0; r < k; ++r) {
        for (int64_t c = 0; c < n; ++c) stored[trans ? c * k + r : r * n + c] = b[r * n + c];
      }
      const SixteenBitValues rounded = RoundToSixteenBits(stored, type, b_shape);
      const Tensor& b16 = rounded.tensor;
      const std::vector<float>& wt = rounded.widened;
      for (int threads : {1, 2}) {
        for (const char* op : {"MatMul", "Gemm"}) {
          if (trans && std::string(op) == "MatMul") continue;
          OpTest half(op, 13), full(op, 13);
          half.Input(Tensor::FromVector<float>({m, k}, a)).Input(b16).ConstantInput(1).Threads(threads);
          full.Input(Tensor::FromVector<float>({m, k}, a)).Input(Tensor::FromVector<float>(b_shape, wt))
              .ConstantInput(1).Threads(threads);
          if (trans) {
            half.Attr("transB", int64_t{1});
            full.Attr("transB", int64_t{1});
          }
          auto y16 = half.Run(RegisterMathKernels);
          auto y32 = full.Run(RegisterMathKernels);
          ASSERT_TRUE(y16.ok()) << y16.status().ToString();
          ASSERT_TRUE(y32.ok()) << y32.status().ToString();
          const Tensor& t16 = (*y16)[0].tensor();
          ASSERT_EQ(t16.dtype(), DataType::kFloat);
          ASSERT_EQ(t16.shape(), (Shape{m, n}));
          for (int64_t i = 0; i < m * n; ++i) {
            ASSERT_EQ(t16.data<float>()[i], (*y32)[0].tensor().data<float>()[i]) << op << " " << i;
          }
        }
      }
    }
  }
}

TEST(MatMulTest, OneDimensionalOperands) {
  OpTest vv("MatMul", 13);
  vv.Input(Tensor::FromVector<float>({3}, {1, 2, 3})).Input(Tensor::FromVector<float>({3}, {4, 5, 6}));
  auto out = vv.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({}, {32}), (*out)[0].tensor()));
  OpTest mv("MatMul", 13);
  mv.Input(Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(Tensor::FromVector<float>({3}, {1, 0, -1}));
  out = mv.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2}, {-2, -2}), (*out)[0].tensor()));
  OpTest vm("MatMul", 13);
  vm.Input(Tensor::FromVector<float>({2}, {1, 2})).Input(Tensor::FromVector<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  out = vm.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 2}, {7, 10, 19, 22}), (*out)[0].tensor()));
}

TEST(MatMulTest, AllTypes) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]
  auto check = [](auto tag) {
    using T = decltype(tag);
    auto mk = [](std::vector<float> v) {
      std::vector<T> o;
      for (float f : v) o.push_back(FromCompute<T>(static_cast<ComputeType<T>>(f)));
      return Tensor::FromVector<T>({2, 2}, o);
    };
    OpTest t("MatMul", 13);
    t.Input(mk({1, 2, 3, 4})).Input(mk({5, 6, 7, 8}));
    auto out = t.Run(RegisterMathKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const T* y = (*out)[0].tensor().template data<T>();
    const float expected[] = {19, 22, 43, 50};
    for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<double>(ToCompute<T>(y[i])), expected[i]);
  };
  check(float{});
  check(double{});
  check(Float16{});
  check(BFloat16{});
  check(int32_t{});
  check(int64_t{});
  check(uint32_t{});
  check(uint64_t{});
}

TEST(MatMulTest, FusedActivationAndErrors) {
  OpTest f("FusedMatMul", 1, "com.onnxflow");
  f.Input(Tensor::FromVector<float>({1, 2}, {1, -1})).Input(Tensor::FromVector<float>({2, 2}, {1, 2, 3, 1}))
      .Attr("activation", std::string("Relu"));
  auto out = f.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 2}, {0, 1}), (*out)[0].tensor()));

  // A bias vector (from MatMul -> Add at load), before the activation: [1 - 1 + 0.5, 2 - 1 - 3] =
  // [0.5, -2] -> [0.5, 0]; on a batch of A with a constant B, the bias goes to every row.
  OpTest biased("FusedMatMul", 1, "com.onnxflow");
  biased.Input(Tensor::FromVector<float>({2, 1, 2}, {1, -1, 2, 0}))
      .Input(Tensor::FromVector<float>({2, 2}, {1, 2, 1, 1}))
      .ConstantInput(1)
      .Input(Tensor::FromVector<float>({2}, {0.5f, -3.0f}))
      .Attr("activation", std::string("Relu"));
  out = biased.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 1, 2}, {0.5f, 0, 2.5f, 1}), (*out)[0].tensor()));
  OpTest wrong_bias("FusedMatMul", 1, "com.onnxflow");
  wrong_bias.Input(Tensor(DataType::kFloat, {1, 2})).Input(Tensor(DataType::kFloat, {2, 2}))
      .Input(Tensor(DataType::kFloat, {3}));
  auto refused = wrong_bias.Run(RegisterMathKernels);
  ASSERT_TRUE(Refused(refused, StatusCode::kInvalidArgument, "FusedMatMul: bias must be a float vector of 2 values, got float32 [3]"));
  EXPECT_NE(refused.status().ToString().find("bias"), std::string::npos) << refused.status().ToString();

  OpTest int_bias("FusedMatMul", 1, "com.onnxflow");  // the bias rides on the float GEMM only
  int_bias.Input(Tensor(DataType::kInt32, {1, 2})).Input(Tensor(DataType::kInt32, {2, 2}))
      .Input(Tensor(DataType::kInt32, {2}));
  auto int_refused = int_bias.Run(RegisterMathKernels);
  ASSERT_TRUE(Refused(int_refused, StatusCode::kUnimplemented, "FusedMatMul supports float, float16 and bfloat16 only"));
  EXPECT_EQ(int_refused.status().code(), StatusCode::kUnimplemented) << int_refused.status().ToString();

  OpTest inner("MatMul", 13);
  inner.Input(Tensor(DataType::kFloat, {2, 3})).Input(Tensor(DataType::kFloat, {4, 2}));
  EXPECT_TRUE(Refused(inner.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "MatMul: inner dimensions differ, A [2,3] and B [4,2]"));
  OpTest batch("MatMul", 13);
  batch.Input(Tensor(DataType::kFloat, {2, 2, 3})).Input(Tensor(DataType::kFloat, {3, 3, 2}));
  EXPECT_TRUE(Refused(batch.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "shapes [2] and [3] do not broadcast"));
  OpTest types("MatMul", 13);
  types.Input(Tensor(DataType::kFloat, {2, 2})).Input(Tensor(DataType::kDouble, {2, 2}));
  EXPECT_TRUE(Refused(types.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "MatMul: A is float32 but B is float64"));
}

TEST(GemmOpTest, TransposesAlphaBetaAndBiasShapes) {
  const int64_t m = 5, k = 7, n = 9;
  const auto a = Random(m * k, 3), b = Random(k * n, 4), c = Random(m * n, 5);
  const float alpha = 0.5f, beta = 2.0f;
  struct Bias { Shape shape; std::function<float(int64_t, int64_t)> at; };
  const std::vector<Bias> biases = {
      {{}, [&](int64_t, int64_t) { return c[0]; }},
      {{n}, [&](int64_t, int64_t j) { return c[j]; }},
      {{1, n}, [&](int64_t, int64_t j) { return c[j]; }},
      {{m, 1}, [&](int64_t i, int64_t) { return c[i]; }},
      {{m, n}, [&](int64_t i, int64_t j) { return c[i * n + j]; }},
  };
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      // Lay A and B out as their transposes when the flags say so.
      std::vector<float> at(a.size()), bt(b.size());
      for (int64_t i = 0; i < m; ++i)
        for (int64_t q = 0; q < k; ++q) at[ta ? q * m + i : i * k + q] = a[i * k + q];
      for (int64_t q = 0; q < k; ++q)
        for (int64_t j = 0; j < n; ++j) bt[tb ? j * k + q : q * n + j] = b[q * n + j];
      for (const Bias& bias : biases) {
        std::vector<float> expected(m * n);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t q = 0; q < k; ++q) s += static_cast<double>(a[i * k + q]) * b[q * n + j];
            expected[i * n + j] = static_cast<float>(alpha * s + beta * bias.at(i, j));
          }
        for (int constant = 0; constant < 2; ++constant) {
          OpTest t("Gemm", 13);
          t.Input(Tensor::FromVector<float>(ta ? Shape{k, m} : Shape{m, k}, at))
              .Input(Tensor::FromVector<float>(tb ? Shape{n, k} : Shape{k, n}, bt))
              .Input(Tensor::FromVector<float>(bias.shape, std::vector<float>(c.begin(), c.begin() + ElementCount(bias.shape))))
              .Attr("transA", int64_t{ta}).Attr("transB", int64_t{tb}).Attr("alpha", alpha).Attr("beta", beta);
          if (constant) t.ConstantInput(1);
          auto out = t.Run(RegisterMathKernels);
          ASSERT_TRUE(out.ok()) << out.status().ToString();
          EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({m, n}, expected), (*out)[0].tensor(), 1e-5, 1e-5))
              << "ta=" << ta << " tb=" << tb << " bias=" << ShapeToString(bias.shape);
        }
      }
    }
  }
}

TEST(GemmOpTest, TypesFusedAndErrors) {
  OpTest d("Gemm", 13);
  d.Input(Tensor::FromVector<double>({1, 2}, {1, 2})).Input(Tensor::FromVector<double>({2, 1}, {3, 4}))
      .Input(Tensor::FromVector<double>({1}, {0.5}));
  auto out = d.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].tensor().data<double>()[0], 11.5);
  OpTest i("Gemm", 13);
  i.Input(Tensor::FromVector<int64_t>({1, 2}, {1, 2})).Input(Tensor::FromVector<int64_t>({2, 1}, {3, 4}))
      .Attr("alpha", 2.0f);
  out = i.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].tensor().data<int64_t>()[0], 22);
  // Fractional alpha and beta on integers scale the product and C, then convert toward zero
  // (alpha 0.5 was converted to 0 first): 0.5 * 11 + 0.5 * 7 = 9; -0.5 * 11 + 0.25 * 7 = -3.75 -> -3.
  for (const auto& [alpha, beta, want] : {std::tuple{0.5f, 0.5f, 9}, std::tuple{-0.5f, 0.25f, -3}}) {
    OpTest f("Gemm", 13);
    f.Input(Tensor::FromVector<int32_t>({1, 2}, {1, 2})).Input(Tensor::FromVector<int32_t>({2, 1}, {3, 4}))
        .Input(Tensor::FromVector<int32_t>({1}, {7})).Attr("alpha", alpha).Attr("beta", beta);
    out = f.Run(RegisterMathKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].tensor().data<int32_t>()[0], want) << alpha << " " << beta;
  }
  OpTest h("FusedGemm", 1, "com.onnxflow");
  h.Input(Tensor::FromVector<Float16>({1, 2}, {Float16{FloatToHalf(1)}, Float16{FloatToHalf(2)}}))
      .Input(Tensor::FromVector<Float16>({2, 1}, {Float16{FloatToHalf(-3)}, Float16{FloatToHalf(1)}}))
      .Attr("activation", std::string("LeakyRelu")).Attr("activation_alpha", 0.5f);
  out = h.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(HalfToFloat((*out)[0].tensor().data<Float16>()[0].bits), -0.5f);
  OpTest bad("Gemm", 13);
  bad.Input(Tensor(DataType::kFloat, {2, 3})).Input(Tensor(DataType::kFloat, {3, 4})).Input(Tensor(DataType::kFloat, {3}));
  EXPECT_TRUE(Refused(bad.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "Gemm: C [3] does not broadcast to [2,4]"));
  OpTest inner("Gemm", 13);
  inner.Input(Tensor(DataType::kFloat, {2, 3})).Input(Tensor(DataType::kFloat, {2, 4}));
  EXPECT_TRUE(Refused(inner.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "Gemm: inner dimensions differ, A [2,3] (transA=0) and B [2,4] (transB=0)"));
}

// FusedMatMul on a float16 model's stored activations (graph/blocked_half): A in float16 against
// constant float16 weights or a float batch of B, Y in the type output_type names; the same values
// as the float product of the widened A, Y rounded once. Types outside float / float16 / bfloat16
// for output_type are refused.
TEST(MatMulTest, SixteenBitActivationsAndOutputType) {
  const int64_t m = 21, k = 300, n = 70;
  const SixteenBitValues a = RoundToSixteenBits(Random(2 * m * k, 1), DataType::kFloat16, {2, m, k});
  const SixteenBitValues w = RoundToSixteenBits(Random(k * n, 2), DataType::kFloat16, {k, n});
  const std::vector<float> bias = Random(n, 3);
  const std::vector<float> want = RefBatchedMatMul(a.widened, w.widened, 2, 1, m, k, n);
  for (const int64_t y_type : {int64_t{1}, int64_t{10}}) {
    OpTest t("FusedMatMul", 1, "com.onnxflow");
    t.Input(a.tensor).Input(w.tensor).ConstantInput(1).Input(Tensor::FromVector<float>({n}, bias)).Attr("output_type", y_type);
    auto out = t.Run(RegisterMathKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& y = (*out)[0].tensor();
    ASSERT_EQ(y.dtype(), static_cast<DataType>(y_type));
    ASSERT_EQ(y.shape(), (Shape{2, m, n}));
    for (int64_t i = 0; i < y.size(); ++i) {
      const float expected = want[i] + bias[i % n];
      const float got = y_type == 1 ? y.data<float>()[i] : HalfToFloat(y.data<Float16>()[i].bits);
      const float tolerance = y_type == 1 ? 1e-4f : 1e-3f * (1.0f + std::fabs(expected));
      ASSERT_NEAR(got, expected, tolerance) << "output_type " << y_type << " at " << i;
    }
  }
  // A float16 A against a float B of its own per batch entry (a product of two activations).
  const std::vector<float> b = Random(2 * k * n, 4);
  OpTest batched("FusedMatMul", 1, "com.onnxflow");
  batched.Input(a.tensor).Input(Tensor::FromVector<float>({2, k, n}, b)).Attr("output_type", int64_t{10});
  auto out = batched.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<float> want_batched = RefBatchedMatMul(a.widened, b, 2, 2, m, k, n);
  for (int64_t i = 0; i < (*out)[0].tensor().size(); ++i) {
    ASSERT_NEAR(HalfToFloat((*out)[0].tensor().data<Float16>()[i].bits), want_batched[i],
                1e-3f * (1.0f + std::fabs(want_batched[i])))
        << i;
  }
  OpTest bad("FusedMatMul", 1, "com.onnxflow");
  bad.Input(a.tensor).Input(w.tensor).Attr("output_type", int64_t{7});
  EXPECT_TRUE(Refused(bad.Run(RegisterMathKernels), StatusCode::kInvalidArgument,
                      "FusedMatMul: output_type must be FLOAT (1), FLOAT16 (10) or BFLOAT16 (16), got 7"));
}

}  // namespace
}  // namespace onnxflow
