#include "ops/nn/register.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

// Softmax / log-softmax of each [outer, n, inner] column, in double.
std::vector<double> Reference(const std::vector<float>& x, int64_t outer, int64_t n, int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < n; ++j) m = std::max<double>(m, x[(o * n + j) * inner + i]);
      for (int64_t j = 0; j < n; ++j) s += std::exp(x[(o * n + j) * inner + i] - m);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t at = (o * n + j) * inner + i;
        y[at] = log ? x[at] - m - std::log(s) : std::exp(x[at] - m) / s;
      }
    }
  }
  return y;
}

Result<std::vector<Value>> RunOp(const char* op, int opset, const Tensor& x, int64_t axis, int threads = 1) {
  OpTest t(op, opset);
  t.Input(x).Attr("axis", axis).Threads(threads);
  return t.Run(RegisterSoftmaxOps);
}

TEST(Softmax, MatchesReferenceOnEveryAxis) {
  const Shape shape = {3, 17, 5};
  std::vector<float> x(3 * 17 * 5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(i * 0.7f) * 10;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const bool log = std::string(op) == "LogSoftmax";
    for (int64_t axis : {0, 1, 2, -1}) {
      const int64_t a = axis < 0 ? axis + 3 : axis;
      const int64_t outer = a == 0 ? 1 : a == 1 ? 3 : 51;
      const int64_t n = shape[a];
      const int64_t inner = a == 0 ? 85 : a == 1 ? 5 : 1;
      auto out = RunOp(op, 13, Tensor::FromVector<float>(shape, x), axis);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const std::vector<double> ref = Reference(x, outer, n, inner, log);
      EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(shape, std::vector<float>(ref.begin(), ref.end())),
                              (*out)[0].tensor(), 1e-5, 1e-6))
          << op << " axis " << axis;
    }
  }
}

TEST(Softmax, OldVersionsCoerceTo2D) {
  std::vector<float> x(2 * 3 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7);
  auto out = RunOp("Softmax", 11, Tensor::FromVector<float>({2, 3, 4}, x), 1);
  ASSERT_TRUE(out.ok());
  const std::vector<double> ref = Reference(x, 2, 12, 1, false);
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 3, 4}, std::vector<float>(ref.begin(), ref.end())),
                          (*out)[0].tensor()));
  // Default axis: 1 before 13, -1 since.
  OpTest t("LogSoftmax", 1);
  t.Input(Tensor::FromVector<float>({2, 3, 4}, x));
  auto old_default = t.Run(RegisterSoftmaxOps);
  ASSERT_TRUE(old_default.ok());
  const std::vector<double> ref_log = Reference(x, 2, 12, 1, true);
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 3, 4}, std::vector<float>(ref_log.begin(), ref_log.end())),
                          (*old_default)[0].tensor()));
}

TEST(Softmax, LargeValuesAndThreads) {
  std::vector<float> x(64 * 2000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 10000.0f + static_cast<float>(i % 13);
  auto out = RunOp("Softmax", 13, Tensor::FromVector<float>({64, 2000}, x), -1, 2);
  ASSERT_TRUE(out.ok());
  const std::vector<double> ref = Reference(x, 64, 2000, 1, false);
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({64, 2000}, std::vector<float>(ref.begin(), ref.end())),
                          (*out)[0].tensor(), 1e-4, 1e-8));
}

TEST(Softmax, StridedAxisOverSeveralStrips) {
  std::vector<float> x(2 * 7 * 2500);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(i * 0.013f) * 20;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    auto out = RunOp(op, 13, Tensor::FromVector<float>({2, 7, 2500}, x), 1, 2);
    ASSERT_TRUE(out.ok());
    const std::vector<double> ref = Reference(x, 2, 7, 2500, std::string(op) == "LogSoftmax");
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 7, 2500}, std::vector<float>(ref.begin(), ref.end())),
                            (*out)[0].tensor(), 1e-5, 1e-6)) << op;
  }
}

// Rows of up to 16 run transposed in blocks of 256 (softmax.cc RunShortRows): counts of rows that
// leave a short last block, on one core and two, values far from zero (the row max subtracted),
// and the first length past the bound, which takes the row kernels.
TEST(Softmax, ShortRowsInBlocks) {
  for (int64_t n : {1, 2, 3, 7, 16, 17}) {
    const int64_t rows = 3 * 301;
    std::vector<float> x(rows * n);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 60.0f * std::sin(static_cast<float>(i) * 0.37f) + (i % 5 == 0 ? 500 : 0);
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      for (int threads : {1, 2}) {
        auto out = RunOp(op, 13, Tensor::FromVector<float>({3, 301, n}, x), -1, threads);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        const std::vector<double> ref = Reference(x, rows, n, 1, std::string(op) == "LogSoftmax");
        EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3, 301, n}, std::vector<float>(ref.begin(), ref.end())),
                                (*out)[0].tensor(), 1e-5, 1e-6))
            << op << " n " << n << " threads " << threads;
      }
    }
  }
}

TEST(Softmax, OtherFloatTypes) {
  const std::vector<float> xf = {1, 2, 3, 4};
  const std::vector<double> ref = Reference(xf, 1, 4, 1, false);
  auto d = RunOp("Softmax", 13, Tensor::FromVector<double>({4}, {1, 2, 3, 4}), 0);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({4}, ref), (*d)[0].tensor(), 1e-12, 1e-14));
  std::vector<Float16> h;
  std::vector<BFloat16> b;
  for (float v : xf) { h.push_back(Float16{FloatToHalf(v)}); b.push_back(BFloat16{FloatToBFloat16(v)}); }
  auto hr = RunOp("Softmax", 13, Tensor::FromVector<Float16>({4}, h), 0);
  ASSERT_TRUE(hr.ok());
  auto br = RunOp("LogSoftmax", 13, Tensor::FromVector<BFloat16>({4}, b), 0);
  ASSERT_TRUE(br.ok());
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(HalfToFloat((*hr)[0].tensor().data<Float16>()[i].bits), ref[i], 1e-3);
    EXPECT_NEAR(BFloat16ToFloat((*br)[0].tensor().data<BFloat16>()[i].bits), std::log(ref[i]), 2e-2);
  }
  EXPECT_TRUE(Refused(RunOp("Softmax", 13, Tensor::FromVector<int32_t>({2}, {1, 2}), 0), StatusCode::kUnimplemented, "type int32 is not supported here"));
}

TEST(Hardmax, FirstMaxPerRow) {
  const Tensor x = Tensor::FromVector<float>({2, 3}, {1, 3, 3, 0, -1, -2});
  auto out = RunOp("Hardmax", 13, x, -1);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 3}, {0, 1, 0, 1, 0, 0}), (*out)[0].tensor()));
  auto cols = RunOp("Hardmax", 13, x, 0);
  ASSERT_TRUE(cols.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 3}, {1, 1, 1, 0, 0, 0}), (*cols)[0].tensor()));
  auto old = RunOp("Hardmax", 11, x, 0);  // coerced: one row of 6
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 3}, {0, 1, 0, 0, 0, 0}), (*old)[0].tensor()));
  EXPECT_TRUE(Refused(RunOp("Hardmax", 13, x, 2), StatusCode::kInvalidArgument, "axis 2 is out of range for rank 2"));
}

}  // namespace
}  // namespace onnxflow
