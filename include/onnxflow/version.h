// onnxflow's version (semantic versioning: see CHANGELOG.md and "What is stable" in README.md).
// The shared library's soname carries the major number: libonnxflow.so.0.
#pragma once

#define ONNXFLOW_VERSION_MAJOR 0
#define ONNXFLOW_VERSION_MINOR 1
#define ONNXFLOW_VERSION_PATCH 0
#define ONNXFLOW_VERSION_STRING "0.1.0"
// One number that compares: 0.1.0 -> 100, 1.2.3 -> 10203.
#define ONNXFLOW_VERSION (ONNXFLOW_VERSION_MAJOR * 10000 + ONNXFLOW_VERSION_MINOR * 100 + ONNXFLOW_VERSION_PATCH)
