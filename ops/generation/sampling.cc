// com.microsoft Sampling: the greedy loop (greedy_loop.h) drawing each row's token from its
// processed, top-p filtered scores (top_p_sampler.h), as ONNX Runtime's CPU kernel does
// (contrib_ops/cpu/transformers/sampling.cc through greedy_search_impl_gpt.h; sampling_parameters.cc,
// logits_processor.h, sampling_cpu_helper.h). After GreedySearch's score rules come the temperature
// (when above 0 and not 1) and the presence penalty (logits.h says what ONNX Runtime's does).
//
// Inputs: input_ids, max_length, min_length, repetition_penalty, vocab_mask, prefix_vocab_mask,
// attention_mask, presence_mask [batch, vocab] (int32), seed (int32, >= 0; absent means 0, which
// draws as 1 does). Output: sequences [batch, max_length] (int32).
//
// Refused, by name: model_type other than 0 (ONNX Runtime's Sampling enforces it); the output
// filtered_logits (ONNX Runtime 1.30's CPU kernel writes it only in DEBUG_GENERATION builds, and
// then from a buffer only its CUDA path fills; its release build crashes when it is requested);
// top_p <= 0, the attribute's default (ONNX Runtime then keeps only the tokens whose running float
// sum of probabilities rounds above 1: which ones is down to its softmax's last bits);
// min_tokens_to_keep outside [0, vocabulary] (ONNX Runtime reads outside the row).
#include <cmath>
#include <limits>
#include <string>

#include "ops/framework/domains.h"
#include "ops/framework/registry.h"
#include "ops/generation/greedy_loop.h"
#include "ops/generation/top_p_sampler.h"

namespace onnxflow {
namespace {

using namespace generation;

class Sampling : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.has_output(1)) {
      return Unimplemented(
          "Sampling output 'filtered_logits' is not supported: ONNX Runtime's CPU kernel writes it only in debug "
          "builds (DEBUG_GENERATION), from a buffer its CPU path never fills");
    }
    if (info.output_count() > 2) {
      return InvalidArgument("Sampling has 2 outputs (sequences, filtered_logits), got " +
                             std::to_string(info.output_count()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(GreedyModel model, GreedyModel::Prepare(info, "Sampling", 9));
    TopPParams params;
    params.top_p = info.GetFloat("top_p", 0.0f);
    if (!(params.top_p > 0.0f)) {
      return Unimplemented("attribute 'top_p' is " + std::to_string(params.top_p) +
                           ": only top_p > 0 is supported (at 0, the default, ONNX Runtime keeps the tokens whose "
                           "float running sum of probabilities rounds above 1, which rests on its softmax's last bits)");
    }
    params.filter_value = info.GetFloat("filter_value", -std::numeric_limits<float>::infinity());
    if (std::isnan(params.filter_value)) return InvalidArgument("attribute 'filter_value' is NaN");
    const int64_t keep = info.GetInt("min_tokens_to_keep", 0);
    if (keep < 0 || keep > model.decoder.vocab()) {
      return InvalidArgument("attribute 'min_tokens_to_keep' is " + std::to_string(keep) + ", not in [0, " +
                             std::to_string(model.decoder.vocab()) + "] (the vocabulary size)");
    }
    params.min_tokens_to_keep = static_cast<int>(keep);
    const int64_t custom = info.GetInt("custom", 0);
    if (custom != 0 && custom != 1) return InvalidArgument("attribute 'custom' must be 0 or 1, got " + std::to_string(custom));
    params.custom = custom == 1;
    // ONNX Runtime adds its temperature processor only for a temperature above 0 (NaN: none).
    const float temperature = info.GetFloat("temperature", 1.0f);
    const float presence_penalty = info.GetFloat("presence_penalty", 0.0f);
    return std::unique_ptr<OpKernel>(
        new Sampling(std::move(model), params, temperature > 0.0f ? temperature : 1.0f, presence_penalty));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(GreedyRun run, ReadGreedyInputs(ctx, model_));
    const int vocab = model_.decoder.vocab();
    run.rules.temperature = temperature_;
    if (const Tensor* m = ctx.input_tensor(7)) {
      if (m->dtype() != DataType::kInt32 || m->shape() != Shape{run.batch, vocab}) {
        return InvalidArgument("input 'presence_mask' must be int32 [" + std::to_string(run.batch) + ", " +
                               std::to_string(vocab) + "] (batch, vocabulary), got " + DataTypeName(m->dtype()) + " " +
                               ShapeToString(m->shape()));
      }
      run.rules.presence_mask = m->data<int32_t>();
      run.rules.presence_penalty = presence_penalty_;
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const int seed, ScalarInt(ctx, 8, "seed", 0));
    if (seed < 0) return InvalidArgument("input 'seed' must be >= 0, got " + std::to_string(seed));
    TopPChooser chooser(params_, static_cast<uint32_t>(seed));
    return DecodeGreedy(ctx, model_, run, chooser);
  }

 private:
  Sampling(GreedyModel model, const TopPParams& params, float temperature, float presence_penalty)
      : model_(std::move(model)), params_(params), temperature_(temperature), presence_penalty_(presence_penalty) {}

  const GreedyModel model_;
  const TopPParams params_;
  const float temperature_;
  const float presence_penalty_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSampling(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "Sampling", 1, kOpenEnded, Make<Sampling>());
}

}  // namespace onnxflow
