// com.microsoft DecoderMaskedMultiHeadAttention against ONNX Runtime 1.30 on the seeded cases of
// tools/gen_models/gen_sparse_attention.py (testdata/DecoderMaskedMultiHeadAttention/<case>: one
// node, its inputs and ONNX Runtime's outputs): steps over a shared-buffer cache, with bias, mask,
// attention_bias and qk, beam search's cache indirection, cross-attention; packed QKV (which ONNX
// Runtime's CPU kernel fails on) against the unpacked run; the cache written in place; refusals.
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/case_folder.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/testing.h"
#include "ops/register_all.h"
#include "proto/onnx.pb.h"

namespace onnxflow {
namespace {

const char kData[] = "ops/contrib/testdata/DecoderMaskedMultiHeadAttention/";

// A case: its node's attributes, inputs by node input (undefined where absent), ONNX Runtime's
// outputs by node output index (undefined where absent).
using Case = NodeCase;

Case Load(const std::string& name) { return LoadNodeCase(kData + name); }

// Tolerances: the products sum in another order (and the core's exp is within 2 ulp of expf), so
// the output and qk agree to a few float ulps (1e-5 abs, 1e-4 rel); the presents are copies plus
// the biased new row, exact.
void ExpectOrt(const Case& c, const std::vector<Value>& out) {
  ASSERT_EQ(out.size(), c.expected.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (!c.expected[i].defined()) continue;
    const std::string what = c.dir + " output " + std::to_string(i);
    ASSERT_TRUE(out[i].is_tensor()) << what;
    if (i == 1 || i == 2) {
      EXPECT_TRUE(CaseTensorNear(what, c.expected[i], out[i].tensor(), 0, 0));
    } else {
      EXPECT_TRUE(CaseTensorNear(what, c.expected[i], out[i].tensor(), 1e-4, 1e-5));
    }
  }
}

const char* kCases[] = {"self", "bias_mask_qk", "broadcast_bias", "beams", "beams_qkv_bias", "cross"};

class DecoderMaskedMhaOrt : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(DecoderMaskedMhaOrt, MatchesOnnxRuntime) {
  const auto [name, threads] = GetParam();
  Case c = Load(name);
  OpTest t = NodeTest(c);
  t.Threads(threads);
  auto out = t.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectOrt(c, *out);
}

INSTANTIATE_TEST_SUITE_P(Cases, DecoderMaskedMhaOrt, ::testing::Combine(::testing::ValuesIn(kCases), ::testing::Values(1, 2)));

// A past that only this step reads (a decoding loop's own present) is written in place: the
// present is its storage, with ONNX Runtime's values, and nothing else is copied.
TEST(DecoderMaskedMha, WritesTheCacheInPlace) {
  for (const char* name : {"self", "beams"}) {
    SCOPED_TRACE(name);
    Case c = Load(name);
    OpTest t = NodeTest(c);
    t.ReusableInput(5).ReusableInput(6);
    auto out = t.Run(RegisterAllKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(t.WroteInto(5, 1));
    EXPECT_TRUE(t.WroteInto(6, 2));
    ExpectOrt(c, *out);
  }
  Case c = Load("self");
  OpTest t = NodeTest(c);
  ASSERT_TRUE(t.Run(RegisterAllKernels).ok());
  EXPECT_FALSE(t.WroteInto(5, 1)) << "a past the caller holds is never written";
}

// Packed QKV (B, 1, 3D): the same step as query, key and value given apart, bias included.
// (ONNX Runtime 1.30's CPU kernel fails on packed QKV, so its unpacked run is the reference.)
TEST(DecoderMaskedMha, PackedQkvIsTheUnpackedStep) {
  for (const char* name : {"self", "broadcast_bias"}) {
    SCOPED_TRACE(name);
    Case c = Load(name);
    const Tensor &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2];
    const int64_t batch = q.dim(0), d = q.dim(2);
    std::vector<float> packed;
    for (int64_t b = 0; b < batch; ++b) {
      for (const Tensor* t : {&q, &k, &v}) packed.insert(packed.end(), t->data<float>() + b * d, t->data<float>() + (b + 1) * d);
    }
    std::vector<Tensor> inputs = c.inputs;
    inputs[0] = Tensor::FromVector<float>({batch, 1, 3 * d}, packed);
    inputs[1] = inputs[2] = Tensor();
    auto out = NodeTest(c, inputs).Run(RegisterAllKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectOrt(c, *out);
  }
}

// The first step over an empty cache (past_sequence_length 0) attends to its own key alone: the
// output is the new value plus its bias, and row 0 of the cache takes the key and value. (ONNX
// Runtime 1.30 reads a 0 as "no length given" and attends over the whole buffer, so this is checked
// by hand.)
TEST(DecoderMaskedMha, FirstStepReadsItsOwnKey) {
  Case c = Load("bias_mask_qk");  // B 2, N 2, H 8, cache 7; its bias, without mask or attention_bias
  std::vector<Tensor> inputs = c.inputs;
  inputs[3] = inputs[4] = Tensor();
  inputs[7] = Tensor::FromVector<int32_t>({1}, {0});
  c.node.set_output(3, "");
  for (auto& a : *c.node.mutable_attribute()) {
    if (a.name() == "output_qk") a.set_i(0);
  }
  auto out = NodeTest(c, inputs).Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor &k = inputs[1], &v = inputs[2], &bias = inputs[10];
  const int64_t batch = 2, d = 16, hs = 8, max = 7;
  std::vector<float> y(batch * d);
  Tensor pk = inputs[5].Clone(), pv = inputs[6].Clone();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < d; ++i) {
      y[b * d + i] = v.data<float>()[b * d + i] + bias.data<float>()[2 * d + i];
      const int64_t h = i / hs, at = ((b * 2 + h) * max) * hs + i % hs;
      pk.mutable_data<float>()[at] = k.data<float>()[b * d + i] + bias.data<float>()[d + i];
      pv.mutable_data<float>()[at] = y[b * d + i];
    }
  }
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({batch, 1, d}, y), (*out)[0].tensor(), 1e-6, 1e-6));
  EXPECT_TRUE(TensorsEqual(pk, (*out)[1].tensor()));
  EXPECT_TRUE(TensorsEqual(pv, (*out)[2].tensor()));
}

// ---------------------------------------------------------------------------------------------
// Refusals, each naming the input or attribute at fault.

Status RunChanged(const char* name, const std::function<void(Case&)>& change) {
  Case c = Load(name);
  change(c);
  return NodeTest(c).Run(RegisterAllKernels).status();
}

void SetInt(Case& c, const std::string& name, int64_t v) { SetAttribute(c.node, name, v); }

TEST(DecoderMaskedMha, RefusesMalformedInputs) {
  const auto bad = StatusCode::kInvalidArgument;
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { c.inputs[0] = Tensor::FromVector<float>({2, 2, 8}, std::vector<float>(32)); }),
                      bad, "one decoding step"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { c.inputs[7] = Tensor::FromVector<int32_t>({1}, {6}); }), bad,
                      "past_sequence_length 6 leaves no row"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { c.inputs[7] = Tensor::FromVector<int32_t>({1}, {-1}); }), bad,
                      "past_sequence_length -1"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { c.inputs[5] = Tensor::FromVector<float>({1}, {0.0f}); }), bad,
                      "past_key and past_value must be float"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { c.inputs[2] = Tensor(); }), bad, "key and value must be both given"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) {
                        c.inputs[0] = Tensor::FromVector<double>({2, 1, 16}, std::vector<double>(32));
                      }),
                      bad, "query must be float"));
  EXPECT_TRUE(Refused(RunChanged("bias_mask_qk", [](Case& c) {
                        c.inputs[3] = Tensor::FromVector<int32_t>({2, 1, 6}, std::vector<int32_t>(12, 1));
                      }),
                      bad, "mask_index must be int32 (2, 6)"));
  EXPECT_TRUE(Refused(RunChanged("bias_mask_qk", [](Case& c) {
                        c.inputs[4] = Tensor::FromVector<float>({2, 3, 1, 6}, std::vector<float>(36));
                      }),
                      bad, "attention_bias must be float (2 or 1, 2 or 1, 1, 6)"));
  EXPECT_TRUE(Refused(RunChanged("bias_mask_qk", [](Case& c) { c.inputs[10] = Tensor::FromVector<float>({3}, {1, 2, 3}); }),
                      bad, "bias must be float (48)"));
  // Beam search: an index that names no beam, a width without the table, a table of another shape.
  EXPECT_TRUE(Refused(RunChanged("beams", [](Case& c) {
                        Tensor t = c.inputs[9].Clone();
                        t.mutable_data<int32_t>()[8 + 2] = 2;
                        c.inputs[9] = t;
                      }),
                      bad, "cache_indirection[1, 2] = 2 is not a beam of 2"));
  EXPECT_TRUE(Refused(RunChanged("beams", [](Case& c) { c.inputs[9] = Tensor(); }), bad, "beam_width > 1 needs cache_indirection"));
  // ONNX Runtime 1.30 reads an attention_bias with a batch dimension at the wrong rows on the beam
  // path: refused by name rather than computed some other way.
  EXPECT_TRUE(Refused(RunChanged("beams", [](Case& c) {
                        c.inputs[4] = Tensor::FromVector<float>({4, 2, 1, 7}, std::vector<float>(56));
                      }),
                      StatusCode::kUnimplemented, "cache_indirection and an attention_bias of batch 4"));
  EXPECT_TRUE(Refused(RunChanged("beams", [](Case& c) { c.inputs[8] = Tensor::FromVector<int32_t>({1}, {4}); }), bad,
                      "cache_indirection must be int32 (1, beam_width 4, 8)"));
  // Cross-attention: keys not in (B, N, L, H), and attention_bias (which ONNX Runtime refuses too).
  EXPECT_TRUE(Refused(RunChanged("cross", [](Case& c) {
                        c.inputs[1] = c.inputs[2] = Tensor::FromVector<float>({2, 1, 16}, std::vector<float>(32));
                      }),
                      bad, "cross-attention key and value must be float (2, 2, L, 8)"));
  EXPECT_TRUE(Refused(RunChanged("cross", [](Case& c) {
                        c.inputs[4] = Tensor::FromVector<float>({1, 1, 1, 5}, std::vector<float>(5));
                      }),
                      bad, "attention_bias is not supported in cross-attention"));
}

TEST(DecoderMaskedMha, RefusesUnsupportedNodes) {
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { SetInt(c, "past_present_share_buffer", 0); }),
                      StatusCode::kUnimplemented, "past_present_share_buffer=0"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { SetInt(c, "do_rotary", 1); }), StatusCode::kUnimplemented,
                      "do_rotary=1"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { SetInt(c, "num_heads", 0); }), StatusCode::kInvalidArgument,
                      "num_heads must be positive"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { c.node.set_output(2, ""); }), StatusCode::kInvalidArgument,
                      "past_key, past_value, present_key and present_value go together"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { c.inputs[7] = Tensor(); }), StatusCode::kInvalidArgument,
                      "past_sequence_length is required"));
  EXPECT_TRUE(Refused(RunChanged("self", [](Case& c) { SetInt(c, "output_qk", 1); }), StatusCode::kInvalidArgument,
                      "output_qk=1 needs the 'qk' output"));
}

}  // namespace
}  // namespace onnxflow
