// The isolation the conformance suite relies on: every way a job can end is told apart, and under
// AddressSanitizer a job that leaks is caught even though its process ends with _exit; running
// several jobs per child changes none of it.
#include "tests/conformance/isolated.h"

#include <csignal>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace onnxflow::testing {
namespace {

char* volatile g_kept = nullptr;  // keeps the leaked pointer's value out of the optimizer's reach

// Drops 64 blocks on a thread of its own. LeakSanitizer scans live threads' stacks and registers as
// roots, so a pointer left in a dead stack slot of the job's own thread could hide a single block (CI
// once saw this job pass under ASan); a joined thread's stack is not scanned, and 64 blocks cannot
// all stay in registers.
void Leak() {
  std::thread([] {
    for (int i = 0; i < 64; ++i) {
      g_kept = new char[4096];
      g_kept[0] = 1;
    }
    g_kept = nullptr;
  }).join();
}

CaseResult Job(size_t i) {
  switch (i) {
    case 0: return {true, ""};
    case 1: return {false, "wrong output 0"};
    case 2: std::raise(SIGSEGV); return {};
    case 3: std::this_thread::sleep_for(std::chrono::seconds(30)); return {true, ""};
    default: Leak(); return {true, ""};
  }
}

void ExpectEveryEndingToldApart(const std::vector<Outcome>& o) {
  ASSERT_EQ(5u, o.size());
  EXPECT_TRUE(o[0].result.passed);
  EXPECT_FALSE(o[0].died);
  EXPECT_FALSE(o[1].result.passed);
  EXPECT_EQ("wrong output 0", o[1].result.reason);
  EXPECT_FALSE(o[1].died);
  EXPECT_TRUE(o[2].died);
  EXPECT_FALSE(o[2].result.passed);
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ("the process exited with status 1", o[2].result.reason);  // ASan reports the SEGV, exits 1
#else
  EXPECT_EQ("crashed with signal 11", o[2].result.reason);
#endif
  EXPECT_TRUE(o[3].died);
  EXPECT_EQ("timed out after 2 s", o[3].result.reason);
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_TRUE(o[4].died);
  EXPECT_FALSE(o[4].result.passed);
  EXPECT_EQ("LeakSanitizer found leaks after the job (report on stderr)", o[4].result.reason);
#else
  EXPECT_TRUE(o[4].result.passed);  // no leak checker in this build: the job's own result
  EXPECT_FALSE(o[4].died);
#endif
}

TEST(Isolated, TellsEveryEndingApart) { ExpectEveryEndingToldApart(RunIsolated(5, Job, 2, 2)); }

// Batches [0, 1, 2] and [3, 4]: the crash ends job 2 only, the timeout job 3 only, and job 4 runs
// again in a child of its own.
TEST(Isolated, BatchesTellEveryEndingApartToo) { ExpectEveryEndingToldApart(RunIsolated(5, Job, 2, 2, 3)); }

// A leak found after a batch whose every job reported is traced to its job by running each again.
// Jobs: a pass, a leak, a plain failure.
CaseResult LeakInTheMiddle(size_t i) { return Job(i == 1 ? 4 : i == 2 ? 1 : 0); }

TEST(Isolated, ALeakInABatchIsNamedByItsJob) {
  const std::vector<Outcome> o = RunIsolated(3, LeakInTheMiddle, 1, 5, 3);
  ASSERT_EQ(3u, o.size());
  EXPECT_TRUE(o[0].result.passed);
  EXPECT_FALSE(o[0].died);
  EXPECT_FALSE(o[2].result.passed);
  EXPECT_EQ("wrong output 0", o[2].result.reason);
  EXPECT_FALSE(o[2].died);
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_TRUE(o[1].died);
  EXPECT_EQ("LeakSanitizer found leaks after the job (report on stderr)", o[1].result.reason);
#else
  EXPECT_TRUE(o[1].result.passed);
  EXPECT_FALSE(o[1].died);
#endif
}

}  // namespace
}  // namespace onnxflow::testing
