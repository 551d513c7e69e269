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

// Runs job(0) ... job(count - 1), `jobs` children at a time, each job within `seconds` of the end
// of the one before it in its child. A child runs up to `per_child` consecutive jobs and reports
// each as it ends; under ASan the leak check runs once per child, after its last job. Batching
// changes no outcome: when a child dies, the job it was running gets the death and the jobs after
// it run again in a new child; when a batch of several leaks (or its process fails after the
// last result), each of its jobs runs again alone, so the leak is named by its job.
std::vector<Outcome> RunIsolated(size_t count, const std::function<CaseResult(size_t)>& job, unsigned jobs,
                                 int seconds, size_t per_child = 1);

}  // namespace onnxflow::testing
