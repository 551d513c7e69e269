// Runs a test once per CPU target compiled into the SIMD modules (Highway's per-target test
// pattern, hwy/tests/hwy_gtest.h): AVX-512, AVX2, SSE4 and the portable EMU128 on an AVX-512
// machine (.bazelrc disables SSSE3 and AVX3_DL; a CPU without AVX-512 runs the targets it has).
//
//   class VecOps : public EveryTargetTest {};
//   ONNXFLOW_INSTANTIATE_EVERY_TARGET(VecOps);
//   TEST_P(VecOps, DotRowsMatchesScalar) { ... }   // runs as VecOps/DotRowsMatchesScalar/AVX3, ...
//
// Without this a test only sees the best target of the machine it runs on, and a bug in the
// AVX2 or SSE4 code would first show on a user's older CPU.
#pragma once

#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include "hwy/targets.h"

namespace onnxflow {

// The Highway target (HWY_AVX3, ...) that HWY_DYNAMIC_DISPATCH calls right now. Highway keeps
// one chosen target for the process, read by every module's dispatch table, so this module's
// answer is every module's (as long as none keeps a function pointer of its own across calls).
int64_t DispatchedTarget();

// Dispatch goes to GetParam() for the whole test. TearDown checks that the test really
// dispatched (a test that never reaches SIMD code gains nothing from running four times) and that
// it ran on the target it is named after, then restores the machine's own choice.
class EveryTargetTest : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override;
};

std::string TargetTestName(const ::testing::TestParamInfo<int64_t>& info);

}  // namespace onnxflow

#define ONNXFLOW_INSTANTIATE_EVERY_TARGET(suite)                                                \
  INSTANTIATE_TEST_SUITE_P(EveryTarget, suite, ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()), \
                           ::onnxflow::TargetTestName)
