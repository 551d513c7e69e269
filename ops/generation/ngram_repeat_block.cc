// com.microsoft NGramRepeatBlock: scores [batch, vocab] with -inf for every token that would
// complete an n-gram already in that row of input_ids [batch, length] (int64), so a decoding loop
// written as a graph never repeats an n-gram (ONNX Runtime's contrib op; attribute ngram_size).
#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/framework/domains.h"
#include "ops/framework/registry.h"

namespace onnxflow {
namespace {

class NGramRepeatBlock : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t n, info.RequireInt("ngram_size"));
    if (n < 1) return InvalidArgument("attribute 'ngram_size' must be at least 1, got " + std::to_string(n));
    return std::unique_ptr<OpKernel>(new NGramRepeatBlock(n));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* ids, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scores, ctx.RequireTensor(1));
    if (ids->dtype() != DataType::kInt64 || ids->rank() != 2) {
      return InvalidArgument("input 'input_ids' must be int64 [batch, length], got " + std::string(DataTypeName(ids->dtype())) +
                             " " + ShapeToString(ids->shape()));
    }
    if (scores->dtype() != DataType::kFloat || scores->rank() != 2 || scores->dim(0) != ids->dim(0)) {
      return InvalidArgument("input 'scores' must be float [" + std::to_string(ids->dim(0)) + ", vocab], got " +
                             DataTypeName(scores->dtype()) + " " + ShapeToString(scores->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateUninitialized(0, DataType::kFloat, scores->shape()));
    std::memcpy(out->mutable_raw_data(), scores->raw_data(), scores->nbytes());
    const int64_t batch = ids->dim(0), length = ids->dim(1), vocab = scores->dim(1);
    if (length + 1 < n_) return Status::Ok();
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t* row = ids->data<int64_t>() + b * length;
      const int64_t* prefix = row + length - (n_ - 1);  // the n - 1 tokens the next one would follow
      for (int64_t i = 0; i + n_ <= length; ++i) {
        if (!std::equal(prefix, prefix + n_ - 1, row + i)) continue;
        const int64_t token = row[i + n_ - 1];
        if (token < 0 || token >= vocab) {
          return InvalidArgument("input 'input_ids' holds token " + std::to_string(token) +
                                 ", outside the vocabulary of 'scores' [0, " + std::to_string(vocab) + ")");
        }
        out->mutable_data<float>()[b * vocab + token] = -std::numeric_limits<float>::infinity();
      }
    }
    return Status::Ok();
  }

 private:
  explicit NGramRepeatBlock(int64_t n) : n_(n) {}
  const int64_t n_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterNGramRepeatBlock(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "NGramRepeatBlock", 1, kOpenEnded, Make<NGramRepeatBlock>());
}

}  // namespace onnxflow
