#include "tests/conformance/isolated.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "include/onnxflow/status.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace onnxflow::testing {
namespace {

// A child's exit status when LeakSanitizer found leaks after its job (ASan's own default is 23).
constexpr int kLeakExit = 23;

// A job running in its own child process; the child writes "P" or "F<reason>" to a pipe.
struct Child {
  size_t index;
  pid_t pid;
  int pipe_fd;
  std::chrono::steady_clock::time_point deadline;
  std::string message;
};

// In the child: the job's result on the pipe, then the leak check that _exit would skip.
[[noreturn]] void RunChild(int fd, const std::function<CaseResult(size_t)>& job, size_t index) {
  const CaseResult r = job(index);
  const std::string message = r.passed ? "P" : "F" + r.reason;
  ssize_t unused = write(fd, message.data(), message.size());
  (void)unused;
  close(fd);
  int status = 0;
#if defined(__SANITIZE_ADDRESS__)
  // _exit skips LeakSanitizer's check at exit (and exit would run the parent's static destructors
  // in the child): check here, once the job's memory should all be gone.
  if (__lsan_do_recoverable_leak_check() != 0) status = kLeakExit;
#endif
  _exit(status);
}

// Starts the job's child process, or says why it could not (the job then fails).
Result<Child> StartChild(size_t index, const std::function<CaseResult(size_t)>& job, int seconds) {
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
    RunChild(fds[1], job, index);
  }
  close(fds[1]);
  return Child{index, pid, fds[0], std::chrono::steady_clock::now() + std::chrono::seconds(seconds), {}};
}

// Reads what the child has written so far; false at end of file.
bool Drain(Child& child) {
  char buffer[4096];
  const ssize_t n = read(child.pipe_fd, buffer, sizeof buffer);
  if (n > 0) child.message.append(buffer, n);
  return n > 0;
}

Outcome Finish(Child& child, int status) {
  while (Drain(child)) {
  }
  close(child.pipe_fd);
  if (WIFSIGNALED(status)) return {{false, "crashed with signal " + std::to_string(WTERMSIG(status))}, true};
  if (WEXITSTATUS(status) == kLeakExit) {
    return {{false, "LeakSanitizer found leaks after the job (report on stderr)"}, true};
  }
  if (WEXITSTATUS(status) != 0) {  // ASan/UBSan/TSan exit non-zero after their report (on stderr)
    return {{false, "the process exited with status " + std::to_string(WEXITSTATUS(status))}, true};
  }
  if (child.message.empty()) return {{false, "the process exited without a result"}, true};
  if (child.message[0] == 'P') return {{true, ""}, false};
  return {{false, child.message.substr(1)}, false};
}

}  // namespace

std::vector<Outcome> RunIsolated(size_t count, const std::function<CaseResult(size_t)>& job, unsigned jobs,
                                 int seconds) {
  std::vector<Outcome> outcomes(count);
  std::vector<Child> running;
  size_t next = 0;
  while (next < count || !running.empty()) {
    while (next < count && running.size() < jobs) {
      Result<Child> child = StartChild(next, job, seconds);
      if (child.ok()) {
        running.push_back(std::move(*child));
      } else {
        outcomes[next] = {{false, child.status().message()}, true};
      }
      ++next;
    }
    if (running.empty()) continue;
    // Keep the pipes drained while waiting, so a long message cannot block a child.
    std::vector<pollfd> fds;
    for (const Child& c : running) fds.push_back({c.pipe_fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 100);
    for (size_t i = 0; i < running.size(); ++i) {
      if (fds[i].revents & POLLIN) Drain(running[i]);
    }
    for (size_t i = 0; i < running.size();) {
      Child& child = running[i];
      int status = 0;
      if (waitpid(child.pid, &status, WNOHANG) == child.pid) {
        outcomes[child.index] = Finish(child, status);
      } else if (std::chrono::steady_clock::now() > child.deadline) {
        kill(child.pid, SIGKILL);
        waitpid(child.pid, &status, 0);
        close(child.pipe_fd);
        outcomes[child.index] = {{false, "timed out after " + std::to_string(seconds) + " s"}, true};
      } else {
        ++i;
        continue;
      }
      running.erase(running.begin() + i);
    }
  }
  return outcomes;
}

}  // namespace onnxflow::testing
