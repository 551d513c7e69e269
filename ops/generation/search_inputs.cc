#include "ops/generation/search_inputs.h"

#include <limits>

namespace onnxflow::generation {
namespace {

Result<int> TokenAttribute(const KernelInfo& info, const char* name, int64_t fallback) {
  const int64_t v = info.GetInt(name, fallback);
  if (v < -1 || v > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument(std::string("attribute '") + name + "' is " + std::to_string(v) + ", not a token id");
  }
  return static_cast<int>(v);
}

Result<const Tensor*> Scalar(const KernelContext& ctx, int index, const char* name, DataType dtype) {
  const Tensor* t = ctx.input_tensor(index);
  if (t == nullptr) return static_cast<const Tensor*>(nullptr);
  if (t->dtype() != dtype || t->size() != 1 || t->rank() > 1) {
    return InvalidArgument(std::string("input '") + name + "' must hold one " + DataTypeName(dtype) + " value, got " +
                           DataTypeName(t->dtype()) + " of shape " + ShapeToString(t->shape()));
  }
  return t;
}

}  // namespace

Result<SearchAttributes> SearchAttributes::Parse(const KernelInfo& info) {
  SearchAttributes a;
  ONNXFLOW_ASSIGN_OR_RETURN(a.eos_token_id, TokenAttribute(info, "eos_token_id", -1));
  ONNXFLOW_ASSIGN_OR_RETURN(a.pad_token_id, TokenAttribute(info, "pad_token_id", -1));
  ONNXFLOW_ASSIGN_OR_RETURN(a.decoder_start_token_id, TokenAttribute(info, "decoder_start_token_id", -1));
  ONNXFLOW_ASSIGN_OR_RETURN(a.vocab_size, TokenAttribute(info, "vocab_size", -1));
  // ONNX Runtime refuses these two as negative; they also index score rows here.
  if (a.eos_token_id < 0) return InvalidArgument("attribute 'eos_token_id' must be set to a token id (>= 0)");
  if (a.pad_token_id < 0) return InvalidArgument("attribute 'pad_token_id' must be set to a token id (>= 0)");
  const int64_t ngram = info.GetInt("no_repeat_ngram_size", 0);
  if (ngram < 0 || ngram > kMaxLength) {
    return InvalidArgument("attribute 'no_repeat_ngram_size' is " + std::to_string(ngram) + ", not in [0, " +
                           std::to_string(kMaxLength) + "]");
  }
  a.no_repeat_ngram_size = static_cast<int>(ngram);
  const int64_t model_type = info.GetInt("model_type", kModelTypeGpt);
  if (model_type != kModelTypeGpt && model_type != kModelTypeT5 && model_type != kModelTypeWhisper) {
    return Unimplemented("attribute 'model_type' " + std::to_string(model_type) +
                         ": only 0 (GPT-2 style decoder), 1 (T5/BART encoder-decoder) and 2 (Whisper) are supported");
  }
  a.model_type = static_cast<int>(model_type);
  const int64_t early = info.GetInt("early_stopping", 0);
  if (early != 0 && early != 1) return InvalidArgument("attribute 'early_stopping' must be 0 or 1, got " + std::to_string(early));
  a.early_stopping = early == 1;
  return a;
}

Result<int> ScalarInt(const KernelContext& ctx, int index, const char* name, int fallback) {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, Scalar(ctx, index, name, DataType::kInt32));
  return t == nullptr ? fallback : t->data<int32_t>()[0];
}

Result<float> ScalarFloat(const KernelContext& ctx, int index, const char* name, float fallback) {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, Scalar(ctx, index, name, DataType::kFloat));
  return t == nullptr ? fallback : t->data<float>()[0];
}

Result<const Tensor*> ReadInputIds(const KernelContext& ctx, int vocab) {
  const Tensor* ids = ctx.input_tensor(0);
  if (ids == nullptr) return InvalidArgument("input 'input_ids' is required");
  if (ids->dtype() != DataType::kInt32 || ids->rank() != 2 || ids->dim(0) < 1 || ids->dim(1) < 1) {
    return InvalidArgument("input 'input_ids' must be int32 [batch_size, sequence_length] with both at least 1, got " +
                           std::string(DataTypeName(ids->dtype())) + " " + ShapeToString(ids->shape()));
  }
  const int32_t* data = ids->data<int32_t>();
  for (int64_t i = 0; i < ids->size(); ++i) {
    // Token ids index score rows (repetition penalty, n-grams): one outside the vocabulary is refused.
    if (data[i] < 0 || data[i] >= vocab) {
      return InvalidArgument("input 'input_ids' holds token " + std::to_string(data[i]) + " at " + std::to_string(i) +
                             ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
  return ids;
}

Status ReadMasks(const KernelContext& ctx, int vocab_mask_index, int prefix_mask_index, int batch, int vocab,
                 ScoreRules* rules) {
  if (const Tensor* m = ctx.input_tensor(vocab_mask_index)) {
    if (m->dtype() != DataType::kInt32 || m->shape() != Shape{vocab}) {
      return InvalidArgument("input 'vocab_mask' must be int32 [" + std::to_string(vocab) + "] (the vocabulary), got " +
                             std::string(DataTypeName(m->dtype())) + " " + ShapeToString(m->shape()));
    }
    rules->vocab_mask = m->data<int32_t>();
  }
  if (const Tensor* m = ctx.input_tensor(prefix_mask_index)) {
    if (m->dtype() != DataType::kInt32 || m->shape() != Shape{batch, vocab}) {
      return InvalidArgument("input 'prefix_vocab_mask' must be int32 [" + std::to_string(batch) + ", " +
                             std::to_string(vocab) + "] (batch, vocabulary), got " + DataTypeName(m->dtype()) + " " +
                             ShapeToString(m->shape()));
    }
    rules->prefix_vocab_mask = m->data<int32_t>();
  }
  return Status::Ok();
}

Result<const Tensor*> ReadAttentionMask(const KernelContext& ctx, int index, const Tensor& input_ids) {
  const Tensor* m = ctx.input_tensor(index);
  if (m != nullptr && (m->dtype() != DataType::kInt32 || m->shape() != input_ids.shape())) {
    return InvalidArgument("input 'attention_mask' must be int32 of input_ids' shape " + ShapeToString(input_ids.shape()) +
                           ", got " + DataTypeName(m->dtype()) + " " + ShapeToString(m->shape()));
  }
  return m;
}

Status CheckMaxLength(int max_length, int length, int limit) {
  if (max_length <= length) {
    return InvalidArgument("input 'max_length' (" + std::to_string(max_length) +
                           ") must be greater than the input sequence length (" + std::to_string(length) + ")");
  }
  if (max_length > limit) {
    return InvalidArgument("input 'max_length' (" + std::to_string(max_length) + ") must be at most " +
                           std::to_string(limit));
  }
  return Status::Ok();
}

}  // namespace onnxflow::generation
