// ONNX Runtime's encoder-decoder convention (model_type 1: T5, BART; subgraph_t5_encoder.cc,
// subgraph_t5_decoder.cc). The graph attribute `encoder` takes encoder_input_ids,
// encoder_attention_mask and decoder_input_ids (the start token) over the unexpanded batch and
// returns logits for the first generated token, encoder_hidden_states and the decoder's first
// presents: present_{key,value}_self_i then present_{key,value}_cross_i ([batch, heads, length,
// head_size]). The graph attribute `decoder` takes input_ids, encoder_attention_mask,
// [encoder_hidden_states], past_{key,value}_self_i, past_{key,value}_cross_i and returns logits
// and present_{key,value}_self_i; each beam's self-attention cache follows it, the cross one stays.
//
// Whisper (model_type 2; subgraph_whisper_encoder.cc, subgraph_whisper_decoder.cc) is the same
// loop with other feeds: its `encoder` takes encoder_input_ids (the float input features
// [batch, feature_size, frames]) and decoder_input_ids (the forced prompt, [batch, length]) and
// returns the same outputs (logits [batch, length, vocab]); its `decoder` takes input_ids,
// [encoder_hidden_states], past_{key,value}_self_i, past_{key,value}_cross_i: no attention mask.
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/subgraph.h"
#include "ops/generation/sequences.h"

namespace onnxflow::generation {

class T5Model {
 public:
  static Result<T5Model> Prepare(const KernelInfo& info, int vocab_attribute, bool whisper = false);

  const Subgraph& encoder() const { return *encoder_; }
  const Subgraph& decoder() const { return *decoder_; }
  int vocab() const { return vocab_; }

  // The encoder's feeds: the mask is `attention_mask`, or 0 over leading pad tokens and 1 after.
  std::vector<Value> EncoderFeeds(const Tensor& input_ids, const Tensor* attention_mask, int pad_token_id,
                                  int start_token_id) const;
  // Whisper's: the features and the prompt [batch, length].
  std::vector<Value> WhisperEncoderFeeds(const Tensor& features, Tensor prompt) const;

  // The decoder's first feeds from the encoder's feeds and outputs, each expanded to `beams` rows
  // per sentence; input_ids are `tokens` (or the whole rows of `sequences`, for a decoder that
  // declares input_ids of more than one column).
  Result<std::vector<Value>> DecoderStart(const std::vector<Value>& encoder_feeds, std::vector<Value>& encoder_outputs,
                                          const std::vector<int32_t>& tokens, const Sequences& sequences,
                                          int beams) const;

  // The next feeds: the chosen tokens and the self-attention presents of rows `rows` (as they are
  // when `rows` is null).
  Status DecoderAdvance(std::vector<Value>& outputs, const std::vector<int32_t>& tokens,
                        const std::vector<int32_t>* rows, const Sequences& sequences,
                        std::vector<Value>* feeds) const;

 private:
  Tensor InputIds(const std::vector<int32_t>& tokens, const Sequences& sequences) const;

  const Subgraph* encoder_ = nullptr;
  const Subgraph* decoder_ = nullptr;
  int layers_ = 0, vocab_ = 0;
  int first_past_ = 3;  // 2 when the decoder takes no encoder_hidden_states; one less without a mask
  bool has_mask_ = true;  // the decoder's encoder_attention_mask (T5's; Whisper's takes none)
  bool sequence_as_input_ids_ = false;
};

}  // namespace onnxflow::generation
