// Embedding: sessions share one thread pool, the thread cap holds, async runs complete.
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

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

// Four independent branches of a few nodes each, joined at the end.
std::string BranchyModel() {
  tools::ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {256, 256});
  std::vector<std::string> ends;
  for (int b = 0; b < 4; ++b) {
    const std::string p = "b" + std::to_string(b);
    m.Node("MatMul", {"x", "x"}, {p + "_mm"});
    m.Node("Tanh", {p + "_mm"}, {p + "_t"});
    m.Node("Sigmoid", {p + "_t"}, {p});
    ends.push_back(p);
  }
  m.Node("Sum", ends, {"y"});
  m.Output("y", DataType::kFloat, {256, 256});
  return m.Serialize();
}

std::vector<NamedValue> BranchyInputs() { return {{"x", *FillTensor(DataType::kFloat, {256, 256})}}; }

TEST(Embedding, ManySessionsAddNoThreads) {
  const std::string bytes = BranchyModel();
  auto first = Session::LoadFromBytes(bytes);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->Run(BranchyInputs()).ok());
  const int before = ProcessThreads();
  std::vector<Session> sessions;
  for (int i = 0; i < 100; ++i) {
    auto s = Session::LoadFromBytes(bytes);
    ASSERT_TRUE(s.ok());
    sessions.push_back(std::move(s).value());
  }
  for (auto& s : sessions) ASSERT_TRUE(s.Run(BranchyInputs()).ok());
  EXPECT_EQ(ProcessThreads(), before);
}

TEST(Embedding, ThreadCapHolds) {
  SessionOptions one;
  one.threads = 1;
  auto s = Session::LoadFromBytes(BranchyModel(), one);
  ASSERT_TRUE(s.ok());
  RunProfile profile;
  RunOptions options;
  options.profile = &profile;
  ASSERT_TRUE(s->Run(BranchyInputs(), options).ok());
  std::set<int> threads;
  for (const auto& n : profile.nodes) threads.insert(n.thread);
  EXPECT_EQ(threads.size(), 1u);
  // 4 branches x (FusedMatMul carrying the Tanh, Sigmoid) + Sum: every node was profiled.
  EXPECT_EQ(profile.nodes.size(), 9u);
}

// More request threads than cores: at most `threads` runs execute at any moment (each run's span
// is its first node's start to its last node's end), and every run completes.
TEST(Embedding, RunsBeyondTheCoresWaitTheirTurn) {
  SessionOptions two;
  two.threads = 2;
  auto s = Session::LoadFromBytes(BranchyModel(), two);
  ASSERT_TRUE(s.ok());
  constexpr int kHosts = 6, kRunsEach = 4;
  std::vector<RunProfile> profiles(kHosts * kRunsEach);
  std::atomic<int> failures{0};
  std::vector<std::thread> hosts;
  for (int h = 0; h < kHosts; ++h) {
    hosts.emplace_back([&, h] {
      for (int r = 0; r < kRunsEach; ++r) {
        RunOptions options;
        options.profile = &profiles[h * kRunsEach + r];
        if (!s->Run(BranchyInputs(), options).ok()) ++failures;
      }
    });
  }
  for (auto& t : hosts) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<std::pair<int64_t, int>> edges;  // (time, +1 at a run's start / -1 at its end)
  for (const auto& p : profiles) {
    ASSERT_FALSE(p.nodes.empty());
    int64_t start = p.nodes[0].start_ns, end = p.nodes[0].end_ns;
    for (const auto& n : p.nodes) start = std::min(start, n.start_ns), end = std::max(end, n.end_ns);
    edges.push_back({start, +1});
    edges.push_back({end, -1});
  }
  std::sort(edges.begin(), edges.end());  // at equal times the end (-1) comes first
  int executing = 0, most = 0;
  for (const auto& [time, step] : edges) most = std::max(most, executing += step);
  EXPECT_LE(most, 2);
}

TEST(Embedding, ProfilesNamesAndOrdersNodes) {
  auto s = Session::LoadFromBytes(BranchyModel());
  ASSERT_TRUE(s.ok());
  RunProfile profile;
  RunOptions options;
  options.profile = &profile;
  ASSERT_TRUE(s->Run(BranchyInputs(), options).ok());
  int64_t sum_start = 0, latest_branch_end = 0;
  for (const auto& n : profile.nodes) {
    EXPECT_LE(n.start_ns, n.end_ns);
    if (n.op_type == "Sum") sum_start = n.start_ns;
    else latest_branch_end = std::max(latest_branch_end, n.end_ns);
  }
  EXPECT_GE(sum_start, latest_branch_end);  // the join waits for every branch
}

TEST(Embedding, AsyncRunsComplete) {
  auto s = Session::LoadFromBytes(BranchyModel());
  ASSERT_TRUE(s.ok());
  auto reference = s->Run(BranchyInputs());
  ASSERT_TRUE(reference.ok());
  std::mutex mutex;
  std::condition_variable done;
  int finished = 0, matched = 0;
  constexpr int kRuns = 16;
  for (int i = 0; i < kRuns; ++i) {
    s->RunAsync(BranchyInputs(), {}, [&](Result<std::vector<NamedValue>> out) {
      std::lock_guard<std::mutex> lock(mutex);
      ++finished;
      if (out.ok() && CompareValues((*reference)[0].value, (*out)[0].value, 0, 0).match) ++matched;
      done.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mutex);
  ASSERT_TRUE(done.wait_for(lock, std::chrono::seconds(60), [&] { return finished == kRuns; }));
  EXPECT_EQ(matched, kRuns);
}

TEST(Embedding, AsyncRunReportsErrors) {
  auto s = Session::LoadFromBytes(BranchyModel());
  ASSERT_TRUE(s.ok());
  std::mutex mutex;
  std::condition_variable done;
  bool called = false;
  Status status;
  s->RunAsync({{"x", Tensor(DataType::kInt64, {1})}}, {}, [&](Result<std::vector<NamedValue>> out) {
    std::lock_guard<std::mutex> lock(mutex);
    status = out.status();
    called = true;
    done.notify_all();
  });
  std::unique_lock<std::mutex> lock(mutex);
  ASSERT_TRUE(done.wait_for(lock, std::chrono::seconds(30), [&] { return called; }));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
}

TEST(Embedding, CancelledBeforeStartEndsWithCancelled) {
  auto s = Session::LoadFromBytes(BranchyModel());
  ASSERT_TRUE(s.ok());
  std::atomic<bool> cancel{true};
  RunOptions options;
  options.cancel = &cancel;
  auto out = s->Run(BranchyInputs(), options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
  options.cancel = nullptr;
  options.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto late = s->Run(BranchyInputs(), options);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace onnxflow
