// Memory returns to its floor (issue 25): after a burst of runs with large dynamic shapes and one
// idle second, the resident set is back within 10% of where it was before the burst, the GEMM's
// free list and the tensor pool included.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tests/rss.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using testing::RssMb;

// x: [N, 256] -> MatMul(W 256x256) -> Relu -> MatMul(W) -> y
std::string Model() {
  tools::ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {-1, 256});
  std::vector<float> w(256 * 256);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 13) / 13.0f - 0.5f;
  m.Initializer("w", Tensor::FromVector<float>({256, 256}, w));
  m.Node("MatMul", {"x", "w"}, {"a"});
  m.Node("Relu", {"a"}, {"r"});
  m.Node("MatMul", {"r", "w"}, {"y"});
  m.Output("y", DataType::kFloat, {-1, 256});
  return m.Serialize();
}

TEST(MemoryFloor, RssFallsBackAfterABurstAndAnIdleSecond) {
  auto session = Session::LoadFromBytes(Model());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::vector<NamedValue> small = {{"x", *FillTensor(DataType::kFloat, {4, 256})}};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(session->Run(small).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  const double floor = RssMb();

  double during = 0;
  for (int rows : {8192, 16384, 12288, 16384}) {  // ~16-64 MiB per tensor
    std::vector<NamedValue> big = {{"x", *FillTensor(DataType::kFloat, {rows, 256})}};
    auto out = session->Run(big);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    during = std::max(during, RssMb());
  }
  EXPECT_GT(during, floor + 40) << "the burst should have raised RSS; floor " << floor;

  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the idle second, and some slack
  const double after = RssMb();
  EXPECT_LE(after, floor * 1.10) << "floor " << floor << " MiB, during " << during << " MiB, after " << after << " MiB";
  std::printf("rss floor %.1f MiB, during burst %.1f MiB, after idle %.1f MiB\n", floor, during, after);
}

}  // namespace
}  // namespace onnxflow
