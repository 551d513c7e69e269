// Heavy load (issue 7): many threads run several sessions at once; some runs are cancelled, some
// pass their deadline, some get bad inputs, and the good runs must keep producing exactly the
// right outputs. Bounded in time (a few seconds); run it under ASan to see leaks and races.
// Also: max_run_bytes and max_tensor_bytes end a run with ResourceExhausted naming the limit and
// the node, and memory a run freed (or handed out as outputs) is given back to its budget.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using tools::GraphBuilder;
using tools::ModelBuilder;
using tools::SetAttr;
using tools::SetGraphAttr;

// y = Relu(x @ w) + b over [4, 8] x [8, 8], two branches joined (so the flow graph has width).
std::string DenseModel() {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {4, 8});
  std::vector<float> w(64), b(8);
  for (int i = 0; i < 64; ++i) w[i] = static_cast<float>((i * 7) % 11) / 11.0f - 0.4f;
  for (int i = 0; i < 8; ++i) b[i] = 0.1f * i;
  m.Initializer("w", Tensor::FromVector<float>({8, 8}, w));
  m.Initializer("b", Tensor::FromVector<float>({8}, b));
  m.Node("MatMul", {"x", "w"}, {"xw"});
  m.Node("Relu", {"xw"}, {"r"});
  m.Node("Sigmoid", {"x"}, {"s"});
  m.Node("ReduceSum", {"s"}, {"ss"});
  m.Node("Add", {"r", "b"}, {"rb"});
  m.Node("Mul", {"rb", "ss"}, {"y"});
  m.Output("y", DataType::kFloat, {4, 8});
  return m.Serialize();
}

// y = Gather(table, idx): bad indices are refused at run time.
std::string GatherModel() {
  ModelBuilder m(13);
  m.Input("idx", DataType::kInt64, {-1});
  std::vector<float> table(10 * 3);
  for (int i = 0; i < 30; ++i) table[i] = static_cast<float>(i);
  m.Initializer("table", Tensor::FromVector<float>({10, 3}, table));
  m.Node("Gather", {"table", "idx"}, {"y"});
  m.Output("y", DataType::kFloat, {-1, 3});
  return m.Serialize();
}

// A Loop that counts to `trips` (from the input): long enough to be cancelled midway.
std::string CountingLoopModel() {
  ModelBuilder m(17);
  m.Input("trips", DataType::kInt64, {});
  m.Initializer("cond", Tensor::FromVector<bool>({}, {true}));
  m.Initializer("zero", Tensor::FromVector<float>({1}, {0}));
  auto& loop = m.Node("Loop", {"trips", "cond", "zero"}, {"sum"}, "count");
  GraphBuilder body = SetGraphAttr(loop, "body");
  body.Input("i", DataType::kInt64, {});
  body.Input("c", DataType::kBool, {});
  body.Input("acc", DataType::kFloat, {1});
  body.Initializer("one", Tensor::FromVector<float>({1}, {1}));
  body.Node("Identity", {"c"}, {"c_out"});
  body.Node("Add", {"acc", "one"}, {"acc_out"});
  body.Output("c_out", DataType::kBool, {});
  body.Output("acc_out", DataType::kFloat, {1});
  m.Output("sum", DataType::kFloat, {1});
  return m.Serialize();
}

Tensor DenseInput(int seed) {
  std::vector<float> v(32);
  for (int i = 0; i < 32; ++i) v[i] = static_cast<float>((i + seed) % 13) / 13.0f - 0.5f;
  return Tensor::FromVector<float>({4, 8}, v);
}

TEST(Load, ManyThreadsSessionsCancelsAndBadInputs) {
  SessionOptions options;
  options.threads = 2;
  auto dense = Session::LoadFromBytes(DenseModel(), options);
  auto gather = Session::LoadFromBytes(GatherModel(), options);
  SessionOptions sequential = options;
  sequential.mode = ExecutionMode::kSequential;
  auto dense_seq = Session::LoadFromBytes(DenseModel(), sequential);
  // The loop's 2^40 trips are past the default iteration limit, which would refuse them before the
  // first one: this session allows them, so that a cancel or a deadline is what ends the run.
  SessionOptions looping = options;
  looping.limits.max_loop_iterations = int64_t{1} << 41;
  auto loop = Session::LoadFromBytes(CountingLoopModel(), looping);
  ASSERT_TRUE(dense.ok()) << dense.status().ToString();
  ASSERT_TRUE(gather.ok()) << gather.status().ToString();
  ASSERT_TRUE(dense_seq.ok()) << dense_seq.status().ToString();
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();

  // References, computed before the storm.
  constexpr int kInputs = 5;
  std::vector<Tensor> expected;
  for (int k = 0; k < kInputs; ++k) {
    auto out = dense_seq->Run({{"x", DenseInput(k)}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    expected.push_back((*out)[0].value.tensor());
  }

  constexpr int kThreads = 8;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
  std::atomic<int> good{0}, wrong{0}, refused{0}, cancelled{0}, unexpected{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      while (std::chrono::steady_clock::now() < end) {
        const int job = static_cast<int>(rng() % 6);
        if (job <= 1) {  // good dense run, dataflow or sequential session
          const int k = static_cast<int>(rng() % kInputs);
          const Session& s = job == 0 ? *dense : *dense_seq;
          auto out = s.Run({{"x", DenseInput(k)}});
          if (out.ok() && CompareValues(Value(expected[k]), (*out)[0].value, 0, 0).match) {
            ++good;
          } else {
            ++wrong;
          }
        } else if (job == 2) {  // good gather
          auto out = gather->Run({{"idx", Tensor::FromVector<int64_t>({2}, {9, -10})}});
          if (out.ok() && (*out)[0].value.tensor().data<float>()[0] == 27.0f &&
              (*out)[0].value.tensor().data<float>()[5] == 2.0f) {
            ++good;
          } else {
            ++wrong;
          }
        } else if (job == 3) {  // bad inputs: index out of range, wrong type, missing, wrong shape
          Result<std::vector<NamedValue>> out = InvalidArgument("unset");
          StatusCode code = StatusCode::kInvalidArgument;
          const char* reason = "";
          switch (rng() % 4) {
            case 0:
              out = gather->Run({{"idx", Tensor::FromVector<int64_t>({2}, {1, 10})}});
              code = StatusCode::kOutOfRange;
              reason = "index 10 is out of range for a dimension of size 10";
              break;
            case 1:
              out = gather->Run({{"idx", Tensor::FromVector<float>({1}, {1})}});
              reason = "input 'idx' has type float32, the model expects int64";
              break;
            case 2:
              out = dense->Run({});
              reason = "input 'x' is required";
              break;
            default:
              out = dense->Run({{"x", Tensor::FromVector<float>({3, 8}, std::vector<float>(24, 1))}});
              reason = "input 'x' has shape [3,8]";
              break;
          }
          // Refused, and for the reason the bad input gives (not any error).
          if (!out.ok() && out.status().code() == code && out.status().message().find(reason) != std::string::npos) {
            ++refused;
          } else {
            ++unexpected;
            std::printf("unexpected outcome: %s (wanted '%s')\n", out.ok() ? "ok" : out.status().ToString().c_str(), reason);
          }
        } else if (job == 4) {  // cancelled from another thread while it runs
          std::atomic<bool> cancel{false};
          RunOptions run;
          run.cancel = &cancel;
          std::thread canceller([&cancel, delay = rng() % 2000] {
            std::this_thread::sleep_for(std::chrono::microseconds(delay));
            cancel = true;
          });
          auto out = loop->Run({{"trips", Tensor::FromVector<int64_t>({}, {int64_t{1} << 40})}}, run);
          canceller.join();
          if (!out.ok() && out.status().code() == StatusCode::kCancelled) ++cancelled; else ++unexpected;
        } else {  // a deadline that passes midway
          RunOptions run;
          run.deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(rng() % 3000);
          auto out = loop->Run({{"trips", Tensor::FromVector<int64_t>({}, {int64_t{1} << 40})}}, run);
          if (!out.ok() && out.status().code() == StatusCode::kDeadlineExceeded) ++cancelled; else ++unexpected;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  std::printf("good=%d wrong=%d refused=%d cancelled=%d unexpected=%d\n", good.load(), wrong.load(), refused.load(),
              cancelled.load(), unexpected.load());
  EXPECT_GT(good.load(), 0);
  EXPECT_GT(refused.load(), 0);
  EXPECT_GT(cancelled.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(unexpected.load(), 0);

  // The sessions still serve correct results after the storm.
  auto after = dense->Run({{"x", DenseInput(1)}});
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(CompareValues(Value(expected[1]), (*after)[0].value, 0, 0).match);
}

// x [n] -> Expand to [rows, n] -> Relu -> ... (a chain; each value dies when the next is made).
std::string ChainModel(int rows, int links) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1024});
  m.Input("shape", DataType::kInt64, {2});
  m.Node("Expand", {"x", "shape"}, {"v0"}, "expand");
  for (int i = 0; i < links; ++i) m.Node("Relu", {"v" + std::to_string(i)}, {"v" + std::to_string(i + 1)});
  m.Node("ReduceSum", {"v" + std::to_string(links)}, {"y"}, "sum");
  m.Output("y", DataType::kFloat, {}, false);
  (void)rows;
  return m.Serialize();
}

std::vector<NamedValue> ChainInputs(int64_t rows) {
  return {{"x", Tensor::FromVector<float>({1024}, std::vector<float>(1024, 1))},
          {"shape", Tensor::FromVector<int64_t>({2}, {rows, 1024})}};
}

TEST(Limits, RunBytesEndsTheRunNamingLimitAndNode) {
  SessionOptions options;
  options.threads = 1;
  options.mode = ExecutionMode::kSequential;
  options.limits.max_run_bytes = 6 << 20;  // 6 MB; each [1024,1024] float is 4 MB
  options.optimize = false;  // the Relus as written (optimized, they are one ElementwiseChain)
  auto s = Session::LoadFromBytes(ChainModel(1024, 3), options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto out = s->Run(ChainInputs(1024));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(out.status().message().find("max_run_bytes"), std::string::npos) << out.status().ToString();
  EXPECT_NE(out.status().message().find("Relu"), std::string::npos) << out.status().ToString();
  // Smaller rows fit: two live [256,1024] tensors are 2 MB.
  auto small = s->Run(ChainInputs(256));
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ((*small)[0].value.tensor().data<float>()[0], 256.0f * 1024);
}

// Folded constants live as long as the session: their total is held to max_run_bytes at load.
// Sixteen ConstantOfShape nodes of 1 MB each against a 6 MB budget: the load folds six and keeps the
// rest, and the run, which must hold those ten for the Sum, ends naming the limit and a node.
TEST(Limits, ConstantFoldingStaysWithinTheRunBudget) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1});
  m.Initializer("shape", Tensor::FromVector<int64_t>({1}, {int64_t{1} << 18}));  // 1 MB of floats
  std::vector<std::string> parts = {"x"};
  for (int i = 0; i < 16; ++i) {
    parts.push_back("c" + std::to_string(i));
    auto& node = m.Node("ConstantOfShape", {"shape"}, {parts.back()}, "fill" + std::to_string(i));
    SetAttr(node, "value", Tensor::FromVector<float>({1}, {1.0f}));
  }
  m.Node("Sum", parts, {"y"});
  m.Output("y", DataType::kFloat, {int64_t{1} << 18});
  SessionOptions options;
  options.threads = 1;
  options.mode = ExecutionMode::kSequential;
  options.limits.max_run_bytes = 6 << 20;
  auto s = Session::LoadFromBytes(m.Serialize(), options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto out = s->Run({{"x", Tensor::FromVector<float>({1}, {1.0f})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(out.status().message().find("max_run_bytes"), std::string::npos) << out.status().ToString();
  EXPECT_NE(out.status().message().find("fill"), std::string::npos) << out.status().ToString();
  // With room for everything, the same model runs and sums the sixteen fills and x.
  options.limits.max_run_bytes = 64 << 20;
  auto roomy = Session::LoadFromBytes(m.Serialize(), options);
  ASSERT_TRUE(roomy.ok()) << roomy.status().ToString();
  auto sum = roomy->Run({{"x", Tensor::FromVector<float>({1}, {1.0f})}});
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ((*sum)[0].value.tensor().data<float>()[12345], 17.0f);
}

TEST(Limits, FreedMemoryReturnsToTheBudget) {
  SessionOptions options;
  options.threads = 1;
  options.mode = ExecutionMode::kSequential;
  options.limits.max_run_bytes = 10 << 20;  // two 4 MB values at a time, never three
  auto s = Session::LoadFromBytes(ChainModel(1024, 12), options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  for (int i = 0; i < 3; ++i) {  // each run starts from a clean budget
    auto out = s->Run(ChainInputs(1024));
    ASSERT_TRUE(out.ok()) << out.status().ToString();
  }
}

TEST(Limits, OutputsOutliveTheRunAndTheSession) {
  std::vector<NamedValue> kept;
  {
    SessionOptions options;
    options.limits.max_run_bytes = 64 << 20;
    ModelBuilder m(17);
    m.Input("x", DataType::kFloat, {4});
    m.Node("Relu", {"x"}, {"y"});
    m.Output("y", DataType::kFloat, {4});
    auto s = Session::LoadFromBytes(m.Serialize(), options);
    ASSERT_TRUE(s.ok());
    auto out = s->Run({{"x", Tensor::FromVector<float>({4}, {-1, 2, -3, 4})}});
    ASSERT_TRUE(out.ok());
    kept = std::move(out).value();
  }
  // The run and the session are gone; the output's storage still frees cleanly (ASan checks).
  EXPECT_EQ(kept[0].value.tensor().data<float>()[3], 4.0f);
  kept.clear();
}

TEST(Limits, TensorBytesEndsTheRun) {
  SessionOptions options;
  options.limits.max_tensor_bytes = 1 << 20;
  auto s = Session::LoadFromBytes(ChainModel(1024, 1), options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto out = s->Run(ChainInputs(1024));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(out.status().message().find("max_tensor_bytes"), std::string::npos) << out.status().ToString();
  EXPECT_NE(out.status().message().find("expand"), std::string::npos) << out.status().ToString();
}

TEST(Limits, LoopIterationsAndDepth) {
  SessionOptions options;
  options.limits.max_loop_iterations = 100;
  auto s = Session::LoadFromBytes(CountingLoopModel(), options);
  ASSERT_TRUE(s.ok());
  auto ok = s->Run({{"trips", Tensor::FromVector<int64_t>({}, {100})}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  auto over = s->Run({{"trips", Tensor::FromVector<int64_t>({}, {101})}});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("count"), std::string::npos) << over.status().ToString();
}

// FillTensor (run_model --fill) takes its shape from the model: negative dims and element or byte
// counts that overflow are refused before anything is computed from them (UBSan: 2^40 x 2^40).
TEST(Limits, FillRefusesOverflowingShapes) {
  auto refused = [](const Result<Tensor>& t, const std::string& reason) {
    if (t.ok()) return ::testing::AssertionFailure() << "filled, expected '" << reason << "'";
    if (t.status().message().find(reason) == std::string::npos) {
      return ::testing::AssertionFailure() << t.status().ToString() << ", expected '" << reason << "'";
    }
    return ::testing::AssertionSuccess();
  };
  EXPECT_TRUE(refused(FillTensor(DataType::kFloat, {int64_t{1} << 40, int64_t{1} << 40}),
                      "shape [1099511627776,1099511627776] has too many elements"));
  EXPECT_TRUE(refused(FillTensor(DataType::kFloat, {int64_t{1} << 62}), "shape [4611686018427387904]"));  // 2^64 bytes
  EXPECT_TRUE(refused(FillTensor(DataType::kFloat, {-1, 2}), "[-1,2]"));
  auto small = FillTensor(DataType::kFloat, {2, 3});
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(small->size(), 6);
}

}  // namespace
}  // namespace onnxflow
