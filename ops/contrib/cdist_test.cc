// com.microsoft CDist by hand, and close rows that the expanded form would cancel to noise.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "ops/register_all.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

Result<Tensor> CDist(const Tensor& a, const Tensor& b, const std::string& metric) {
  OpTest t("CDist", 1, "com.microsoft");
  t.Input(a).Input(b);
  if (!metric.empty()) t.Attr("metric", metric);
  auto out = t.Run(RegisterAllKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

TEST(CDist, SquaredAndPlainEuclidean) {
  const Tensor a = Tensor::FromVector<float>({2, 2}, {0, 0, 1, 1});
  const Tensor b = Tensor::FromVector<float>({3, 2}, {3, 4, 0, 0, 1, 0});
  auto sq = CDist(a, b, "");  // sqeuclidean by default
  ASSERT_TRUE(sq.ok()) << sq.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 3}, {25, 0, 1, 13, 2, 1}), *sq));
  auto e = CDist(Tensor::FromVector<double>({1, 2}, {0, 0}), Tensor::FromVector<double>({1, 2}, {3, 4}), "euclidean");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->data<double>()[0], 5.0);
}

TEST(CDist, CloseRowsKeepTheirDistance) {
  // 1000 + 1e-3 apart in one coordinate: exactly (the float difference)^2, where a^2 - 2ab + b^2
  // in float would lose it to rounding of the 1e6 terms.
  const float x = 1000.0f, y = 1000.001f;
  auto d = CDist(Tensor::FromVector<float>({1, 1}, {x}), Tensor::FromVector<float>({1, 1}, {y}), "sqeuclidean");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->data<float>()[0], (x - y) * (x - y));
  EXPECT_GT(d->data<float>()[0], 0.0f);
}

TEST(CDist, Refusals) {
  const Tensor a = Tensor::FromVector<float>({1, 2}, {0, 0});
  EXPECT_FALSE(CDist(a, Tensor::FromVector<float>({1, 3}, {0, 0, 0}), "").ok());
  EXPECT_FALSE(CDist(a, Tensor::FromVector<double>({1, 2}, {0, 0}), "").ok());
  auto metric = CDist(a, a, "cityblock");
  ASSERT_FALSE(metric.ok());
  EXPECT_NE(metric.status().message().find("'cityblock'"), std::string::npos);
}

}  // namespace
}  // namespace onnxflow
