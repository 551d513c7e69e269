// ConvTransposeWithDynamicPads: a hand-computed 1-D case, equality with ONNX ConvTranspose given the
// same pads as its attribute (the kernel it runs on), constant pads (built at load) against pads
// given at run, absent pads, and the refusals.
#include <gtest/gtest.h>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/ms_misc/register.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

Tensor F(Shape s, std::vector<float> v) { return Tensor::FromVector<float>(std::move(s), v); }
Tensor P(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>({n}, v);
}

Tensor Ramp(Shape s, float scale) {
  std::vector<float> v(static_cast<size_t>(ElementCount(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(static_cast<int>((i * 7) % 11) - 5);
  return F(std::move(s), v);
}

OpTest Dynamic(Tensor x, Tensor w, std::optional<Tensor> pads, std::optional<Tensor> b = std::nullopt) {
  OpTest t("ConvTransposeWithDynamicPads", 1, kMsDomain);
  t.Input(std::move(x)).Input(std::move(w));
  if (pads) {
    t.Input(std::move(*pads));
  } else if (b) {
    t.AbsentInput();
  }
  if (b) t.Input(std::move(*b));
  return t;
}

TEST(ConvTransposeWithDynamicPads, HandComputedOneD) {
  // x = (1, 2), w = (1, 10, 100), stride 1: full output (1, 12, 120, 200); pads (1, 0) drop the
  // first value; bias 0.5.
  auto out =
      Dynamic(F({1, 1, 2}, {1, 2}), F({1, 1, 3}, {1, 10, 100}), P({1, 0}), F({1}, {0.5f})).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({1, 1, 3}, {12.5f, 120.5f, 200.5f}), (*out)[0].tensor()));
}

TEST(ConvTransposeWithDynamicPads, MatchesConvTransposeWithThePadsAttribute) {
  const Tensor x = Ramp({2, 4, 5, 4}, 0.25f), w = Ramp({4, 3, 3, 2}, 0.5f), b = Ramp({6}, 0.1f);
  const std::vector<int64_t> pads = {1, 0, 2, 1};
  OpTest dynamic = Dynamic(x, w, P(pads), b);
  dynamic.Attr("strides", std::vector<int64_t>{2, 1})
      .Attr("dilations", std::vector<int64_t>{1, 2})
      .Attr("group", int64_t{2})
      .Attr("output_padding", std::vector<int64_t>{1, 0});
  OpTest onnx("ConvTranspose", 11);
  onnx.Input(x)
      .Input(w)
      .Input(b)
      .Attr("pads", pads)
      .Attr("strides", std::vector<int64_t>{2, 1})
      .Attr("dilations", std::vector<int64_t>{1, 2})
      .Attr("group", int64_t{2})
      .Attr("output_padding", std::vector<int64_t>{1, 0});
  auto got = dynamic.Run(RegisterMsMiscKernels);
  auto want = onnx.Run(RegisterConvTransposeKernels);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_TRUE(TensorsEqual((*want)[0].tensor(), (*got)[0].tensor()));
}

TEST(ConvTransposeWithDynamicPads, ConstantPadsAndWeightsMatchRunTimePads) {
  const Tensor x = Ramp({1, 3, 4, 4}, 0.5f), w = Ramp({3, 2, 3, 3}, 0.25f);
  auto runtime = Dynamic(x, w, P({0, 1, 1, 0})).Run(RegisterMsMiscKernels);
  OpTest constant = Dynamic(x, w, P({0, 1, 1, 0}));
  constant.ConstantInput(1).ConstantInput(2);
  auto loaded = constant.Run(RegisterMsMiscKernels);
  ASSERT_TRUE(runtime.ok()) << runtime.status().ToString();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*runtime)[0].tensor().shape(), (Shape{1, 2, 5, 5}));
  // The constant W is packed for the GEMM: the same sums, possibly another order of them.
  EXPECT_TRUE(TensorsNear((*runtime)[0].tensor(), (*loaded)[0].tensor(), 1e-6, 1e-6));
}

TEST(ConvTransposeWithDynamicPads, AbsentOrEmptyPadsAreZeros) {
  const Tensor x = Ramp({1, 1, 3, 3}, 1.0f), w = Ramp({1, 1, 2, 2}, 1.0f);
  auto zeros = Dynamic(x, w, P({0, 0, 0, 0})).Run(RegisterMsMiscKernels);
  auto absent = Dynamic(x, w, std::nullopt).Run(RegisterMsMiscKernels);
  auto empty = Dynamic(x, w, P({})).Run(RegisterMsMiscKernels);
  ASSERT_TRUE(zeros.ok() && absent.ok() && empty.ok());
  EXPECT_EQ((*zeros)[0].tensor().shape(), (Shape{1, 1, 4, 4}));
  EXPECT_TRUE(TensorsEqual((*zeros)[0].tensor(), (*absent)[0].tensor()));
  EXPECT_TRUE(TensorsEqual((*zeros)[0].tensor(), (*empty)[0].tensor()));
}

TEST(ConvTransposeWithDynamicPads, AutoPadOverridesThePadsInput) {
  OpTest t = Dynamic(Ramp({1, 1, 3, 3}, 1.0f), Ramp({1, 1, 3, 3}, 1.0f), P({2, 2, 2, 2}));
  t.Attr("auto_pad", std::string("SAME_UPPER")).Attr("strides", std::vector<int64_t>{2, 2});
  auto out = t.Run(RegisterMsMiscKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{1, 1, 6, 6}));  // in * stride
}

TEST(ConvTransposeWithDynamicPads, RefusesMalformedPadsAndNodes) {
  const Tensor x = Ramp({1, 1, 3, 3}, 1.0f), w = Ramp({1, 1, 2, 2}, 1.0f);
  auto run = [](OpTest t) { return t.Run(RegisterMsMiscKernels); };
  EXPECT_TRUE(Refused(run(Dynamic(x, w, P({-1, 0, 0, 0}))), StatusCode::kInvalidArgument, "non-negative"));
  EXPECT_TRUE(Refused(run(Dynamic(x, w, P({1, 0}))), StatusCode::kInvalidArgument, "input 'Pads' holds 2"));
  EXPECT_TRUE(Refused(run(Dynamic(x, w, Tensor::FromVector<int32_t>({4}, {0, 0, 0, 0}))), StatusCode::kInvalidArgument,
                      "input 'Pads' must be a 1-D int64"));
  EXPECT_TRUE(Refused(run(Dynamic(x, w, Tensor::FromVector<int64_t>({2, 2}, {0, 0, 0, 0}))),
                      StatusCode::kInvalidArgument, "input 'Pads'"));
  // Pads far past the output: refused by the ConvTranspose kernel's checked arithmetic.
  EXPECT_TRUE(Refused(run(Dynamic(x, w, P({INT64_MAX, INT64_MAX, 0, 0}))), StatusCode::kInvalidArgument, "pads"));
  EXPECT_TRUE(Refused(run(Dynamic(x, w, P({5, 0, 0, 0}))), StatusCode::kInvalidArgument, "negative output"));
  // Strides that no memory holds: refused before anything is allocated.
  OpTest strides = Dynamic(x, w, P({0, 0, 0, 0}));
  strides.Attr("strides", std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_TRUE(Refused(run(strides), StatusCode::kInvalidArgument, "too many elements"));
  EXPECT_TRUE(Refused(run(Dynamic(Tensor::FromVector<double>({1, 1, 1, 1}, {1}),
                                  Tensor::FromVector<double>({1, 1, 1, 1}, {1}), P({0, 0, 0, 0}))),
                      StatusCode::kInvalidArgument, "input 'X' must be float"));
  for (const char* attr : {"pads", "output_shape"}) {
    OpTest t = Dynamic(x, w, P({0, 0, 0, 0}));
    t.Attr(attr, std::vector<int64_t>{1, 1, 1, 1});
    EXPECT_TRUE(Refused(run(t), StatusCode::kInvalidArgument, std::string("attribute '") + attr + "'"));
  }
}

}  // namespace
}  // namespace onnxflow
