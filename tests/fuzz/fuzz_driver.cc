// A plain main() for the fuzz targets, so `bazel test` runs them without libFuzzer: it replays the
// committed regression files and a seed corpus built at test time from $ONNXFLOW_TEST_DATA, then
// runs a short mutation loop over both with a fixed seed (bit flips, interesting values, truncation,
// erasure, duplication, splicing). A crash kills the test; the input that caused it is written to
// $TEST_UNDECLARED_OUTPUTS_DIR first.
//
//   fuzz_driver --corpus=models|tensors [--seconds=S] [--max_seeds=N] [--write_seeds=DIR] [FILE|DIR]...
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  *out = s.str();
  return true;
}

// The input being run, for the crash handler.
const std::string* g_current = nullptr;
char g_crash_path[4096] = "";

void OnCrash(int sig) {
  if (g_current != nullptr && g_crash_path[0] != '\0') {
    int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ssize_t ignored = write(fd, g_current->data(), g_current->size());
      (void)ignored;
      close(fd);
    }
    const char msg[] = "fuzz_driver: crashing input written to ";
    ssize_t ignored = write(2, msg, sizeof(msg) - 1);
    ignored = write(2, g_crash_path, strlen(g_crash_path));
    ignored = write(2, "\n", 1);
    (void)ignored;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void Run(const std::string& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  g_current = nullptr;
}

// Seeds: every model.onnx (models) or every input/output .pb (tensors) under node/.
std::vector<std::string> BuildSeeds(const std::string& kind, size_t max_seeds) {
  std::vector<std::string> seeds;
  // ONNXFLOW_TEST_DATA: run_libfuzzer.sh, outside Bazel; else the test's runfiles.
  const char* env = std::getenv("ONNXFLOW_TEST_DATA");
  const onnxflow::Result<std::string> root =
      env != nullptr ? onnxflow::Result<std::string>(std::string(env)) : onnxflow::testing::TestDataDir();
  if (!root.ok()) {
    std::printf("%s\n", root.status().ToString().c_str());
    return seeds;
  }
  const std::string node = *root + "/node";
  std::vector<std::string> cases = ListDir(node);
  // Spread a capped selection over the whole (sorted) list, deterministically.
  const size_t step = max_seeds == 0 || cases.size() <= max_seeds ? 1 : cases.size() / max_seeds + 1;
  for (size_t i = 0; i < cases.size(); i += step) {
    const std::string dir = node + "/" + cases[i];
    std::string bytes;
    if (kind == "models") {
      if (ReadFile(dir + "/model.onnx", &bytes)) seeds.push_back(std::move(bytes));
    } else {
      const std::string data = dir + "/test_data_set_0";
      for (const std::string& f : ListDir(data)) {
        if (ReadFile(data + "/" + f, &bytes)) seeds.push_back(std::move(bytes));
      }
    }
  }
  if (kind == "tensors") {  // a few .npy headers (the suite has none)
    auto npy = [](const std::string& header, size_t data_bytes) {
      std::string h = header;
      while ((10 + h.size() + 1) % 64 != 0) h += ' ';
      h += '\n';
      std::string s = "\x93NUMPY";
      s += '\x01';
      s += '\x00';
      s += static_cast<char>(h.size() & 0xff);
      s += static_cast<char>(h.size() >> 8);
      s += h;
      s += std::string(data_bytes, '\x01');
      return s;
    };
    seeds.push_back(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24));
    seeds.push_back(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }", 32));
    seeds.push_back(npy("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 1));
  }
  return seeds;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  std::string Mutate(const std::vector<std::string>& seeds) {
    std::string s = seeds[Pick(seeds.size())];
    const int rounds = 1 + static_cast<int>(Pick(4));
    for (int r = 0; r < rounds; ++r) {
      switch (Pick(8)) {
        case 0:  // flip one bit
          if (!s.empty()) s[Pick(s.size())] ^= static_cast<char>(1u << Pick(8));
          break;
        case 1: {  // an interesting byte
          static const uint8_t kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x40};
          if (!s.empty()) s[Pick(s.size())] = static_cast<char>(kBytes[Pick(sizeof(kBytes))]);
          break;
        }
        case 2:  // truncate
          if (!s.empty()) s.resize(Pick(s.size()));
          break;
        case 3: {  // erase a range
          if (s.empty()) break;
          const size_t at = Pick(s.size());
          s.erase(at, 1 + Pick(std::min<size_t>(16, s.size() - at)));
          break;
        }
        case 4: {  // duplicate a range
          if (s.empty()) break;
          const size_t at = Pick(s.size());
          const size_t n = 1 + Pick(std::min<size_t>(64, s.size() - at));
          s.insert(Pick(s.size() + 1), s.substr(at, n));
          break;
        }
        case 5: {  // a huge or negative varint (dims, lengths, attribute ints)
          static const char* kVarints[] = {"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "\x80\x80\x80\x80\x08",
                                           "\xff\xff\xff\xff\x0f", "\x80\x94\xeb\xdc\x03", "\x00"};
          const std::string v = kVarints[Pick(5)];
          if (s.empty()) break;
          const size_t at = Pick(s.size());
          s.replace(at, std::min<size_t>(v.size(), s.size() - at), v);
          break;
        }
        case 6: {  // splice with another seed
          const std::string& other = seeds[Pick(seeds.size())];
          if (other.empty()) break;
          const size_t from = Pick(other.size());
          s.insert(Pick(s.size() + 1), other.substr(from, 1 + Pick(std::min<size_t>(256, other.size() - from))));
          break;
        }
        case 7: {  // a small integer nudge
          if (s.empty()) break;
          const size_t at = Pick(s.size());
          s[at] = static_cast<char>(s[at] + static_cast<int>(Pick(9)) - 4);
          break;
        }
      }
    }
    if (s.size() > (1u << 20)) s.resize(1u << 20);
    return s;
  }

 private:
  size_t Pick(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }
  std::mt19937_64 rng_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string kind = "models", write_seeds;
  double seconds = 5;
  size_t max_seeds = 0;
  uint64_t seed = 20260701;
  std::vector<std::string> extra;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--corpus=", 0) == 0) kind = a.substr(9);
    else if (a.rfind("--seconds=", 0) == 0) seconds = std::atof(a.c_str() + 10);
    else if (a.rfind("--max_seeds=", 0) == 0) max_seeds = std::strtoull(a.c_str() + 12, nullptr, 10);
    else if (a.rfind("--seed=", 0) == 0) seed = std::strtoull(a.c_str() + 7, nullptr, 10);
    else if (a.rfind("--write_seeds=", 0) == 0) write_seeds = a.substr(14);
    else extra.push_back(a);
  }
  if (const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::snprintf(g_crash_path, sizeof(g_crash_path), "%s/crash-%s.bin", out, kind.c_str());
  } else {
    std::snprintf(g_crash_path, sizeof(g_crash_path), "/tmp/onnxflow-crash-%s.bin", kind.c_str());
  }
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, OnCrash);

  // 1. Regression files (committed crashes and hand-made hostile inputs).
  size_t regressions = 0;
  std::vector<std::string> regression_bytes;
  for (const std::string& path : extra) {
    std::vector<std::string> files;
    if (IsDir(path)) {
      for (const std::string& f : ListDir(path)) files.push_back(path + "/" + f);
    } else {
      files.push_back(path);
    }
    for (const std::string& f : files) {
      std::string bytes;
      if (!ReadFile(f, &bytes)) continue;
      std::fprintf(stderr, "regression %s\n", f.c_str());
      Run(bytes);
      ++regressions;
      regression_bytes.push_back(std::move(bytes));
    }
  }

  // 2. The seed corpus, the regression files included: the hostile cases (schema_*.onnx, issue
  // 23) are mutated like the conformance models, and --write_seeds hands them to libFuzzer.
  const std::vector<std::string> seeds = [&] {
    std::vector<std::string> all = BuildSeeds(kind, max_seeds);
    const bool found = !all.empty();
    for (std::string& r : regression_bytes) all.push_back(std::move(r));
    return found ? all : std::vector<std::string>{};  // the test data must be there (below)
  }();
  if (!write_seeds.empty()) {
    mkdir(write_seeds.c_str(), 0755);
    for (size_t i = 0; i < seeds.size(); ++i) {
      std::ofstream(write_seeds + "/seed_" + std::to_string(i), std::ios::binary) << seeds[i];
    }
    std::printf("wrote %zu seeds to %s\n", seeds.size(), write_seeds.c_str());
    return 0;
  }
  for (const std::string& s : seeds) Run(s);

  // 3. Bounded mutation.
  size_t executions = 0;
  if (!seeds.empty() && seconds > 0) {
    Mutator mutator(seed);
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      Run(mutator.Mutate(seeds));
      ++executions;
    }
  }
  std::printf("fuzz_driver %s: %zu regression files, %zu seeds, %zu mutated executions\n", kind.c_str(),
              regressions, seeds.size(), executions);
  if (seeds.empty()) {  // a replay of the regression files alone tests almost nothing
    std::printf("FAILED: no seeds (the ONNX test data was not found)\n");
    return 1;
  }
  return 0;
}
