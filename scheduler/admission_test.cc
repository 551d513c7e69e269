#include "scheduler/admission.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace onnxflow {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

TEST(RunGate, NeverAdmitsMoreThanItsCapacity) {
  RunGate gate(2);
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto executing = gate.Enter({});
        ASSERT_TRUE(executing.ok());
        EXPECT_LE(*executing, 2);
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --inside;
        gate.Leave();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(most.load(), 2);
}

TEST(RunGate, HandsPlacesOverInArrivalOrder) {
  RunGate gate(1);
  ASSERT_TRUE(gate.Enter({}).ok());
  std::vector<int> started;
  for (int i = 1; i <= 3; ++i) gate.EnterAsync([&, i](int executing) {
    EXPECT_EQ(executing, 1);
    started.push_back(i);
  });
  EXPECT_TRUE(started.empty());  // queued behind the holder
  for (int i = 1; i <= 3; ++i) {
    gate.Leave();  // the holder's place goes to the next in line, which starts at once
    ASSERT_EQ(started.size(), static_cast<size_t>(i));
    EXPECT_EQ(started.back(), i);
  }
  gate.Leave();
  EXPECT_EQ(*gate.Enter({}), 1);  // the last place came back
  gate.Leave();
}

TEST(RunGate, WakesAWaitingThreadWhenAPlaceFrees) {
  RunGate gate(1);
  ASSERT_TRUE(gate.Enter({}).ok());
  std::atomic<bool> admitted{false};
  std::thread waiter([&] {
    ASSERT_TRUE(gate.Enter({}).ok());
    admitted = true;
    gate.Leave();
  });
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(admitted.load());
  gate.Leave();
  waiter.join();
  EXPECT_TRUE(admitted.load());
}

TEST(RunGate, DeadlineEndsTheWait) {
  RunGate gate(1);
  ASSERT_TRUE(gate.Enter({}).ok());
  RunOptions options;
  const auto start = steady_clock::now();
  options.deadline = start + milliseconds(30);
  auto late = gate.Enter(options);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(late.status().message(), "while waiting for a core: the run passed its deadline");
  EXPECT_GE(steady_clock::now() - start, milliseconds(30));
  gate.Leave();
  EXPECT_EQ(*gate.Enter({}), 1);  // the expired waiter left the queue and holds no place
  gate.Leave();
}

TEST(RunGate, CancelEndsTheWait) {
  RunGate gate(1);
  ASSERT_TRUE(gate.Enter({}).ok());
  std::atomic<bool> cancel{false};
  RunOptions options;
  options.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(20));
    cancel = true;
  });
  auto cancelled = gate.Enter(options);
  canceller.join();
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(cancelled.status().message(), "while waiting for a core: the run was cancelled");
  gate.Leave();
}

}  // namespace
}  // namespace onnxflow
