// The process's resident set, as /proc/self/status reports it, for the tests that measure memory
// (memory_floor_test, shared_weights_test). Linux only, like the tests that use it.
#pragma once

namespace onnxflow::testing {

// Resident set now (VmRSS), in MiB.
double RssMb();
// The highest resident set since the process started or since ResetPeakRss (VmHWM), in MiB; what
// /usr/bin/time -v reports as "Maximum resident set size" at exit.
double PeakRssMb();
// Restarts PeakRssMb from the current resident set (writes "5" to /proc/self/clear_refs).
// False when the kernel refuses it.
bool ResetPeakRss();

}  // namespace onnxflow::testing
