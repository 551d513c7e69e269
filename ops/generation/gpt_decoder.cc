#include "ops/generation/gpt_decoder.h"

#include <string>

#include "ops/generation/subgraph_io.h"

namespace onnxflow::generation {
namespace {

Tensor Int32(Shape shape, const std::vector<int32_t>& values) { return Tensor::FromVector<int32_t>(std::move(shape), values); }

}  // namespace

Result<GptDecoder> GptDecoder::Prepare(const KernelInfo& info, const std::string& attr, int vocab_attribute) {
  GptDecoder d;
  d.attr_ = attr;
  ONNXFLOW_ASSIGN_OR_RETURN(d.graph_, RequireSubgraph(info, attr));
  const auto& ins = d.graph_->input_names();
  const auto& outs = d.graph_->output_names();
  const int n_in = static_cast<int>(ins.size()), n_out = static_cast<int>(outs.size());
  if (n_out < 2) {
    return InvalidArgument("graph '" + attr + "' returns " + std::to_string(n_out) +
                           " outputs; it must return logits and at least one present state");
  }
  if (n_in == n_out + 5 && ins[n_in - 3] == "past_sequence_length") {
    // ONNX Runtime's CUDA form for DecoderMaskedMultiHeadAttention; its CPU kernels refuse it too.
    return Unimplemented("graph '" + attr + "' takes beam_width and cache_indirection: not supported");
  }
  d.shares_buffer_ = n_in == n_out + 3 && ins.back() == "past_sequence_length";
  if (n_in != n_out + 2 + (d.shares_buffer_ ? 1 : 0)) {
    return InvalidArgument("graph '" + attr + "' takes " + std::to_string(n_in) + " inputs and returns " + std::to_string(n_out) +
                           " outputs; it must take input_ids, position_ids, attention_mask and one past per present (" +
                           std::to_string(n_out + 2) + " inputs)");
  }
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(ins, 0, "input_ids", attr, "input"));
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(ins, 1, "position_ids", attr, "input"));
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(ins, 2, "attention_mask", attr, "input"));
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(ins, 3, "past_0", attr, "input"));
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(outs, 0, "logits", attr, "output"));
  ONNXFLOW_RETURN_IF_ERROR(ExpectName(outs, 1, "present_0", attr, "output"));
  d.layers_ = n_out - 1;
  // The empty first past needs heads and head size: ONNX Runtime reads them off past_0's declaration.
  const std::vector<int64_t> past = DeclaredInputDims(info, attr, 3);
  if (past.size() != 5 || past[0] != 2 || past[2] <= 0 || past[4] <= 0) {
    return InvalidArgument("graph '" + attr + "': input 'past_0' must declare shape [2, batch, heads, past_length, head_size] "
                           "with heads and head_size fixed");
  }
  d.heads_ = static_cast<int>(past[2]);
  d.head_size_ = static_cast<int>(past[4]);
  const auto& logits = d.graph_->output_infos()[0];
  const int64_t declared = logits.has_shape && logits.shape.size() == 3 ? logits.shape[2] : -1;
  d.vocab_ = vocab_attribute > 0 ? vocab_attribute : static_cast<int>(declared);
  if (d.vocab_ <= 0) {
    return InvalidArgument("graph '" + attr + "': output 'logits' must declare [batch, length, vocab] with vocab fixed, "
                           "or the node must set attribute 'vocab_size'");
  }
  return d;
}

Result<std::optional<GptDecoder>> GptDecoder::PrepareInit(const KernelInfo& info, const GptDecoder& decoder) {
  if (info.subgraph("init_decoder") == nullptr) return std::optional<GptDecoder>();
  ONNXFLOW_ASSIGN_OR_RETURN(GptDecoder init, Prepare(info, "init_decoder", decoder.vocab_));
  // Its presents feed the decoder's pasts and both read the same feeds.
  if (init.layers_ != decoder.layers_ || init.heads_ != decoder.heads_ || init.head_size_ != decoder.head_size_ ||
      init.shares_buffer_ != decoder.shares_buffer_) {
    return InvalidArgument("graph 'init_decoder' must have the layers, heads, head size and buffer sharing of graph 'decoder'");
  }
  return std::optional<GptDecoder>(std::move(init));
}

Result<GptDecoder::Feeds> GptDecoder::Start(const Tensor& input_ids, const Tensor* attention_mask, int beams,
                                            int pad_token_id, int max_length, std::vector<int32_t>* prompt) const {
  const int batch = static_cast<int>(input_ids.dim(0)), length = static_cast<int>(input_ids.dim(1));
  const int rows = batch * beams;
  const int32_t* ids = input_ids.data<int32_t>();
  Feeds f;
  std::vector<int32_t> expanded_ids, positions, lengths;
  f.width = length;
  f.max_length = max_length;
  for (int b = 0; b < batch; ++b) {
    // Positions skip pad tokens, whatever the mask says (ONNX Runtime's CreateGptInputs).
    std::vector<int32_t> row_positions(length), row_mask(length);
    int32_t count = 0;
    for (int j = 0; j < length; ++j) {
      const int32_t id = ids[b * length + j];
      const bool pad = id == pad_token_id;
      row_positions[j] = pad ? 0 : count;
      row_mask[j] = attention_mask != nullptr ? attention_mask->data<int32_t>()[b * length + j] : !pad;
      count += !pad;
    }
    for (int k = 0; k < beams; ++k) {
      expanded_ids.insert(expanded_ids.end(), ids + b * length, ids + (b + 1) * length);
      positions.insert(positions.end(), row_positions.begin(), row_positions.end());
      f.mask.insert(f.mask.end(), row_mask.begin(), row_mask.end());
      f.positions.push_back(count);
    }
  }
  *prompt = expanded_ids;
  f.values.emplace_back(Int32({rows, length}, expanded_ids));
  f.values.emplace_back(Int32({rows, length}, positions));
  f.values.emplace_back(Int32({rows, length}, f.mask));
  if (!shares_buffer_) {
    const Tensor empty_past(DataType::kFloat, {2, rows, heads_, 0, head_size_});
    for (int i = 0; i < layers_; ++i) f.values.emplace_back(empty_past);
    return f;
  }
  // One buffer per layer of the whole length; ONNX Runtime leaves it uninitialized, zeros here.
  for (int i = 0; i < layers_; ++i) f.values.emplace_back(Tensor(DataType::kFloat, {2, rows, heads_, max_length, head_size_}));
  f.values.emplace_back(Int32({1}, {0}));
  return f;
}

Status GptDecoder::Advance(std::vector<Value>& outputs, const std::vector<int32_t>& tokens,
                           const std::vector<int32_t>* rows, bool increase_position, Feeds* f) const {
  const int n = static_cast<int>(tokens.size());
  if (increase_position) {
    for (int32_t& p : f->positions) ++p;
  }
  std::vector<int32_t> mask(static_cast<size_t>(n) * (f->width + 1));
  for (int r = 0; r < n; ++r) {
    for (int j = 0; j < f->width; ++j) mask[static_cast<size_t>(r) * (f->width + 1) + j] = f->mask[static_cast<size_t>(r) * f->width + j];
    mask[static_cast<size_t>(r) * (f->width + 1) + f->width] = 1;
  }
  f->mask = std::move(mask);
  ++f->width;
  f->values[0] = Int32({n, 1}, tokens);
  f->values[1] = Int32({n, 1}, f->positions);
  f->values[2] = Int32({n, f->width}, f->mask);
  for (int i = 0; i < layers_; ++i) {
    const Value& present = outputs[1 + i];
    const std::string what = "graph '" + attr_ + "' output 'present_" + std::to_string(i) + "'";
    if (!present.is_tensor() || present.tensor().rank() != 5 || present.tensor().dim(0) != 2 ||
        present.tensor().dim(1) != n) {
      return InvalidArgument(what + " must be [2, " + std::to_string(n) + ", heads, length, head_size], got " +
                             (present.is_tensor() ? ShapeToString(present.tensor().shape()) : std::string("no tensor")));
    }
    const Shape shared{2, n, heads_, f->max_length, head_size_};
    if (shares_buffer_ && present.tensor().shape() != shared) {
      return InvalidArgument(what + " has shape " + ShapeToString(present.tensor().shape()) +
                             "; sharing its buffer with past_" + std::to_string(i) + ", it must keep " +
                             ShapeToString(shared));
    }
    if (rows == nullptr || shares_buffer_) {
      f->values[3 + i] = std::move(outputs[1 + i]);
    } else {
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor picked, GatherRows(present.tensor(), 1, *rows, what));
      f->values[3 + i] = std::move(picked);
    }
  }
  // The tokens already in the cache: every one but the new one.
  if (shares_buffer_) f->values[3 + layers_] = Int32({1}, {f->width - 1});
  return Status::Ok();
}

}  // namespace onnxflow::generation
