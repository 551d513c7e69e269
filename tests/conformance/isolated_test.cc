// The isolation the conformance suite relies on: every way a job can end is told apart.
#include "tests/conformance/isolated.h"

#include <csignal>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace onnxflow::testing {
namespace {

CaseResult Job(size_t i) {
  switch (i) {
    case 0: return {true, ""};
    case 1: return {false, "wrong output 0"};
    case 2: std::raise(SIGSEGV); return {};
    default: std::this_thread::sleep_for(std::chrono::seconds(30)); return {true, ""};
  }
}

TEST(Isolated, TellsEveryEndingApart) {
  const std::vector<Outcome> o = RunIsolated(4, Job, 2, 2);
  ASSERT_EQ(4u, o.size());
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
}

}  // namespace
}  // namespace onnxflow::testing
