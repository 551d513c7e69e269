// The ONNX backend conformance suite: every case under $ONNXFLOW_TEST_DATA/node and /models.
//
// Each case runs in a child process (fork, with a time limit), so a crash or a hang in one case
// is reported as that case's failure instead of ending the suite. The outcome is compared with
// tests/conformance/expected_failures.txt both ways: an unlisted failure fails the test, and so
// does a listed case that now passes (take it off the list). A case whose process dies (a signal,
// or a sanitizer's non-zero exit) fails the test even when listed: a known failure must still end
// in a Status, never in a crash. One child per core runs at a time.
// (Not Bazel sharding: gtest shards too, and would give the one TEST to a single shard.)
//
// ONNXFLOW_CONFORMANCE_FILTER=<regex> runs only matching cases (e.g. "node/test_conv").
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "include/onnxflow/status.h"
#include "ops/register_all.h"
#include "tests/conformance/case_runner.h"

namespace onnxflow::testing {
namespace {

// Sanitized builds (--config=asan/tsan) run several times slower; the largest networks need more.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kCaseSeconds = 900;
#else
constexpr int kCaseSeconds = 120;
#endif

// One case's result, and whether its process ended abnormally (crashed, killed, sanitizer report).
struct Outcome {
  CaseResult result;
  bool died = false;
};

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::map<std::string, std::string> ReadExpectedFailures(const std::string& path) {
  std::map<std::string, std::string> listed;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find_first_of(" \t");
    listed[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", space));
  }
  return listed;
}

// A case running in its own child process; the child writes "P" or "F<reason>" to a pipe.
struct Child {
  size_t index;
  pid_t pid;
  int pipe_fd;
  std::chrono::steady_clock::time_point deadline;
  std::string message;
};

// Starts the case's child process, or says why it could not (the case then fails).
Result<Child> StartChild(size_t index, const std::string& folder) {
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
    const CaseResult r = RunCase(folder);
    const std::string message = r.passed ? "P" : "F" + r.reason;
    ssize_t unused = write(fds[1], message.data(), message.size());
    (void)unused;
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  return Child{index, pid, fds[0], std::chrono::steady_clock::now() + std::chrono::seconds(kCaseSeconds), {}};
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
  if (WEXITSTATUS(status) != 0) {  // ASan/UBSan/TSan exit non-zero after their report (on stderr)
    return {{false, "the case process exited with status " + std::to_string(WEXITSTATUS(status))}, true};
  }
  if (child.message.empty()) return {{false, "the case process exited without a result"}, true};
  if (child.message[0] == 'P') return {{true, ""}, false};
  return {{false, child.message.substr(1)}, false};
}

// Runs every folder in a child process, `jobs` at a time. One thread forks and supervises them all:
// a fork while another thread of the parent holds a lock (the allocator's, or a sanitizer's) leaves
// that lock held forever in the child, which then hangs. The parent never starts TBB either.
std::vector<Outcome> RunIsolated(const std::vector<std::string>& folders, unsigned jobs) {
  std::vector<Outcome> outcomes(folders.size());
  std::vector<Child> running;
  size_t next = 0;
  while (next < folders.size() || !running.empty()) {
    while (next < folders.size() && running.size() < jobs) {
      Result<Child> child = StartChild(next, folders[next]);
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
        outcomes[child.index] = {{false, "timed out after " + std::to_string(kCaseSeconds) + " s"}, true};
      } else {
        ++i;
        continue;
      }
      running.erase(running.begin() + i);
    }
  }
  return outcomes;
}

TEST(Conformance, MatchesExpectedFailures) {
  const char* root = std::getenv("ONNXFLOW_TEST_DATA");
  ASSERT_NE(root, nullptr) << "ONNXFLOW_TEST_DATA is not set: run through ./bazelw, with ../shared/onnx-tests beside the repo";
  const std::string data = root;
  const auto node_cases = ListDir(data + "/node");
  const auto model_cases = ListDir(data + "/models");
  ASSERT_FALSE(node_cases.empty()) << "no conformance data in " << data << "/node";
  ASSERT_FALSE(model_cases.empty()) << "no whole-network data in " << data << "/models";

  std::vector<std::string> cases;
  for (const auto& c : node_cases) cases.push_back("node/" + c);
  for (const auto& c : model_cases) cases.push_back("models/" + c);
  const char* filter = std::getenv("ONNXFLOW_CONFORMANCE_FILTER");
  const std::regex pattern(filter != nullptr ? filter : ".*");


  const std::string list_path = "tests/conformance/expected_failures.txt";
  const auto listed = ReadExpectedFailures(list_path);
  (void)GlobalKernelRegistry();  // built once here, inherited by every child

  std::vector<std::string> selected;
  std::set<std::string> seen;
  for (const std::string& name : cases) {
    if (!std::regex_search(name, pattern)) continue;
    seen.insert(name);
    selected.push_back(name);
  }
  std::vector<std::string> folders;
  for (const std::string& name : selected) folders.push_back(data + "/" + name);
  const std::vector<Outcome> results = RunIsolated(folders, std::max(1u, std::thread::hardware_concurrency()));

  int passed = 0, failed = 0;
  std::vector<std::string> unexpected_failures, unexpected_passes;
  for (size_t i = 0; i < selected.size(); ++i) {
    const std::string& name = selected[i];
    const CaseResult& r = results[i].result;
    const bool expected_to_fail = listed.count(name) > 0 && !results[i].died;
    if (r.passed) {
      ++passed;
      if (expected_to_fail) unexpected_passes.push_back(name);
    } else {
      ++failed;
      std::printf("FAIL %s: %s\n", name.c_str(), r.reason.c_str());
      if (!expected_to_fail) unexpected_failures.push_back(name + ": " + r.reason);
    }
  }
  for (const auto& [name, reason] : listed) {
    if (filter == nullptr && !seen.count(name)) ADD_FAILURE() << list_path << " lists '" << name << "', which is not a case";
  }
  for (const auto& f : unexpected_failures) ADD_FAILURE() << "unexpected failure: " << f;
  for (const auto& p : unexpected_passes) ADD_FAILURE() << "now passes, take it off " << list_path << ": " << p;
  std::printf("conformance: %zu unexpected failures, %zu unexpected passes\n", unexpected_failures.size(),
              unexpected_passes.size());
  // The closing line CI reads.
  std::printf("%d passed, %d failed\n", passed, failed);
}

}  // namespace
}  // namespace onnxflow::testing
