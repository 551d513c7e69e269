// com.onnxflow FusedAttention: the written-out attention of a transformer's plain ONNX export,
//   softmax(scale * Q K^T + mask) V
// as graph/attention_fusion.cc finds it, run on RunAttention (attention_core.h): blocked over query
// rows, heads split over the cores, no (batch, heads, queries, keys) score tensor.
//
// Inputs: q (B, Sq, N, D), k (B, Sk, N, D), v (B, Sk, N, Dv), each the 4-D tensor the export
// reshaped its projection into (before its Transpose into heads, which the kernel reads through
// strides instead); B and N of each may be 1 (broadcast). With kv_layout "BNSD", k and v are
// (B, N, Sk, D) and (B, N, Sk, Dv): a decoder's key-value cache (past and new tokens), read in place;
// their N heads may each serve kv_repeat query heads (grouped-query attention: query head h reads
// head h / kv_repeat). With q_layout "BNSD", q is (B, N, Sq, D), or of lower rank broadcast over the
// leading dimensions as MatMul would. mask? is added to the scores, broadcast
// to (B, N, Sq, Sk) as numpy would (rank <= 4, each dimension 1 or the scores').
// Output: (B, Sq, N, Dv) when output_layout is "BSND" (the export's Transpose back was absorbed),
// else (B, N, Sq, Dv), the product of the probabilities and V itself. q, k, v and the output may
// each be float, float16 or bfloat16 (the output's type is output_type, else q's): 16-bit ones are
// widened and rounded one head at a time.
//
// With packed_heads N > 0, q, k and v come packed in input 0 (inputs 1 and 2 empty): the output of
// one projection of their common input (graph/qkv_merge.cc), rows of N * (2 D + Dv) with q's N heads
// of D first, then k's, then v's heads of Dv; the BSND layouts above, each row read at stride
// N * (2 D + Dv). Its rows are (B, S) as the export's Reshape into heads said: packed_batch and
// packed_seq are that Reshape's leading entries (0: the packed input's dimension 0 or 1; -1: what
// the rows leave; else the number), and must multiply to the number of rows.
#pragma once

#include <string>

#include "ops/framework/kernel_info.h"
#include "ops/framework/node_attributes.h"

namespace onnxflow {

struct FusedAttentionSpec {
  float scale = 1.0f;       // multiplies Q K^T before the mask is added
  bool output_bsnd = true;  // the output in (B, Sq, N, Dv), else (B, N, Sq, Dv)
  bool kv_bnsd = false;     // k and v in (B, N, Sk, D), else (B, Sk, N, D)
  bool q_bnsd = false;      // q in (B, N, Sq, D), else (B, Sq, N, D)
  int64_t kv_repeat = 1;    // query heads per head of k and v
  int64_t packed_heads = 0;  // N of a packed q, k, v input; 0: three inputs
  int64_t packed_head_size = 0, packed_v_head_size = 0;  // its D and Dv
  int64_t packed_batch = 0, packed_seq = 0;  // B and S as Reshape entries: 0 copies, -1 infers
  // The output's type where graph/blocked_half chose it (FLOAT, or FLOAT16 for a float16 model's
  // stored activations); 0: q's. Set by that pass, not by WriteTo.
  int64_t output_type = 0;

  void WriteTo(onnx::NodeProto& node) const {
    SetAttribute(node, "scale", scale);
    SetAttribute(node, "output_layout", std::string(output_bsnd ? "BSND" : "BNSD"));
    SetAttribute(node, "kv_layout", std::string(kv_bnsd ? "BNSD" : "BSND"));
    SetAttribute(node, "q_layout", std::string(q_bnsd ? "BNSD" : "BSND"));
    SetAttribute(node, "kv_repeat", kv_repeat);
    if (packed_heads > 0) {
      SetAttribute(node, "packed_heads", packed_heads);
      SetAttribute(node, "packed_head_size", packed_head_size);
      SetAttribute(node, "packed_v_head_size", packed_v_head_size);
      SetAttribute(node, "packed_batch", packed_batch);
      SetAttribute(node, "packed_seq", packed_seq);
    } else {
      for (const char* name :
           {"packed_heads", "packed_head_size", "packed_v_head_size", "packed_batch", "packed_seq"}) {
        RemoveAttribute(node, name);
      }
    }
  }

  static Result<FusedAttentionSpec> Parse(const KernelInfo& info) {
    FusedAttentionSpec spec;
    spec.scale = info.GetFloat("scale", 1.0f);
    const std::string layout = info.GetString("output_layout", "BSND");
    if (layout != "BSND" && layout != "BNSD") {
      return InvalidArgument("FusedAttention: output_layout must be BSND or BNSD, got '" + layout + "'");
    }
    spec.output_bsnd = layout == "BSND";
    const std::string kv = info.GetString("kv_layout", "BSND");
    if (kv != "BSND" && kv != "BNSD") return InvalidArgument("FusedAttention: kv_layout must be BSND or BNSD, got '" + kv + "'");
    spec.kv_bnsd = kv == "BNSD";
    const std::string q = info.GetString("q_layout", "BSND");
    if (q != "BSND" && q != "BNSD") return InvalidArgument("FusedAttention: q_layout must be BSND or BNSD, got '" + q + "'");
    spec.q_bnsd = q == "BNSD";
    spec.kv_repeat = info.GetInt("kv_repeat", 1);
    // At most 2^16 query heads per key-value head: no model has more, and the head count it is
    // multiplied into stays far from overflow.
    if (spec.kv_repeat < 1 || spec.kv_repeat > (int64_t{1} << 16)) {
      return InvalidArgument("FusedAttention: kv_repeat must be in [1, 65536], got " + std::to_string(spec.kv_repeat));
    }
    spec.packed_heads = info.GetInt("packed_heads", 0);
    spec.packed_head_size = info.GetInt("packed_head_size", 0);
    spec.packed_v_head_size = info.GetInt("packed_v_head_size", 0);
    spec.packed_batch = info.GetInt("packed_batch", 0);
    spec.packed_seq = info.GetInt("packed_seq", 0);
    // Each at most 2^16, so N * (2 D + Dv) stays far from overflow.
    auto in_range = [](int64_t x) { return x >= 1 && x <= (int64_t{1} << 16); };
    if (spec.packed_heads != 0 && (!in_range(spec.packed_heads) || !in_range(spec.packed_head_size) ||
                                   !in_range(spec.packed_v_head_size) || spec.kv_bnsd || spec.q_bnsd ||
                                   spec.kv_repeat != 1)) {
      return InvalidArgument("FusedAttention: a packed q, k, v needs packed_heads, packed_head_size and "
                             "packed_v_head_size in [1, 65536], BSND layouts and kv_repeat 1");
    }
    if (spec.packed_batch < -1 || spec.packed_seq < -1 || (spec.packed_batch == -1 && spec.packed_seq == -1)) {
      return InvalidArgument("FusedAttention: packed_batch and packed_seq are Reshape entries (0, -1 or a count; "
                             "one -1 at most), got " + std::to_string(spec.packed_batch) + " and " +
                             std::to_string(spec.packed_seq));
    }
    spec.output_type = info.GetInt("output_type", 0);
    if (spec.output_type != 0 && spec.output_type != 1 && spec.output_type != 10 && spec.output_type != 16) {
      return InvalidArgument("FusedAttention: output_type must be FLOAT (1), FLOAT16 (10) or BFLOAT16 (16), got " +
                             std::to_string(spec.output_type));
    }
    return spec;
  }
};

}  // namespace onnxflow
