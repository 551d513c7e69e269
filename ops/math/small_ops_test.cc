// Det, Einsum, Col2Im, CausalConvWithState and DeformConv on hand-computed values and against
// the ops they generalize (DeformConv with zero offsets is Conv), plus error paths.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

Result<std::vector<Value>> RunOne(OpTest& t) { return t.Run(RegisterMathKernels); }

TEST(DetTest, HandValuesAndTypes) {
  OpTest t("Det", 22);
  // det [[1,2],[3,4]] = -2 ; det [[0,1,0],[1,0,0],[0,0,5]] needs a pivot swap: -5 (batch of 2x2 and 3x3 separately)
  t.Input(Tensor::FromVector<float>({2, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 3}));
  auto out = RunOne(t);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2}, {-2, 6}), (*out)[0].tensor()));
  OpTest p("Det", 11);
  p.Input(Tensor::FromVector<double>({3, 3}, {0, 1, 0, 1, 0, 0, 0, 0, 5}));
  out = RunOne(p);
  ASSERT_TRUE(out.ok());
  EXPECT_DOUBLE_EQ((*out)[0].tensor().data<double>()[0], -5.0);
  OpTest h("Det", 22);
  h.Input(Tensor::FromVector<Float16>({2, 2}, {Float16{FloatToHalf(2)}, Float16{0}, Float16{0}, Float16{FloatToHalf(3)}}));
  out = RunOne(h);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(HalfToFloat((*out)[0].tensor().data<Float16>()[0].bits), 6.0f);
  OpTest bad("Det", 22);
  bad.Input(Tensor(DataType::kFloat, {2, 3}));
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "Det: input [2,3] must end in square matrices"));
}

TEST(EinsumTest, Forms) {
  const auto a = Random(6, 1), b = Random(12, 2);
  // Explicit matmul.
  OpTest mm("Einsum", 12);
  mm.Input(Tensor::FromVector<float>({2, 3}, a)).Input(Tensor::FromVector<float>({3, 4}, b)).Attr("equation", std::string("ij,jk->ik"));
  auto out = RunOne(mm);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> expected(8, 0.0f);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 3; ++j) expected[i * 4 + k] += a[i * 3 + j] * b[j * 4 + k];
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 4}, expected), (*out)[0].tensor()));
  // Implicit output: "ij,jk" -> "ik" as well.
  OpTest im("Einsum", 12);
  im.Input(Tensor::FromVector<float>({2, 3}, a)).Input(Tensor::FromVector<float>({3, 4}, b)).Attr("equation", std::string("ij,jk"));
  out = RunOne(im);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 4}, expected), (*out)[0].tensor()));
  // Trace of a matrix (repeated label) and transpose via ellipsis, on int64.
  OpTest tr("Einsum", 12);
  tr.Input(Tensor::FromVector<int64_t>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})).Attr("equation", std::string("ii->"));
  out = RunOne(tr);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().data<int64_t>()[0], 15);
  OpTest el("Einsum", 12);
  el.Input(Tensor::FromVector<int64_t>({1, 2, 3}, {1, 2, 3, 4, 5, 6})).Attr("equation", std::string("...ij->...ji"));
  out = RunOne(el);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({1, 3, 2}, {1, 4, 2, 5, 3, 6}), (*out)[0].tensor()));
  OpTest bad("Einsum", 12);
  bad.Input(Tensor(DataType::kFloat, {2, 3})).Input(Tensor(DataType::kFloat, {4, 4})).Attr("equation", std::string("ij,jk->ik"));
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "Einsum: input 1 [4,4] gives label 'j' size 4, another input 3"));
}

// Equations and operands a hostile model brings: each refused by name, or given its defined answer.
TEST(EinsumTest, HostileEquations) {
  // An output label twice made the GEMM read A as [M * M, K], past its end.
  OpTest twice("Einsum", 12);
  twice.Input(Tensor(DataType::kFloat, {2, 3})).Input(Tensor(DataType::kFloat, {3, 4}))
      .Attr("equation", std::string("ij,jk->iik"));
  EXPECT_TRUE(Refused(RunOne(twice), StatusCode::kInvalidArgument, "Einsum: attribute 'equation' ('ij,jk->iik') names output label 'i' more than once"));
  OpTest diagonal("Einsum", 12);
  diagonal.Input(Tensor(DataType::kFloat, {1, 3})).Attr("equation", std::string("ii->i"));
  EXPECT_TRUE(Refused(RunOne(diagonal), StatusCode::kInvalidArgument, "Einsum: input 0 [1,3] repeats label 'i' over axes of different sizes"));
  // 2^40 steps of the direct loop: refused rather than run for hours.
  OpTest long_loop("Einsum", 12);
  long_loop.Input(Tensor(DataType::kFloat, Shape(10, 4))).Input(Tensor(DataType::kFloat, Shape(10, 4)))
      .Attr("equation", std::string("abcdefghij,klmnopqrst->"));
  EXPECT_TRUE(Refused(RunOne(long_loop), StatusCode::kResourceExhausted, "more than the direct loop's limit"));
  // Integer products wrap as two's complement: INT64_MAX * 2 + INT64_MAX * 2 = -4.
  OpTest wrap("Einsum", 12);
  wrap.Input(Tensor::FromVector<int64_t>({2}, {INT64_MAX, INT64_MAX})).Input(Tensor::FromVector<int64_t>({2}, {2, 2}))
      .Attr("equation", std::string("i,i->"));
  auto out = RunOne(wrap);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().data<int64_t>()[0], -4);
  // A summed label of size 0 leaves zeros (direct loop: int32 takes it).
  OpTest empty_sum("Einsum", 12);
  empty_sum.Input(Tensor(DataType::kInt32, {2, 0})).Input(Tensor(DataType::kInt32, {0, 3}))
      .Attr("equation", std::string("ij,jk->ik"));
  out = RunOne(empty_sum);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 3}, std::vector<int32_t>(6, 0)), (*out)[0].tensor()));
}

// Two float operands whose labels are batch, M, N or K run on the GEMM: each equation against the
// same one on double operands, which take the direct loop. Operands in GEMM order, transposed,
// permuted, an output in another order, an ellipsis, a dot and an outer product, a batch split over
// two cores; and forms that stay on the loop (a label summed in one operand, a broadcast batch).
TEST(EinsumTest, ContractionsOnTheGemmMatchTheLoop) {
  struct Case {
    const char* equation;
    Shape a, b;
  };
  const Case cases[] = {
      {"bhqd,bhkd->bhqk", {2, 3, 5, 8}, {2, 3, 6, 8}},  // B transposed
      {"bhqk,bhkd->bhqd", {2, 3, 5, 6}, {2, 3, 6, 8}},  // plain batched product
      {"ji,jk->ik", {7, 4}, {7, 9}},                    // A transposed
      {"bnd,dh->bnh", {3, 5, 16}, {16, 12}},             // a weight shared by the batch
      {"abc,cd->dab", {2, 3, 4}, {4, 5}},                // the output permuted
      {"bqhd,bkhd->bhqk", {2, 5, 3, 8}, {2, 6, 3, 8}},   // operands permuted first
      {"...ij,...jk->...ik", {2, 3, 4, 5}, {2, 3, 5, 6}},
      {"i,i->", {9}, {9}},
      {"i,j->ij", {4}, {5}},
      {"bij,bjk->bik", {16, 9, 7}, {16, 7, 11}},         // 16 small products, one per core
      {"ij,jk->i", {3, 4}, {4, 5}},                      // k summed in the second operand alone
      {"bij,bjk->bik", {1, 3, 4}, {2, 4, 5}},            // a batch of 1 broadcast
  };
  for (const Case& c : cases) {
    const auto a = Random(ElementCount(c.a), 3), b = Random(ElementCount(c.b), 4);
    OpTest f("Einsum", 12), d("Einsum", 12);
    f.Input(Tensor::FromVector<float>(c.a, a)).Input(Tensor::FromVector<float>(c.b, b)).Attr("equation", std::string(c.equation));
    f.Threads(2);
    std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
    d.Input(Tensor::FromVector<double>(c.a, ad)).Input(Tensor::FromVector<double>(c.b, bd)).Attr("equation", std::string(c.equation));
    auto got = RunOne(f);
    auto want = RunOne(d);
    ASSERT_TRUE(got.ok() && want.ok()) << c.equation << ": " << got.status().ToString() << want.status().ToString();
    const Tensor& w = (*want)[0].tensor();
    std::vector<float> wf(w.data<double>(), w.data<double>() + w.size());
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(w.shape(), wf), (*got)[0].tensor(), 1e-5, 1e-5)) << c.equation;
  }
}

TEST(Col2ImTest, SumsOverlaps) {
  // 1 channel, image 1x3, block 1x2, stride 1: columns [a b] at positions 0 and 1 -> [a0, b0 + a1, b1].
  OpTest t("Col2Im", 18);
  t.Input(Tensor::FromVector<float>({1, 2, 2}, {1, 2, 10, 20})).Input(Tensor::FromVector<int64_t>({2}, {1, 3}))
      .Input(Tensor::FromVector<int64_t>({2}, {1, 2}));
  auto out = RunOne(t);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 1, 3}, {1, 12, 20}), (*out)[0].tensor()));
  OpTest bad("Col2Im", 18);
  bad.Input(Tensor(DataType::kFloat, {1, 2, 5})).Input(Tensor::FromVector<int64_t>({2}, {1, 3}))
      .Input(Tensor::FromVector<int64_t>({2}, {1, 2}));
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "Col2Im: input [1,2,5] does not match 2 blocks of 2"));
  // Hostile sizes: a block product, a dilated block, a padded axis and a block count past INT64_MAX
  // (each wrapped, signed), and negative pads.
  const int64_t t40 = int64_t{1} << 40;
  struct Hostile {
    std::vector<int64_t> image, block, dilations, pads;
    const char* error;
  };
  const Hostile cases[] = {
      {{1, 3}, {t40, t40}, {}, {}, "Col2Im: block_shape [1099511627776,1099511627776], dilations and pads make axis 1"},
      {{1, 3}, {1, 3}, {1, int64_t{1} << 62}, {}, "Col2Im: block_shape [1,3], dilations and pads make axis 1"},
      {{1, 3}, {1, 2}, {}, {0, INT64_MAX, 0, 1}, "Col2Im: block_shape [1,2], dilations and pads make axis 1"},
      {{t40, t40}, {1, 1}, {}, {}, "Col2Im: image_shape [1099511627776,1099511627776] holds more blocks than any tensor"},
      {{1, 3}, {1, 2}, {}, {0, -1, 0, 0}, "Col2Im: block_shape, dilations and strides must be positive, image_shape and pads not negative (axis 1)"},
  };
  for (const Hostile& h : cases) {
    OpTest hostile("Col2Im", 18);
    hostile.Input(Tensor(DataType::kFloat, {1, 2, 2})).Input(Tensor::FromVector<int64_t>({2}, h.image))
        .Input(Tensor::FromVector<int64_t>({2}, h.block));
    if (!h.dilations.empty()) hostile.Attr("dilations", h.dilations);
    if (!h.pads.empty()) hostile.Attr("pads", h.pads);
    EXPECT_TRUE(Refused(RunOne(hostile), StatusCode::kInvalidArgument, h.error)) << h.error;
  }
}

TEST(CausalConvTest, StateCarriesAcrossCalls) {
  // k = 3, weights [1, 2, 3]; past [4, 5]; input [6]: out = 1*4 + 2*5 + 3*6 = 32; present = [5, 6].
  OpTest t("CausalConvWithState", 27);
  t.Input(Tensor::FromVector<float>({1, 1, 1}, {6})).Input(Tensor::FromVector<float>({1, 1, 3}, {1, 2, 3}))
      .AbsentInput().Input(Tensor::FromVector<float>({1, 1, 2}, {4, 5})).Outputs(2);
  auto out = RunOne(t);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 1}, {32}), (*out)[0].tensor()));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 1, 2}, {5, 6}), (*out)[1].tensor()));
  OpTest s("CausalConvWithState", 27);  // silu, bias, no past: out = silu(3*1 + 1)
  s.Input(Tensor::FromVector<float>({1, 1, 1}, {1})).Input(Tensor::FromVector<float>({1, 1, 3}, {1, 2, 3}))
      .Input(Tensor::FromVector<float>({1}, {1})).Attr("activation", std::string("silu")).Outputs(2);
  out = RunOne(s);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NEAR((*out)[0].tensor().data<float>()[0], 4.0f / (1.0f + std::exp(-4.0f)), 1e-6);
  OpTest bad("CausalConvWithState", 27);
  bad.Input(Tensor(DataType::kFloat, {1, 2, 4})).Input(Tensor(DataType::kFloat, {2, 1, 3}))
      .AbsentInput().Input(Tensor(DataType::kFloat, {1, 2, 3})).Outputs(2);
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "CausalConvWithState: past_state [1,2,3] must be [1,2,2]"));
}

TEST(DeformConvTest, ZeroOffsetsIsConvAndHalfPixelShift) {
  const Shape xs = {1, 2, 5, 5}, ws = {3, 2, 3, 3};
  const auto x = Random(50, 1), w = Random(54, 2), b = Random(3, 3);
  OpTest conv("Conv", 22);
  conv.Input(Tensor::FromVector<float>(xs, x)).Input(Tensor::FromVector<float>(ws, w)).Input(Tensor::FromVector<float>({3}, b))
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto expected = RunOne(conv);
  ASSERT_TRUE(expected.ok());
  OpTest dc("DeformConv", 22);
  dc.Input(Tensor::FromVector<float>(xs, x)).Input(Tensor::FromVector<float>(ws, w))
      .Input(Tensor(DataType::kFloat, {1, 18, 5, 5})).Input(Tensor::FromVector<float>({3}, b))
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto out = RunOne(dc);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear((*expected)[0].tensor(), (*out)[0].tensor(), 1e-5, 1e-5));
  // 1x1 kernel, offset +0.5 in w: the average of two neighbours, masked by 0.5; past the edge reads 0.
  OpTest half("DeformConv", 19);
  half.Input(Tensor::FromVector<double>({1, 1, 1, 2}, {2, 4})).Input(Tensor::FromVector<double>({1, 1, 1, 1}, {1}))
      .Input(Tensor::FromVector<double>({1, 2, 1, 2}, {0, 0, 0.5, 0.5})).AbsentInput()
      .Input(Tensor::FromVector<double>({1, 1, 1, 2}, {0.5, 0.5}));
  out = RunOne(half);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<double>({1, 1, 1, 2}, {1.5, 1.0}), (*out)[0].tensor()));
  OpTest bad("DeformConv", 22);
  bad.Input(Tensor(DataType::kFloat, {1, 1, 3, 3})).Input(Tensor(DataType::kFloat, {1, 1, 1, 1}))
      .Input(Tensor(DataType::kFloat, {1, 4, 3, 3}));
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "DeformConv: offset [1,4,3,3] should be [1,2,3,3]"));
  // An offset_group of 2^62 over no channels at all: refused before it sizes the offsets (wrapped).
  OpTest groups("DeformConv", 22);
  groups.Input(Tensor(DataType::kFloat, {1, 0, 3, 3})).Input(Tensor(DataType::kFloat, {1, 0, 1, 1}))
      .Input(Tensor(DataType::kFloat, {1, 2, 3, 3})).Attr("offset_group", int64_t{1} << 62);
  EXPECT_TRUE(Refused(RunOne(groups), StatusCode::kInvalidArgument, "DeformConv: channels not divisible by offset_group"));
}

}  // namespace
}  // namespace onnxflow
