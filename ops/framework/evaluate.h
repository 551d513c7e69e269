// One node run outside a plan: its kernel made from a KernelInfo and computed once on given values.
// Constant folding (graph/passes.cc) and the op tests (testing.h) run nodes this way, so a node
// folded at load runs as its test ran it, through the same KernelContext the executor builds.
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/session.h"
#include "ops/framework/kernel.h"
#include "ops/framework/registry.h"

namespace onnxflow {

struct EvaluateOptions {
  SessionLimits limits;
  int threads = 1;
  std::vector<char> reusable;  // per input: the kernel may write into it (NodeSlots::reusable)
};

// `inputs[i]` is input i of info's node (ignored where the node leaves the input ""). Returns one
// Value per output of the node, empty where it leaves the output "".
Result<std::vector<Value>> EvaluateNode(const KernelDef& def, const KernelInfo& info, std::vector<Value> inputs,
                                        const EvaluateOptions& options = {});

}  // namespace onnxflow
