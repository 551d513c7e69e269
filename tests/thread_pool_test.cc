// One thread pool per process whatever the thread counts (issue 25): sessions asking for 1, 2, all
// and more cores than the machine has add no threads beyond the cores (TBB's workers plus the
// main thread), and TBB is never asked for more workers than there are cores.
#include <dirent.h>

#include <thread>

#include <gtest/gtest.h>
#include <oneapi/tbb/info.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

int ProcessThreads() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
    closedir(dir);
  }
  return n;
}

std::string BranchyModel() {
  tools::ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {128, 128});
  std::vector<std::string> ends;
  for (int b = 0; b < 4; ++b) {
    const std::string p = "b" + std::to_string(b);
    m.Node("MatMul", {"x", "x"}, {p + "_mm"});
    m.Node("Tanh", {p + "_mm"}, {p});
    ends.push_back(p);
  }
  m.Node("Sum", ends, {"y"});
  m.Output("y", DataType::kFloat, {128, 128});
  return m.Serialize();
}

TEST(ThreadPool, SessionsOfEveryThreadCountShareTheCores) {
  const int cores = tbb::info::default_concurrency();
  ASSERT_EQ(ProcessThreads(), 1);  // the test's main thread alone
  testing::internal::CaptureStderr();
  std::vector<Session> sessions;
  for (int threads : {1, 2, 0, 4 * cores}) {
    SessionOptions options;
    options.threads = threads;
    auto s = Session::LoadFromBytes(BranchyModel(), options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    sessions.push_back(std::move(s).value());
  }
  const std::vector<NamedValue> inputs = {{"x", *FillTensor(DataType::kFloat, {128, 128})}};
  // Runs of every session at once, from host threads that are joined before counting.
  std::vector<std::thread> hosts;
  for (const Session& s : sessions) {
    for (int h = 0; h < 2; ++h) {
      hosts.emplace_back([&s, &inputs] {
        for (int r = 0; r < 5; ++r) EXPECT_TRUE(s.Run(inputs).ok());
      });
    }
  }
  for (auto& t : hosts) t.join();
  const std::string err = testing::internal::GetCapturedStderr();
  // main + at most cores - 1 TBB workers, + the one thread that releases memory when the process
  // goes idle (scheduler/idle_release.h), asleep otherwise: none per session.
  EXPECT_LE(ProcessThreads(), cores + 1);
  EXPECT_EQ(err.find("TBB Warning"), std::string::npos) << err;
}

}  // namespace
}  // namespace onnxflow
