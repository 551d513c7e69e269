// Weights shared across sessions (issue 25): a second session of the same model keeps no second
// copy of its weights (the packed ones included), so two sessions of real_inception_v1 in one
// process peak no more than the second load's transient parse above one session's peak.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tests/rss.h"
#include "tests/test_data.h"

namespace onnxflow {
namespace {

// Loads the model and runs it once (a run's buffers are part of what a serving session costs).
Result<Session> LoadAndRun(const std::string& path) {
  ONNXFLOW_ASSIGN_OR_RETURN(Session session, Session::Load(path));
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor x, FillTensor(DataType::kFloat, {1, 3, 224, 224}));
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<NamedValue> out, session.Run({{"data_0", x}}));
  if (out.size() != 1 || out[0].value.tensor().shape() != Shape{1, 1000}) return Internal("unexpected output");
  return session;
}

// Peak and resident set of the whole process (/usr/bin/time -v's "Maximum resident set size" is
// the peak), after loading and running one session, then a second one beside it.
TEST(SharedWeights, TwoSessionsOfInceptionPeakAtMostTheParseAboveOne) {
  auto dir = testing::TestDataDir();
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  const std::string path = *dir + "/models/real_inception_v1/model.onnx";

  auto start = std::chrono::steady_clock::now();
  auto first = LoadAndRun(path);
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const double one_peak = testing::PeakRssMb(), one_rss = testing::RssMb();
  start = std::chrono::steady_clock::now();
  auto second = LoadAndRun(path);
  const double second_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  const double two_peak = testing::PeakRssMb(), two_rss = testing::RssMb();
  std::printf("load and first run: %.0f ms, the second session's %.0f ms\n", first_ms, second_ms);
  std::printf("one session: peak %.1f MiB, resident %.1f MiB; two sessions: peak %.1f MiB (%.2fx), "
              "resident %.1f MiB (%.2fx)\n",
              one_peak, one_rss, two_peak, two_peak / one_peak, two_rss, two_rss / one_rss);
  // Peak (the measure): 1.80x before the weights were shared, 1.04x-1.05x after, when the
  // first session's pools held ~40 MB of free buffers that the second load's parse took the place
  // of. Since big buffers share one arena (include/onnxflow/storage_arena.h) the first session
  // holds little free memory and peaks lower (~91 MiB, was ~100), so the second load's parsed
  // weights (28 MB, dropped once its kernels find their packed weights already made) show: 105 MiB
  // for two sessions, as before, 1.16x. A second copy of the weights (packed, and the constants)
  // would add more than the file's size.
  const double file_mb = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
  EXPECT_LE(two_peak - one_peak, 0.75 * file_mb)
      << "peak: one session " << one_peak << " MiB, two " << two_peak << " MiB";
  // The resident sets are printed, not asserted: one idle second between the runs (a stalled CI
  // machine) frees the pools and moves them by a quarter. Measured 1.00x-1.01x (1.67x before).
}

}  // namespace
}  // namespace onnxflow
