// Test helper: runs one ONNX backend-test case (a single-node model plus test_data_set_*/) with
// the kernels a family registers, until the lead's conformance runner covers the family. Cases
// are read from $ONNXFLOW_TEST_DATA/node/<case> (set by bazelw); a missing folder skips.
#pragma once

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "ops/framework/registry.h"

namespace onnxflow {

// Success, failure naming the case/data set/output, or success with `*skipped` set when the
// test data is not on this machine.
::testing::AssertionResult RunNodeCase(const std::string& name,
                                       const std::function<Status(KernelRegistry&)>& register_kernels,
                                       bool* skipped);

}  // namespace onnxflow
