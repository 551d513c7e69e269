// Helpers the sequence and optional kernels share.
#pragma once

#include "ops/framework/kernel.h"
#include "ops/framework/registry.h"

namespace onnxflow {

// Input i as a sequence, or an error naming it.
Result<const Sequence*> RequireSequence(const KernelContext& ctx, int i);

// Reads a position (int32/int64 scalar) from input i and maps a negative one from the end.
// Valid positions are [-size, size) — or up to size inclusive with `allow_end` (insertion).
Status ReadPosition(const KernelContext& ctx, int i, int64_t size, bool allow_end, int64_t* position);

}  // namespace onnxflow
