// The scheduler: the dataflow executor gives the same bits as the sequential one on every whole
// network, and one Session serves many threads at once with identical results.
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tests/test_data.h"

namespace onnxflow {
namespace {

std::string ModelsDir() {
  const Result<std::string> data = testing::TestDataDir();
  return data.ok() ? *data + "/models" : "";
}

std::vector<std::string> Models() {
  std::vector<std::string> names;
  if (DIR* dir = opendir(ModelsDir().c_str())) {
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<NamedValue> InputsOf(const Session& s, const std::string& folder) {
  std::vector<NamedValue> inputs;
  for (size_t i = 0; i < s.inputs().size(); ++i) {
    auto v = ReadValueFile(folder + "/test_data_set_0/input_" + std::to_string(i) + ".pb", &s.inputs()[i]);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    if (v.ok()) inputs.push_back({s.inputs()[i].name, *v});
  }
  return inputs;
}

void ExpectBitIdentical(const std::vector<NamedValue>& a, const std::vector<NamedValue>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const Comparison c = CompareValues(a[i].value, b[i].value, 0.0, 0.0);
    EXPECT_TRUE(c.match) << what << ", output " << a[i].name << ": " << c.mismatch;
  }
}

TEST(Scheduler, DataflowEqualsSequentialOnEveryModel) {
  const auto models = Models();
  ASSERT_FALSE(models.empty()) << "no models under " << ModelsDir() << " (is ../shared/onnx-tests beside the checkout?)";
  for (const std::string& name : models) {
    const std::string folder = ModelsDir() + "/" + name;
    SessionOptions dataflow, sequential;
    dataflow.threads = sequential.threads = 2;
    sequential.mode = ExecutionMode::kSequential;
    auto a = Session::Load(folder + "/model.onnx", dataflow);
    auto b = Session::Load(folder + "/model.onnx", sequential);
    ASSERT_TRUE(a.ok() && b.ok()) << name << ": " << a.status().ToString() << b.status().ToString();
    const auto inputs = InputsOf(*a, folder);
    auto out_a = a->Run(inputs);
    auto out_b = b->Run(inputs);
    ASSERT_TRUE(out_a.ok()) << name << ": " << out_a.status().ToString();
    ASSERT_TRUE(out_b.ok()) << name << ": " << out_b.status().ToString();
    ExpectBitIdentical(*out_a, *out_b, name);
  }
}

TEST(Scheduler, ManyThreadsShareOneSession) {
  const std::string folder = ModelsDir() + "/real_squeezenet";
  auto session = Session::Load(folder + "/model.onnx");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const auto inputs = InputsOf(*session, folder);
  auto reference = session->Run(inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();

  constexpr int kThreads = 8, kRunsEach = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRunsEach; ++r) {
        auto out = session->Run(inputs);
        if (!out.ok()) {
          ++failures;
          continue;
        }
        for (size_t i = 0; i < out->size(); ++i) {
          if (!CompareValues((*reference)[i].value, (*out)[i].value, 0.0, 0.0).match) ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Scheduler, FreesIntermediatesAndKeepsOutputs) {
  // A long chain whose intermediates add up to many times the run's byte limit: the run fits only
  // because each intermediate is freed after its last reader. The output survives the run.
  const std::string folder = ModelsDir() + "/real_shufflenet";
  SessionOptions options;
  options.threads = 1;
  options.mode = ExecutionMode::kSequential;
  auto probe = Session::Load(folder + "/model.onnx", options);
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  const auto inputs = InputsOf(*probe, folder);
  RunProfile profile;
  RunOptions profiled;
  profiled.profile = &profile;
  ASSERT_TRUE(probe->Run(inputs, profiled).ok());
  int64_t total = 0, largest = 0;
  for (const NodeTiming& n : profile.nodes) {
    int64_t bytes = 4;  // float intermediates
    for (int64_t d : n.output_shape) bytes *= d;
    total += bytes;
    largest = std::max(largest, bytes);
  }
  const int64_t limit = total / 4;
  ASSERT_GT(limit, 4 * largest) << "the chain is too short for this test to tell";

  options.limits.max_run_bytes = limit;
  auto session = Session::Load(folder + "/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = session->Run(inputs);
  ASSERT_TRUE(out.ok()) << "holding every intermediate would need " << total << " bytes, the limit is " << limit
                        << ": " << out.status().ToString();
  ASSERT_EQ(1u, out->size());
  ASSERT_TRUE((*out)[0].value.is_tensor());
  EXPECT_EQ((Shape{1, 1000}), (*out)[0].value.tensor().shape());

  // The limit is enforced: below the largest intermediate the same run is refused.
  options.limits.max_run_bytes = largest / 2;
  auto starved = Session::Load(folder + "/model.onnx", options);
  ASSERT_TRUE(starved.ok()) << starved.status().ToString();
  auto refused = starved->Run(inputs);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(StatusCode::kResourceExhausted, refused.status().code()) << refused.status().ToString();
}

}  // namespace
}  // namespace onnxflow
