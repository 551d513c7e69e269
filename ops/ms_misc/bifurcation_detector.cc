// com.microsoft BifurcationDetector (version 1): the bookkeeping step of speculative decoding with a
// source text (input-grounded drafting). Inputs, all int64: src_tokens [S], cur_tokens [C],
// prev_suffix_match_idx (one value), pred_tokens [S + 1 - prev] (optional). Outputs tokens and
// suffix_match_idx (prev's shape).
//
// As ONNX Runtime 1.30's CPU kernel: with pred_tokens, the first position p where the prediction
// leaves src_tokens[prev ..] (p = S - prev when it never does) gives tokens = cur_tokens +
// pred_tokens[0 .. p]; without, tokens = cur_tokens. Then for n = min_ngram_size .. max_ngram_size
// (while n <= |tokens|), the last n tokens are searched in src_tokens: not found stops the search;
// found once, suffix_match_idx = where it ends (its start + n) and the next n is tried; found twice,
// -1 and the next n is tried. Its quirk is kept: a match that ends at S stops the search with
// suffix_match_idx = S.
#include <algorithm>
#include <cstring>
#include <string>

#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

class BifurcationDetectorKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<BifurcationDetectorKernel>();
    k->min_ngram_ = info.GetInt("min_ngram_size", 1);
    k->max_ngram_ = info.GetInt("max_ngram_size", 3);
    if (k->min_ngram_ < 1 || k->max_ngram_ < k->min_ngram_) {
      return InvalidArgument("BifurcationDetector: attributes 'min_ngram_size' (" + std::to_string(k->min_ngram_) +
                             ") and 'max_ngram_size' (" + std::to_string(k->max_ngram_) +
                             ") must satisfy 1 <= min <= max");
    }
    if (info.input_count() < 3 || info.input_count() > 4 || !info.has_input(0) || !info.has_input(1) ||
        !info.has_input(2)) {
      return InvalidArgument(
          "BifurcationDetector: needs inputs src_tokens, cur_tokens and prev_suffix_match_idx "
          "(pred_tokens optional)");
    }
    for (int i = 0; i < info.input_count(); ++i) {
      const DataType t = info.input_type(i);
      if (t != DataType::kUndefined && t != DataType::kInt64) {
        return InvalidArgument(std::string("BifurcationDetector: input '") + kInputNames[i] + "' must be int64, got " +
                               DataTypeName(t));
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* in[4] = {};
    for (int i = 0; i < 4; ++i) {
      if (i < 3) {
        ONNXFLOW_ASSIGN_OR_RETURN(in[i], ctx.RequireTensor(i));
      } else {
        in[i] = ctx.input_tensor(3);
      }
      if (in[i] == nullptr) continue;
      if (in[i]->dtype() != DataType::kInt64) {
        return InvalidArgument(std::string("BifurcationDetector: input '") + kInputNames[i] + "' must be int64, got " +
                               DataTypeName(in[i]->dtype()));
      }
      if (i != 2 && in[i]->rank() != 1) {
        return InvalidArgument(std::string("BifurcationDetector: input '") + kInputNames[i] + "' must be 1-D, got " +
                               ShapeToString(in[i]->shape()));
      }
    }
    const Tensor& src_t = *in[0];
    const Tensor& cur_t = *in[1];
    const Tensor& prev_t = *in[2];
    if (prev_t.size() != 1) {
      return InvalidArgument("BifurcationDetector: input 'prev_suffix_match_idx' must hold one value, got shape " +
                             ShapeToString(prev_t.shape()));
    }
    const int64_t* src = src_t.data<int64_t>();
    const int64_t src_len = src_t.size(), cur_len = cur_t.size();
    int64_t take = 0;  // how many predicted tokens join the output
    const Tensor* pred_t = in[3];
    if (pred_t != nullptr) {
      const int64_t prev = prev_t.data<int64_t>()[0];
      if (prev < 0 || prev > src_len) {
        return InvalidArgument("BifurcationDetector: input 'prev_suffix_match_idx' " + std::to_string(prev) +
                               " must be in [0, " + std::to_string(src_len) + "] (the length of src_tokens)");
      }
      if (pred_t->size() != src_len + 1 - prev) {
        return InvalidArgument("BifurcationDetector: input 'pred_tokens' holds " + std::to_string(pred_t->size()) +
                               " tokens; src_tokens' length + 1 - prev_suffix_match_idx is " +
                               std::to_string(src_len + 1 - prev));
      }
      const int64_t* pred = pred_t->data<int64_t>();
      int64_t p = 0;
      while (p < src_len - prev && pred[p] == src[p + prev]) ++p;
      take = p + 1;
    }
    ONNXFLOW_ASSIGN_OR_RETURN(
        Tensor * out_t,
        ctx.AllocateUninitialized(0, DataType::kInt64, pred_t != nullptr ? Shape{cur_len + take} : cur_t.shape()));
    int64_t* tokens = out_t->mutable_data<int64_t>();
    std::copy(cur_t.data<int64_t>(), cur_t.data<int64_t>() + cur_len, tokens);
    if (take > 0) std::copy(pred_t->data<int64_t>(), pred_t->data<int64_t>() + take, tokens + cur_len);

    const int64_t tokens_len = out_t->size();
    const int64_t* src_end = src + src_len;
    int64_t suffix_idx = -1;
    // n never passes tokens_len + 1, so a max_ngram_size near INT64_MAX cannot overflow it.
    for (int64_t n = min_ngram_; n <= max_ngram_ && n <= tokens_len; ++n) {
      const int64_t* gram = tokens + tokens_len - n;
      const int64_t* found = std::search(src, src_end, gram, gram + n);
      if (found == src_end) break;
      suffix_idx = (found - src) + n;
      if (suffix_idx >= src_len) break;
      if (std::search(found + 1, src_end, gram, gram + n) != src_end) suffix_idx = -1;
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * idx_t, ctx.AllocateUninitialized(1, DataType::kInt64, prev_t.shape()));
    idx_t->mutable_data<int64_t>()[0] = suffix_idx;
    return Status::Ok();
  }

 private:
  static constexpr const char* kInputNames[] = {"src_tokens", "cur_tokens", "prev_suffix_match_idx", "pred_tokens"};
  int64_t min_ngram_ = 1, max_ngram_ = 3;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBifurcationDetector(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "BifurcationDetector", 1, kOpenEnded, Make<BifurcationDetectorKernel>());
}

}  // namespace onnxflow
