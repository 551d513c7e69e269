// Helpers both decoder conventions (GPT-2's and T5's) use: what a graph attribute declares, the
// step's logits, and rows of a batch-major tensor gathered by beam (a beam's cache follows it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/subgraph.h"

namespace onnxflow::generation {

// The declared dims of input `index` of the node's graph attribute `attr` (-1 where unnamed or
// symbolic); empty when it declares no shape. Read from the node as written: the prepared
// Subgraph gives its inputs' names only.
std::vector<int64_t> DeclaredInputDims(const KernelInfo& info, const std::string& attr, int index);

// The graph attribute `attr`, or an error naming it.
Result<const Subgraph*> RequireSubgraph(const KernelInfo& info, const std::string& attr);

// Subgraph input/output `index` must be named `name` (ONNX Runtime binds them by position and
// checks the names, so a graph whose order differs is refused rather than fed the wrong values).
Status ExpectName(const std::vector<std::string>& names, int index, const std::string& name, const std::string& attr,
                  const char* kind);

// The last position's logits of each of `rows` rows, from `logits` [rows or batch, length, vocab]
// (an encoder run over the unexpanded batch gives each beam its sentence's row).
Status LastLogits(const Value& logits, const std::string& graph, int batch, int beams, int vocab,
                  std::vector<float>* out);

// `t` viewed as [outer, n, block]: the result is [outer, rows.size(), block] with slice j of each
// outer part taken from slice rows[j]; dims kept but axis `axis` (1 for GPT's [2, B, ...], 0 else).
Result<Tensor> GatherRows(const Tensor& t, int axis, const std::vector<int32_t>& rows, const std::string& what);

}  // namespace onnxflow::generation
