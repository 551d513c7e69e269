#include "tests/rss.h"

#include <fstream>
#include <string>

namespace onnxflow::testing {
namespace {

double StatusFieldMb(const char* field) {
  std::ifstream status("/proc/self/status");
  const std::string prefix = field;
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(prefix.size())) / 1024.0;  // kB
  }
  return 0;
}

}  // namespace

double RssMb() { return StatusFieldMb("VmRSS:"); }

double PeakRssMb() { return StatusFieldMb("VmHWM:"); }

bool ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

}  // namespace onnxflow::testing
