// ONNX Runtime's GPT-2 decoder convention (contrib_ops/cpu/transformers/subgraph_gpt.cc): the graph
// attribute `decoder` takes input_ids, position_ids, attention_mask (int32) and past_0..past_{n-1}
// ([2, batch*beams, heads, past_length, head_size] per layer) and returns logits
// [batch*beams, length, vocab] and present_0..present_{n-1}. The first run sees the whole prompt
// and empty pasts; each later run one token per row, the presents of the beams it continues.
//
// A decoder that also takes past_sequence_length (int32 [1], last) shares its past and present
// buffers (past_present_share_buffer): the pasts are [2, batch*beams, heads, max_length, head_size]
// from the start, the decoder writes the new keys and values at past_sequence_length, and each
// present is the next run's past as it is. As in ONNX Runtime, those caches stay with their rows:
// without cache_indirection (its CUDA-only form) a beam search does not reorder them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/subgraph.h"

namespace onnxflow::generation {

class GptDecoder {
 public:
  // Checks the decoder's inputs and outputs at load; `vocab_attribute` > 0 overrides the logits'
  // declared vocabulary as in ONNX Runtime.
  // `attr` is "decoder", or "init_decoder" (ONNX Runtime's optional graph for the first run).
  static Result<GptDecoder> Prepare(const KernelInfo& info, const std::string& attr, int vocab_attribute);

  // The node's init_decoder, when it has one: the first run's graph, of the decoder's convention.
  static Result<std::optional<GptDecoder>> PrepareInit(const KernelInfo& info, const GptDecoder& decoder);

  const Subgraph& graph() const { return *graph_; }
  int vocab() const { return vocab_; }

  // The first run's feeds for `beams` copies of each prompt row: positions count the tokens that
  // are not pad (pad positions are 0), the mask is `attention_mask` or that count's 0/1 pattern.
  // `prompt` receives the expanded rows, `lengths` each row's count of tokens that are not pad.
  struct Feeds {
    std::vector<Value> values;         // in the decoder's input order
    std::vector<int32_t> positions;    // of the next token, per row
    std::vector<int32_t> mask;         // [rows, width]
    int width = 0;
    int max_length = 0;                // the shared buffers' length
  };
  Result<Feeds> Start(const Tensor& input_ids, const Tensor* attention_mask, int beams, int pad_token_id,
                      int max_length, std::vector<int32_t>* prompt) const;

  // The next run's feeds: the chosen tokens, positions one further (after the second run), the mask
  // one column longer, and each row's past the present of row `rows[r]` (as is when `rows` is null).
  Status Advance(std::vector<Value>& outputs, const std::vector<int32_t>& tokens, const std::vector<int32_t>* rows,
                 bool increase_position, Feeds* feeds) const;

 private:
  std::string attr_;
  const Subgraph* graph_ = nullptr;
  int layers_ = 0, heads_ = 0, head_size_ = 0, vocab_ = 0;
  bool shares_buffer_ = false;
};

}  // namespace onnxflow::generation
