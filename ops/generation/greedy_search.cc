// com.microsoft GreedySearch: the greedy loop (greedy_loop.h) choosing each row's arg-max token, as
// ONNX Runtime's CPU kernel does (greedy_search_impl_gpt.h, its TopK of 1: the first of equal maxima).
//
// Inputs: input_ids, max_length, min_length, repetition_penalty, vocab_mask, prefix_vocab_mask,
// attention_mask. Output: sequences [batch, max_length] (int32).
#include <algorithm>

#include "ops/framework/domains.h"
#include "ops/framework/registry.h"
#include "ops/generation/greedy_loop.h"

namespace onnxflow {
namespace {

using namespace generation;

class ArgMaxChooser : public TokenChooser {
 public:
  Status Choose(float* scores, int rows, int vocab, std::vector<int32_t>* tokens) override {
    for (int r = 0; r < rows; ++r) {
      const float* row = scores + static_cast<size_t>(r) * vocab;
      (*tokens)[r] = static_cast<int32_t>(std::max_element(row, row + vocab) - row);
    }
    return Status::Ok();
  }
};

class GreedySearch : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.input_count() > 7 || info.output_count() > 1) {
      return Unimplemented("GreedySearch takes at most 7 inputs (through attention_mask) and returns sequences only");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(GreedyModel model, GreedyModel::Prepare(info, "GreedySearch", 7));
    return std::unique_ptr<OpKernel>(new GreedySearch(std::move(model)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(GreedyRun run, ReadGreedyInputs(ctx, model_));
    ArgMaxChooser chooser;
    return DecodeGreedy(ctx, model_, run, chooser);
  }

 private:
  explicit GreedySearch(GreedyModel model) : model_(std::move(model)) {}

  const GreedyModel model_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterGreedySearch(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "GreedySearch", 1, kOpenEnded, Make<GreedySearch>());
}

}  // namespace onnxflow
