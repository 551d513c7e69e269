#include "tests/conformance/isolated.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace onnxflow::testing {
namespace {

using Clock = std::chrono::steady_clock;

// A child's exit status when LeakSanitizer found leaks after its jobs (ASan's own default is 23).
constexpr int kLeakExit = 23;
const char kLeakReason[] = "LeakSanitizer found leaks after the job (report on stderr)";

// Consecutive jobs one child runs, in order.
using Batch = std::vector<size_t>;

// A batch running in its own child process. The child writes one record per finished job to the
// pipe: 'P' or 'F', the reason's length (4 bytes), the reason.
struct Child {
  Batch batch;
  pid_t pid;
  int pipe_fd;
  bool at_eof = false;
  Clock::time_point deadline;  // for the job now running
  std::string bytes;           // what the pipe gave that is not yet a whole record
  std::vector<CaseResult> results;
};

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0 && errno != EINTR) return;  // the parent is gone: nothing to report to
    if (n > 0) done += static_cast<size_t>(n);
  }
}

// In the child: each job's record as it ends, then the leak check that _exit would skip.
[[noreturn]] void RunChild(int fd, const std::function<CaseResult(size_t)>& job, const Batch& batch) {
  for (size_t index : batch) {
    const CaseResult r = job(index);
    const uint32_t length = static_cast<uint32_t>(r.reason.size());
    std::string record(1, r.passed ? 'P' : 'F');
    record.append(reinterpret_cast<const char*>(&length), sizeof length);
    record += r.reason;
    WriteAll(fd, record);
  }
  close(fd);
  int status = 0;
#if defined(__SANITIZE_ADDRESS__)
  // _exit skips LeakSanitizer's check at exit (and exit would run the parent's static destructors
  // in the child): check here, once the jobs' memory should all be gone.
  if (__lsan_do_recoverable_leak_check() != 0) status = kLeakExit;
#endif
  _exit(status);
}

// Starts the batch's child process, or says why it could not.
Result<Child> StartChild(Batch batch, const std::function<CaseResult(size_t)>& job, int seconds) {
  int fds[2];
  if (pipe(fds) != 0) return Internal(std::string("pipe failed: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    return Internal(std::string("fork failed: ") + std::strerror(error));
  }
  if (pid == 0) {
    close(fds[0]);
    RunChild(fds[1], job, batch);
  }
  close(fds[1]);
  Child child{std::move(batch), pid, fds[0]};
  child.deadline = Clock::now() + std::chrono::seconds(seconds);
  return child;
}

// Moves the whole records in child.bytes into child.results; each one restarts the job clock.
void TakeRecords(Child& child, int seconds) {
  constexpr size_t kHeader = 1 + sizeof(uint32_t);
  size_t at = 0;
  while (child.bytes.size() - at >= kHeader) {
    uint32_t length = 0;
    std::memcpy(&length, child.bytes.data() + at + 1, sizeof length);
    if (child.bytes.size() - at - kHeader < length) break;
    child.results.push_back({child.bytes[at] == 'P', child.bytes.substr(at + kHeader, length)});
    at += kHeader + length;
    child.deadline = Clock::now() + std::chrono::seconds(seconds);
  }
  child.bytes.erase(0, at);
}

// Reads what the child has written so far; marks the end of the pipe.
void Drain(Child& child, int seconds) {
  char buffer[4096];
  const ssize_t n = read(child.pipe_fd, buffer, sizeof buffer);
  if (n > 0) {
    child.bytes.append(buffer, n);
    TakeRecords(child, seconds);
  } else if (n == 0 || errno != EINTR) {
    child.at_eof = true;
  }
}

// Why a process ended abnormally, from its wait status; empty when it exited with 0.
std::string Death(int status) {
  if (WIFSIGNALED(status)) return "crashed with signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) == kLeakExit) return kLeakReason;
  // ASan/UBSan/TSan exit non-zero after their report (on stderr).
  if (WEXITSTATUS(status) != 0) return "the process exited with status " + std::to_string(WEXITSTATUS(status));
  return "";
}

// Settles a child that has ended (death: why, or empty): the jobs it reported keep their results;
// what is left of the batch goes back to `pending`, to run in fresh children.
void Settle(Child& child, const std::string& death, std::vector<Outcome>& outcomes, std::deque<Batch>& pending) {
  const size_t reported = child.results.size();
  for (size_t i = 0; i < reported; ++i) outcomes[child.batch[i]] = {child.results[i], false};
  if (reported < child.batch.size()) {
    // The job it was running ends with the process; the ones after it never started.
    const std::string why = death.empty() ? "the process exited without a result" : death;
    outcomes[child.batch[reported]] = {{false, why}, true};
    if (reported + 1 < child.batch.size()) pending.push_front(Batch(child.batch.begin() + reported + 1, child.batch.end()));
  } else if (!death.empty()) {
    // Every job reported, then the process failed (a leak found after the last one): name the job.
    if (child.batch.size() == 1) {
      outcomes[child.batch[0]] = {{false, death}, true};
    } else {
      for (auto it = child.batch.rbegin(); it != child.batch.rend(); ++it) pending.push_front(Batch{*it});
    }
  }
}

}  // namespace

std::vector<Outcome> RunIsolated(size_t count, const std::function<CaseResult(size_t)>& job, unsigned jobs,
                                 int seconds, size_t per_child) {
  std::vector<Outcome> outcomes(count);
  std::deque<Batch> pending;
  for (size_t first = 0; first < count; first += std::max<size_t>(per_child, 1)) {
    Batch batch;
    for (size_t i = first; i < std::min(count, first + std::max<size_t>(per_child, 1)); ++i) batch.push_back(i);
    pending.push_back(std::move(batch));
  }
  std::vector<Child> running;
  while (!pending.empty() || !running.empty()) {
    while (!pending.empty() && running.size() < jobs) {
      Batch batch = std::move(pending.front());
      pending.pop_front();
      Result<Child> child = StartChild(batch, job, seconds);
      if (child.ok()) {
        running.push_back(std::move(*child));
      } else {
        for (size_t index : batch) outcomes[index] = {{false, child.status().message()}, true};
      }
    }
    if (running.empty()) continue;
    // Keep the pipes drained while waiting, so a long message cannot block a child. A pipe at its
    // end is not polled again (it would report POLLHUP at once, and this loop would spin while its
    // child runs the leak check): with no open pipe left, the poll is a short sleep.
    std::vector<pollfd> fds;
    std::vector<size_t> polled;
    for (size_t i = 0; i < running.size(); ++i) {
      if (running[i].at_eof) continue;
      fds.push_back({running[i].pipe_fd, POLLIN, 0});
      polled.push_back(i);
    }
    poll(fds.data(), fds.size(), fds.empty() ? 5 : 100);
    for (size_t j = 0; j < fds.size(); ++j) {
      if (fds[j].revents & (POLLIN | POLLHUP | POLLERR)) Drain(running[polled[j]], seconds);
    }
    for (size_t i = 0; i < running.size();) {
      Child& child = running[i];
      int status = 0;
      if (waitpid(child.pid, &status, WNOHANG) == child.pid) {
        while (!child.at_eof) Drain(child, seconds);
        Settle(child, Death(status), outcomes, pending);
      } else if (Clock::now() > child.deadline) {
        kill(child.pid, SIGKILL);
        waitpid(child.pid, &status, 0);
        while (!child.at_eof) Drain(child, seconds);
        Settle(child, "timed out after " + std::to_string(seconds) + " s", outcomes, pending);
      } else {
        ++i;
        continue;
      }
      close(child.pipe_fd);
      running.erase(running.begin() + i);
    }
  }
  return outcomes;
}

}  // namespace onnxflow::testing
