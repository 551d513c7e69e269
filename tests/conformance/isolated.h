// Runs jobs each in a child process (fork, with a time limit), so a crash, a hang or a sanitizer
// report in one is reported as that job's failure instead of ending the suite. One thread forks
// and supervises them all: a fork while another thread of the parent holds a lock (the
// allocator's, or a sanitizer's) leaves that lock held forever in the child, which then hangs. The
// parent never starts TBB either.
#pragma once

#include <functional>
#include <vector>

#include "tests/conformance/case_runner.h"

namespace onnxflow::testing {

// One job's result, and whether its process ended abnormally (crashed, killed, timed out, or a
// sanitizer's report: AddressSanitizer's errors, and under ASan the leaks LeakSanitizer finds
// when the job has returned).
struct Outcome {
  CaseResult result;
  bool died = false;
};

// Runs job(0) ... job(count - 1), `jobs` children at a time, each within `seconds`.
std::vector<Outcome> RunIsolated(size_t count, const std::function<CaseResult(size_t)>& job, unsigned jobs,
                                 int seconds);

}  // namespace onnxflow::testing
