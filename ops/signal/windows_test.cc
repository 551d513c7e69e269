#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/signal/register.h"

namespace onnxflow {
namespace {

Result<Tensor> Window(const std::string& op, int64_t size, int64_t periodic, int64_t dtype = 1) {
  OpTest t(op, 17);
  t.Attr("periodic", periodic).Attr("output_datatype", dtype).Input(Tensor::Scalar<int64_t>(size));
  auto out = t.Run(RegisterSignalKernels);
  if (!out.ok()) return out.status();
  return out.value()[0].tensor();
}

TEST(Windows, HandValuesOfFourPoints) {
  // Periodic N = 4: cos(2 pi n / 4) = 1, 0, -1, 0.
  auto hann = Window("HannWindow", 4, 1);
  ASSERT_TRUE(hann.ok()) << hann.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({4}, {0, 0.5f, 1, 0.5f}), *hann, 1e-6, 1e-6));
  auto hamming = Window("HammingWindow", 4, 1);
  ASSERT_TRUE(hamming.ok());
  const float a = 25.0f / 46, b = 21.0f / 46;
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({4}, {a - b, a, a + b, a}), *hamming, 1e-6, 1e-6));
  auto blackman = Window("BlackmanWindow", 4, 1);
  ASSERT_TRUE(blackman.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({4}, {0, 0.34f, 1, 0.34f}), *blackman, 1e-6, 1e-6));
  // Symmetric N = size - 1 = 2: ends at 0, the middle at 1.
  auto sym = Window("HannWindow", 3, 0);
  ASSERT_TRUE(sym.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3}, {0, 1, 0}), *sym, 1e-6, 1e-6));
}

TEST(Windows, OutputTypesAndEdgeSizes) {
  auto d = Window("HannWindow", 4, 1, 11);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->dtype(), DataType::kDouble);
  EXPECT_NEAR(d->data<double>()[1], 0.5, 1e-15);
  auto h = Window("HammingWindow", 4, 1, 10);
  ASSERT_TRUE(h.ok());
  EXPECT_NEAR(HalfToFloat(h->data<Float16>()[2].bits), 1.0f, 1e-3);
  auto i = Window("HannWindow", 4, 1, 7);  // int64 truncates: only the peak is 1
  ASSERT_TRUE(i.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({4}, {0, 0, 1, 0}), *i));
  auto empty = Window("HannWindow", 0, 1);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0);
  auto one = Window("HannWindow", 1, 0);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->data<float>()[0], 1.0f);
  EXPECT_TRUE(Refused(Window("HannWindow", -1, 1), StatusCode::kInvalidArgument, "window size must be >= 0, got -1"));
  EXPECT_TRUE(Refused(Window("HannWindow", 4, 1, 8), StatusCode::kInvalidArgument, "output_datatype 8 is not a numeric type"));  // string output
}

}  // namespace
}  // namespace onnxflow
