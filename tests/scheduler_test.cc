// The scheduler: the dataflow executor gives the same bits as the sequential one on every whole
// network, and one Session serves many threads at once with identical results.
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"

namespace onnxflow {
namespace {

std::string ModelsDir() {
  const char* data = std::getenv("ONNXFLOW_TEST_DATA");
  return data != nullptr ? std::string(data) + "/models" : "";
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
  ASSERT_FALSE(models.empty()) << "no models under " << ModelsDir() << " (is ONNXFLOW_TEST_DATA set?)";
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
  // A long chain: each intermediate is freed after its consumer; the output survives.
  const std::string folder = ModelsDir() + "/real_shufflenet";
  auto session = Session::Load(folder + "/model.onnx");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = session->Run(InputsOf(*session, folder));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE((*out)[0].value.is_tensor());
  EXPECT_GT((*out)[0].value.tensor().size(), 0);
}

}  // namespace
}  // namespace onnxflow
