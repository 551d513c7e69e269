// What com.microsoft Attention and QAttention share once their QKV projection is done (in float
// or on the integer GEMM): the attributes, the split of the projection's width into Q, K and V,
// the key-value cache (past -> present), the mask and RunAttention (attention_core.h).
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"

namespace onnxflow {
namespace contrib {

struct SelfAttentionConfig {
  const char* op = "Attention";  // names the op in messages
  int64_t heads = 0;
  std::vector<int64_t> sizes;  // qkv_hidden_sizes, or empty: three equal widths
  float scale = 0.0f;          // 0: 1 / sqrt(head size)
  float mask_filter_value = -10000.0f;
  bool unidirectional = false;

  // num_heads, qkv_hidden_sizes, scale, mask_filter_value, unidirectional; refuses do_rotary and
  // past_present_share_buffer, as ONNX Runtime's CPU provider does.
  static Result<SelfAttentionConfig> Parse(const KernelInfo& info, const char* op);

  // The Q, K and V widths of a projection `width` wide.
  Status Split(int64_t width, int64_t* qh, int64_t* kh, int64_t* vh) const;

  // The projection: qkv (batch * seq rows of qh + kh + vh floats, bias added), the output's type
  // (float, float16 or bfloat16) and the optional inputs that follow it.
  struct Projected {
    const float* qkv = nullptr;
    int64_t batch = 0, seq = 0, qh = 0, kh = 0, vh = 0;
    DataType type = DataType::kFloat;
    const Tensor* past = nullptr;            // (2, batch, heads, past, head size)
    const Tensor* mask = nullptr;            // mask_index, int32
    const Tensor* attention_bias = nullptr;  // (batch or 1, heads or 1, seq, past + seq)
  };
  // Output 0 (batch, seq, vh) and, when asked for, output 1 present (2, batch, heads, past + seq,
  // head size).
  Status Attend(KernelContext& ctx, const Projected& in) const;
};

}  // namespace contrib
}  // namespace onnxflow
