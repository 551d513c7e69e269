// com.microsoft SparseAttention against ONNX Runtime 1.30 on the seeded cases of
// tools/gen_models/gen_sparse_attention.py (testdata/SparseAttention/<case>: one node, its inputs
// and ONNX Runtime's outputs, its past and present sharing one buffer), against a scalar reference
// on a hand-built layout, the cache written in place, and the refusals.
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/case_folder.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/register_all.h"
#include "proto/onnx.pb.h"

namespace onnxflow {
namespace {

const char kData[] = "ops/contrib/testdata/SparseAttention/";

// A case's node (its attributes, its inputs in place, absent ones undefined) and ONNX Runtime's
// outputs by node output index.
using Case = NodeCase;

Case Load(const std::string& name) { return LoadNodeCase(kData + name); }

// Tolerances against ONNX Runtime. float: the core sums in another order and its exp is within 2
// ulp, so outputs agree to a few float ulps of values around 1 (1e-5 abs); the presents are the
// same copies and rotations (1e-6). float16: ONNX Runtime rounds the rotated query and its
// softmax products to half, onnxflow computes in float and rounds once, so outputs differ by up to
// about two half ulps (4e-3 near 2); a rotated key rounded from a float one ulp away may round to
// the next half value (1e-3 relative).
void ExpectOrt(const Case& c, const std::vector<Value>& out) {
  const bool half = c.expected[0].dtype() == DataType::kFloat16;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(
      CaseTensorNear(c.dir + " output", c.expected[0], out[0].tensor(), half ? 4e-3 : 1e-4, half ? 4e-3 : 1e-5));
  for (int i = 1; i < 3; ++i) {
    EXPECT_TRUE(CaseTensorNear(c.dir + " present " + std::to_string(i), c.expected[i], out[i].tensor(),
                               half ? 1e-3 : 1e-6, half ? 1e-3 : 1e-6));
  }
}

const char* kCases[] = {"prompt_gqa",   "decode_rotary", "decode_packed_interleaved", "multi_token",
                        "layout_rules", "fp16_prompt_rotary", "fp16_decode_packed"};

// (case, threads, layout given as initializers: built at load rather than at each run)
class SparseAttentionOrt : public ::testing::TestWithParam<std::tuple<const char*, int, bool>> {};

TEST_P(SparseAttentionOrt, MatchesOnnxRuntime) {
  const auto [name, threads, constant] = GetParam();
  Case c = Load(name);
  OpTest t = NodeTest(c);
  t.Threads(threads);
  if (constant) t.ConstantInput(5).ConstantInput(6);
  auto out = t.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectOrt(c, *out);
  EXPECT_FALSE(t.WroteInto(3, 1)) << "a past the caller holds is never written";
}

INSTANTIATE_TEST_SUITE_P(Cases, SparseAttentionOrt,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::Values(1, 2),
                                            ::testing::Bool()));

// When the plan lets the node take the past over (a decoding loop feeding presents back), the
// step writes its rows into that buffer: the present is the past's storage, with ONNX Runtime's
// values.
TEST(SparseAttention, WritesTheCacheInPlace) {
  for (const char* name : {"decode_rotary", "fp16_decode_packed", "multi_token"}) {
    SCOPED_TRACE(name);
    Case c = Load(name);
    OpTest t = NodeTest(c);
    t.ReusableInput(3).ReusableInput(4);
    auto out = t.Run(RegisterAllKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(t.WroteInto(3, 1));
    EXPECT_TRUE(t.WroteInto(4, 2));
    ExpectOrt(c, *out);
  }
}

// A hand-built layout against a scalar reference: blocks of 2, 8 tokens, one head of 8; query
// block r sees the blocks listed for it (row 2 skips its own block: its queries see only block 0;
// row 3 sees blocks 1 and 3).
TEST(SparseAttention, LayoutMatchesScalarReference) {
  const int64_t S = 8, H = 8, block = 2;
  const std::vector<std::vector<int>> blocks = {{0}, {0, 1}, {0}, {1, 3}};
  std::vector<int32_t> rows = {0}, cols;
  for (const auto& r : blocks) {
    cols.insert(cols.end(), r.begin(), r.end());
    rows.push_back(static_cast<int32_t>(cols.size()));
  }
  std::vector<float> q(S * H), k(S * H), v(S * H);
  for (int64_t i = 0; i < S * H; ++i) {
    q[i] = std::sin(0.37f * i);
    k[i] = std::cos(0.23f * i);
    v[i] = 0.1f * static_cast<float>(i % 13) - 0.5f;
  }
  const float scale = 0.5f;
  std::vector<float> expected(S * H, 0.0f);
  for (int64_t i = 0; i < S; ++i) {
    std::vector<double> w(S, 0.0);
    double max = -1e300, sum = 0;
    auto visible = [&](int64_t j) {
      if (j > i) return false;
      for (int b : blocks[i / block]) if (j / block == b) return true;
      return false;
    };
    for (int64_t j = 0; j < S; ++j) {
      if (!visible(j)) continue;
      double s = 0;
      for (int64_t x = 0; x < H; ++x) s += static_cast<double>(q[i * H + x]) * k[j * H + x];
      w[j] = s * scale;
      max = std::max(max, w[j]);
    }
    for (int64_t j = 0; j < S; ++j) sum += visible(j) ? std::exp(w[j] - max) : 0.0;
    for (int64_t j = 0; j < S; ++j) {
      if (!visible(j)) continue;
      for (int64_t x = 0; x < H; ++x) expected[i * H + x] += static_cast<float>(std::exp(w[j] - max) / sum * v[j * H + x]);
    }
  }
  OpTest test("SparseAttention", 1, kMsDomain);
  test.Attr("num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Attr("sparse_block_size", block).Attr("scale", scale);
  test.Input(Tensor::FromVector<float>({1, S, H}, q))
      .Input(Tensor::FromVector<float>({1, S, H}, k))
      .Input(Tensor::FromVector<float>({1, S, H}, v))
      .Input(Tensor::FromVector<float>({1, 1, S, H}, std::vector<float>(S * H, 7.0f)))
      .Input(Tensor::FromVector<float>({1, 1, S, H}, std::vector<float>(S * H, 7.0f)))
      .Input(Tensor::FromVector<int32_t>({1, 5}, rows))
      .Input(Tensor::FromVector<int32_t>({1, static_cast<int64_t>(cols.size())}, cols))
      .Input(Tensor::FromVector<int32_t>({1}, {static_cast<int32_t>(S)}))
      .Input(Tensor::FromVector<int32_t>({1}, {static_cast<int32_t>(S)}))
      .Outputs(3);
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, S, H}, expected), (*out)[0].tensor(), 1e-5, 1e-6));
  // The prompt's keys fill the whole cache, so the present holds exactly k and v.
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, S, H}, k), (*out)[1].tensor()));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, S, H}, v), (*out)[2].tensor()));
}

// ---------------------------------------------------------------------------------------------
// Refusals: each names the input or attribute at fault.

// A decode_rotary node with input i replaced (or an attribute changed) runs to a refusal.
Status RunChanged(const std::function<void(Case&)>& change, const char* name = "decode_rotary") {
  Case c = Load(name);
  change(c);
  return NodeTest(c).Run(RegisterAllKernels).status();
}

void SetInt(Case& c, const std::string& name, int64_t v) { SetAttribute(c.node, name, v); }

TEST(SparseAttention, RefusesMalformedInputs) {
  // Layouts: a column outside the blocks, rows that fall, layouts that do not divide the heads.
  EXPECT_TRUE(Refused(RunChanged([](Case& c) {
                        Tensor cols = c.inputs[6].Clone();
                        cols.mutable_data<int32_t>()[0] = 99;
                        c.inputs[6] = cols;
                      }),
                      StatusCode::kInvalidArgument, "block_col_indices[0, 0] = 99"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) {
                        Tensor rows = c.inputs[5].Clone();
                        rows.mutable_data<int32_t>()[2] = -1;
                        c.inputs[5] = rows;
                      }),
                      StatusCode::kInvalidArgument, "block_row_indices of layout 0 must rise"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) {
                        c.inputs[5] = Tensor::FromVector<int32_t>({3, 2}, {0, 1, 0, 1, 0, 1});
                        c.inputs[6] = Tensor::FromVector<int32_t>({3, 1}, {0, 0, 0});
                      }),
                      StatusCode::kInvalidArgument, "num_heads (4) divisible by num_layout"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) {
                        c.inputs[5] = Tensor::FromVector<int32_t>({1, 100000}, std::vector<int32_t>(100000, 0));
                      }),
                      StatusCode::kInvalidArgument, "makes a block layout of more than"));
  // The layout covers fewer tokens than total_sequence_length.
  EXPECT_TRUE(Refused(RunChanged([](Case& c) {
                        c.inputs[5] = Tensor::FromVector<int32_t>({1, 3}, {0, 1, 3});
                        c.inputs[6] = Tensor::FromVector<int32_t>({1, 3}, {0, 0, 1});
                      }),
                      StatusCode::kInvalidArgument, "past the layout's 8 tokens"));
  // Key lengths beyond total_sequence_length, and a total beyond the cache.
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { c.inputs[8] = Tensor::FromVector<int32_t>({2}, {9, 14}); }),
                      StatusCode::kInvalidArgument, "key_total_sequence_lengths[1] = 14"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { c.inputs[8] = Tensor::FromVector<int32_t>({1}, {9}); }),
                      StatusCode::kInvalidArgument, "key_total_sequence_lengths must be int32 (2)"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { c.inputs[7] = Tensor::FromVector<int32_t>({1}, {15}); }),
                      StatusCode::kInvalidArgument, "total_sequence_length 15 must lie in"));
  // Shapes and types.
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { c.inputs[3] = Tensor::FromVector<float>({1}, {0.0f}); }),
                      StatusCode::kInvalidArgument, "past_key and past_value must be"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { c.inputs[1] = Tensor(); }), StatusCode::kInvalidArgument,
                      "key and value must be both given"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { c.inputs[0] = Tensor::FromVector<double>({1, 1, 1}, {0.0}); }),
                      StatusCode::kInvalidArgument, "query must be float or float16"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { SetInt(c, "num_heads", 14); }, "fp16_decode_packed"),
                      StatusCode::kInvalidArgument, "head size must be a multiple of 8, got 4"));
  // Rotary: caches missing, or too narrow for its rules.
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { c.inputs[9] = Tensor(); }), StatusCode::kInvalidArgument,
                      "do_rotary needs cos_cache and sin_cache"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) {
                        c.inputs[9] = Tensor::FromVector<float>({14, 4}, std::vector<float>(56, 1.0f));
                        c.inputs[10] = c.inputs[9];
                      }),
                      StatusCode::kInvalidArgument, "cos_cache and sin_cache must be"));
}

TEST(SparseAttention, RefusesMalformedNodes) {
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { SetInt(c, "sparse_block_size", 0); }), StatusCode::kInvalidArgument,
                      "sparse_block_size must be positive"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { SetInt(c, "kv_num_heads", 3); }), StatusCode::kInvalidArgument,
                      "must be a positive multiple of kv_num_heads"));
  EXPECT_TRUE(Refused(RunChanged([](Case& c) { c.inputs[3] = Tensor(); }), StatusCode::kInvalidArgument,
                      "past_key and past_value are required"));
  // A bad constant layout is refused when the kernel is built.
  Case c = Load("prompt_gqa");
  Tensor cols = c.inputs[6].Clone();
  cols.mutable_data<int32_t>()[1] = -3;
  c.inputs[6] = cols;
  OpTest t = NodeTest(c);
  t.ConstantInput(5).ConstantInput(6);
  EXPECT_TRUE(Refused(t.Run(RegisterAllKernels), StatusCode::kInvalidArgument, "block_col_indices[0, 1] = -3"));
}

}  // namespace
}  // namespace onnxflow
