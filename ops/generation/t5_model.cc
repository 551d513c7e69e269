#include "ops/generation/t5_model.h"

#include <string>

#include "ops/generation/subgraph_io.h"

namespace onnxflow::generation {
namespace {

std::vector<int32_t> Repeat(int batch, int beams) {
  std::vector<int32_t> rows;
  for (int b = 0; b < batch; ++b) rows.insert(rows.end(), beams, b);
  return rows;
}

}  // namespace

Result<T5Model> T5Model::Prepare(const KernelInfo& info, int vocab_attribute, bool whisper) {
  T5Model m;
  ONNXFLOW_ASSIGN_OR_RETURN(m.encoder_, RequireSubgraph(info, "encoder"));
  ONNXFLOW_ASSIGN_OR_RETURN(m.decoder_, RequireSubgraph(info, "decoder"));
  const auto& e_in = m.encoder_->input_names();
  const auto& e_out = m.encoder_->output_names();
  if (whisper) {
    if (e_in.size() != 2) {
      return InvalidArgument("graph 'encoder' takes " + std::to_string(e_in.size()) +
                             " inputs; for model_type 2 it must take encoder_input_ids (the input features) and "
                             "decoder_input_ids");
    }
    ONNXFLOW_RETURN_IF_ERROR(ExpectName(e_in, 0, "encoder_input_ids", "encoder", "input"));
    ONNXFLOW_RETURN_IF_ERROR(ExpectName(e_in, 1, "decoder_input_ids", "encoder", "input"));
  } else {
    if (e_in.size() != 3) {
      return InvalidArgument("graph 'encoder' takes " + std::to_string(e_in.size()) +
                             " inputs; it must take encoder_input_ids, encoder_attention_mask and decoder_input_ids");
    }
    ONNXFLOW_RETURN_IF_ERROR(ExpectName(e_in, 0, "encoder_input_ids", "encoder", "input"));
    ONNXFLOW_RETURN_IF_ERROR(ExpectName(e_in, 1, "encoder_attention_mask", "encoder", "input"));
    ONNXFLOW_RETURN_IF_ERROR(ExpectName(e_in, 2, "decoder_input_ids", "encoder", "input"));
  }
  if (e_out.size() < 6 || (e_out.size() - 2) % 4 != 0) {
    return InvalidArgument("graph 'encoder' returns " + std::to_string(e_out.size()) +
                           " outputs; it must return logits, encoder_hidden_states and 4 presents per layer");
  }
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(e_out, 0, "logits", "encoder", "output"));
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(e_out, 1, "encoder_hidden_states", "encoder", "output"));
  m.layers_ = static_cast<int>(e_out.size() - 2) / 4;

  const auto& d_in = m.decoder_->input_names();
  const auto& d_out = m.decoder_->output_names();
  m.has_mask_ = !whisper;
  const size_t hidden_at = m.has_mask_ ? 2 : 1;
  m.first_past_ = static_cast<int>(hidden_at) + (d_in.size() > hidden_at && d_in[hidden_at] == "encoder_hidden_states" ? 1 : 0);
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(d_in, 0, "input_ids", "decoder", "input"));
  if (m.has_mask_) ONNXFLOW_RETURN_IF_ERROR(ExpectName(d_in, 1, "encoder_attention_mask", "decoder", "input"));
  const int want_in = m.first_past_ + 4 * m.layers_, want_out = 1 + 2 * m.layers_;
  if (static_cast<int>(d_in.size()) > want_in && d_in[want_in] == "past_sequence_length") {
    return Unimplemented("graph 'decoder' takes past_sequence_length (past_present_share_buffer): not supported");
  }
  if (static_cast<int>(d_in.size()) != want_in || static_cast<int>(d_out.size()) != want_out) {
    return InvalidArgument("graph 'decoder' takes " + std::to_string(d_in.size()) + " inputs and returns " +
                           std::to_string(d_out.size()) + " outputs; with the encoder's " + std::to_string(m.layers_) +
                           " layers it must take " + std::to_string(want_in) + " and return " + std::to_string(want_out));
  }
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(d_out, 0, "logits", "decoder", "output"));
  const std::vector<int64_t> ids = DeclaredInputDims(info, "decoder", 0);
  m.sequence_as_input_ids_ = !(ids.size() == 2 && ids[1] == 1);
  const auto& logits = m.decoder_->output_infos()[0];
  const int64_t declared = logits.has_shape && logits.shape.size() == 3 ? logits.shape[2] : -1;
  m.vocab_ = vocab_attribute > 0 ? vocab_attribute : static_cast<int>(declared);
  if (m.vocab_ <= 0) {
    return InvalidArgument("graph 'decoder': output 'logits' must declare [batch, 1, vocab] with vocab fixed, "
                           "or the node must set attribute 'vocab_size'");
  }
  return m;
}

std::vector<Value> T5Model::EncoderFeeds(const Tensor& input_ids, const Tensor* attention_mask, int pad_token_id,
                                         int start_token_id) const {
  const int batch = static_cast<int>(input_ids.dim(0)), length = static_cast<int>(input_ids.dim(1));
  std::vector<Value> feeds;
  feeds.emplace_back(input_ids);
  if (attention_mask != nullptr) {
    feeds.emplace_back(*attention_mask);
  } else {
    // Only leading pads are masked: T5's tokenizer may end a sentence with eos equal to pad.
    std::vector<int32_t> mask(static_cast<size_t>(batch) * length);
    for (int b = 0; b < batch; ++b) {
      bool leading = true;
      for (int j = 0; j < length; ++j) {
        leading = leading && input_ids.data<int32_t>()[b * length + j] == pad_token_id;
        mask[static_cast<size_t>(b) * length + j] = leading ? 0 : 1;
      }
    }
    feeds.emplace_back(Tensor::FromVector<int32_t>({batch, length}, mask));
  }
  feeds.emplace_back(Tensor::FromVector<int32_t>({batch, 1}, std::vector<int32_t>(batch, start_token_id)));
  return feeds;
}

std::vector<Value> T5Model::WhisperEncoderFeeds(const Tensor& features, Tensor prompt) const {
  std::vector<Value> feeds;
  feeds.emplace_back(features);
  feeds.emplace_back(std::move(prompt));
  return feeds;
}

Tensor T5Model::InputIds(const std::vector<int32_t>& tokens, const Sequences& sequences) const {
  const int rows = static_cast<int>(tokens.size());
  if (!sequence_as_input_ids_) return Tensor::FromVector<int32_t>({rows, 1}, tokens);
  std::vector<int32_t> ids;
  for (int r = 0; r < rows; ++r) ids.insert(ids.end(), sequences.row(r), sequences.row(r) + sequences.length());
  return Tensor::FromVector<int32_t>({rows, sequences.length()}, ids);
}

Result<std::vector<Value>> T5Model::DecoderStart(const std::vector<Value>& encoder_feeds,
                                                 std::vector<Value>& encoder_outputs, const std::vector<int32_t>& tokens,
                                                 const Sequences& sequences, int beams) const {
  const int batch = static_cast<int>(encoder_feeds[0].tensor().dim(0));
  const std::vector<int32_t> rows = Repeat(batch, beams);
  std::vector<Value> feeds;
  feeds.emplace_back(InputIds(tokens, sequences));
  if (has_mask_) {
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor mask, GatherRows(encoder_feeds[1].tensor(), 0, rows, "encoder_attention_mask"));
    feeds.emplace_back(std::move(mask));
  }
  // Encoder outputs from encoder_hidden_states (or the first present) on feed the decoder in order.
  const bool takes_hidden = first_past_ == (has_mask_ ? 3 : 2);
  for (size_t j = takes_hidden ? 1 : 2; j < encoder_outputs.size(); ++j) {
    const std::string what = "graph 'encoder' output '" + encoder_->output_names()[j] + "'";
    if (!encoder_outputs[j].is_tensor() || encoder_outputs[j].tensor().rank() < 1 ||
        encoder_outputs[j].tensor().dim(0) != batch) {
      return InvalidArgument(what + " must be a tensor of batch " + std::to_string(batch) + " rows");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor expanded, GatherRows(encoder_outputs[j].tensor(), 0, rows, what));
    feeds.emplace_back(std::move(expanded));
  }
  return feeds;
}

Status T5Model::DecoderAdvance(std::vector<Value>& outputs, const std::vector<int32_t>& tokens,
                               const std::vector<int32_t>* rows, const Sequences& sequences,
                               std::vector<Value>* feeds) const {
  (*feeds)[0] = InputIds(tokens, sequences);
  for (int i = 0; i < 2 * layers_; ++i) {
    Value& present = outputs[1 + i];
    const std::string what = "graph 'decoder' output '" + decoder_->output_names()[1 + i] + "'";
    if (!present.is_tensor() || present.tensor().rank() != 4 || present.tensor().dim(0) != static_cast<int64_t>(tokens.size())) {
      return InvalidArgument(what + " must be [" + std::to_string(tokens.size()) + ", heads, length, head_size]");
    }
    if (rows == nullptr) {
      (*feeds)[first_past_ + i] = std::move(present);
    } else {
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor picked, GatherRows(present.tensor(), 0, *rows, what));
      (*feeds)[first_past_ + i] = std::move(picked);
    }
  }
  return Status::Ok();
}

}  // namespace onnxflow::generation
