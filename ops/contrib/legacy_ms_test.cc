// com.microsoft ExpandDims, MatMulInteger16, Pad, GatherND and Unique (version 1): values by hand
// or by a reference loop, and the refusals of bad inputs.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/register_all.h"

namespace onnxflow {
namespace {

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }
Tensor I32Scalar(int32_t v) { return Tensor::FromVector<int32_t>({}, {v}); }

Result<std::vector<Value>> RunMs(OpTest& test) { return test.Run(RegisterAllKernels); }

// ---- ExpandDims ----

Result<Tensor> ExpandDims(const Tensor& x, const Tensor& axis) {
  OpTest t("ExpandDims", 1, kMsDomain);
  t.Input(x).Input(axis);
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> out, RunMs(t));
  return out[0].tensor();
}

TEST(ExpandDims, InsertsAOneAtEveryAxis) {
  const Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  // axis -> output shape: non-negative counts from the front, negative from rank + 1 at the back.
  const std::vector<std::pair<int32_t, Shape>> cases = {
      {0, {1, 2, 3}}, {1, {2, 1, 3}}, {2, {2, 3, 1}}, {-1, {2, 3, 1}}, {-2, {2, 1, 3}}, {-3, {1, 2, 3}}};
  for (const auto& [axis, shape] : cases) {
    auto y = ExpandDims(x, I32Scalar(axis));
    ASSERT_TRUE(y.ok()) << axis << ": " << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(x.Reshaped(shape), *y)) << "axis " << axis;
  }
  // A scalar becomes [1]; strings move as well as numbers.
  auto s = ExpandDims(Tensor::FromVector<std::string>({}, {"a"}), I32Scalar(-1));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->shape(), (Shape{1}));
  EXPECT_EQ(s->data<std::string>()[0], "a");
}

TEST(ExpandDims, Refusals) {
  const Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(Refused(ExpandDims(x, I32Scalar(3)), StatusCode::kInvalidArgument, "axis 3 is out of range [-3, 2]"));
  EXPECT_TRUE(Refused(ExpandDims(x, I32Scalar(-4)), StatusCode::kInvalidArgument, "axis -4 is out of range"));
  EXPECT_TRUE(Refused(ExpandDims(x, I32Scalar(std::numeric_limits<int32_t>::min())), StatusCode::kInvalidArgument,
                      "out of range"));
  EXPECT_TRUE(Refused(ExpandDims(x, Tensor::FromVector<int64_t>({}, {0})), StatusCode::kInvalidArgument,
                      "axis must be an int32 scalar, got int64"));
  EXPECT_TRUE(Refused(ExpandDims(x, Tensor::FromVector<int32_t>({2}, {0, 1})), StatusCode::kInvalidArgument,
                      "axis must be an int32 scalar"));
}

// ---- MatMulInteger16 ----

Result<Tensor> MatMul16(const Tensor& a, const Tensor& b) {
  OpTest t("MatMulInteger16", 1, kMsDomain);
  t.Input(a).Input(b);
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> out, RunMs(t));
  return out[0].tensor();
}

TEST(MatMulInteger16, ByHand) {
  // [[1, -2], [3, 4]] x [[5, 6, -7], [8, 9, 10]]
  auto y = MatMul16(Tensor::FromVector<int16_t>({2, 2}, {1, -2, 3, 4}),
                    Tensor::FromVector<int16_t>({2, 3}, {5, 6, -7, 8, 9, 10}));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 3}, {-11, -12, -27, 47, 54, 19}), *y));
}

TEST(MatMulInteger16, ExtremesBroadcastAndVectors) {
  // -32768 * -32768 * 2 = 2^31 wraps to INT32_MIN, as the int32 accumulation of ONNX Runtime does.
  auto wrap = MatMul16(Tensor::FromVector<int16_t>({1, 2}, {-32768, -32768}),
                       Tensor::FromVector<int16_t>({2, 1}, {-32768, -32768}));
  ASSERT_TRUE(wrap.ok());
  EXPECT_EQ(wrap->data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  // A batch of 2 against one B, and a reference loop.
  std::vector<int16_t> a(2 * 3 * 4), b(4 * 5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int16_t>((static_cast<int>(i) * 7919) % 65536 - 32768);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int16_t>((static_cast<int>(i) * 104729) % 65536 - 32768);
  auto y = MatMul16(Tensor::FromVector<int16_t>({2, 3, 4}, a), Tensor::FromVector<int16_t>({4, 5}, b));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->shape(), (Shape{2, 3, 5}));
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 5; ++j) {
        int64_t sum = 0;
        for (int p = 0; p < 4; ++p) sum += int64_t{a[(n * 3 + i) * 4 + p]} * b[p * 5 + j];
        EXPECT_EQ(y->data<int32_t>()[(n * 3 + i) * 5 + j], static_cast<int32_t>(static_cast<uint32_t>(sum)));
      }
    }
  }
  // 1-D operands: a vector times a matrix drops M; a dot product is a scalar.
  auto v = MatMul16(Tensor::FromVector<int16_t>({2}, {2, 3}), Tensor::FromVector<int16_t>({2, 2}, {1, 2, 3, 4}));
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2}, {11, 16}), *v));
  auto dot = MatMul16(Tensor::FromVector<int16_t>({2}, {2, 3}), Tensor::FromVector<int16_t>({2}, {4, 5}));
  ASSERT_TRUE(dot.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({}, {23}), *dot));
  // K = 0: every sum is empty.
  auto empty = MatMul16(Tensor::FromVector<int16_t>({2, 0}, {}), Tensor::FromVector<int16_t>({0, 2}, {}));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 2}, {0, 0, 0, 0}), *empty));
}

TEST(MatMulInteger16, UnsignedOperands) {
  // uint16 x int16 -> int32; uint16 x uint16 -> uint32 (65535^2 + 65535^2 = 8589672450 wraps to
  // 4294705154).
  auto mixed = MatMul16(Tensor::FromVector<uint16_t>({1, 2}, {65535, 2}), Tensor::FromVector<int16_t>({2, 1}, {-1, 3}));
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({1, 1}, {-65529}), *mixed));
  auto both = MatMul16(Tensor::FromVector<uint16_t>({1, 2}, {65535, 65535}),
                       Tensor::FromVector<uint16_t>({2, 1}, {65535, 65535}));
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint32_t>({1, 1}, {4294705154u}), *both));
}

TEST(MatMulInteger16, Refusals) {
  const Tensor a = Tensor::FromVector<int16_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(Refused(MatMul16(a, Tensor::FromVector<int16_t>({2, 2}, {1, 2, 3, 4})), StatusCode::kInvalidArgument,
                      "inner dimensions differ"));
  EXPECT_TRUE(Refused(MatMul16(a, Tensor::FromVector<int8_t>({3, 1}, {1, 2, 3})), StatusCode::kInvalidArgument,
                      "A and B must be int16 or uint16, got int16 and int8"));
  EXPECT_TRUE(Refused(MatMul16(Tensor::FromVector<int16_t>({}, {1}), a), StatusCode::kInvalidArgument, "rank >= 1"));
}

// ---- Pad ----

Result<Tensor> MsPad(const Tensor& x, const Tensor& pads, const Tensor* value, const std::string& mode) {
  OpTest t("Pad", 1, kMsDomain);
  t.Input(x).Input(pads);
  if (value != nullptr) t.Input(*value);
  if (!mode.empty()) t.Attr("mode", mode);
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> out, RunMs(t));
  return out[0].tensor();
}

TEST(MsPad, ConstantReflectEdge) {
  const Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor pads = Tensor::FromVector<int64_t>({4}, {0, 2, 1, 0});  // two columns before, one row after
  const Tensor value = Tensor::FromVector<float>({}, {9.5f});
  auto constant = MsPad(x, pads, &value, "");  // constant is the default
  ASSERT_TRUE(constant.ok()) << constant.status().ToString();
  const float v = 9.5f;
  EXPECT_TRUE(TensorsEqual(F({3, 5}, {v, v, 1, 2, 3, v, v, 4, 5, 6, v, v, v, v, v}), *constant));
  auto zero = MsPad(x, pads, nullptr, "constant");
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(TensorsEqual(F({3, 5}, {0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0}), *zero));
  auto reflect = MsPad(x, pads, nullptr, "reflect");
  ASSERT_TRUE(reflect.ok());
  EXPECT_TRUE(TensorsEqual(F({3, 5}, {3, 2, 1, 2, 3, 6, 5, 4, 5, 6, 3, 2, 1, 2, 3}), *reflect));
  auto edge = MsPad(x, pads, nullptr, "edge");
  ASSERT_TRUE(edge.ok());
  EXPECT_TRUE(TensorsEqual(F({3, 5}, {1, 1, 1, 2, 3, 4, 4, 4, 5, 6, 4, 4, 4, 5, 6}), *edge));
  // Pads as [1, 2 * rank], a value as [1], and a negative pad that crops.
  const Tensor row = Tensor::FromVector<int64_t>({1, 4}, {0, 2, 1, -1});
  const Tensor value1 = Tensor::FromVector<float>({1}, {-1});
  auto cropped = MsPad(x, row, &value1, "constant");
  ASSERT_TRUE(cropped.ok()) << cropped.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({3, 4}, {-1, -1, 1, 2, -1, -1, 4, 5, -1, -1, -1, -1}), *cropped));
}

TEST(MsPad, Refusals) {
  const Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor pads = Tensor::FromVector<int64_t>({4}, {0, 1, 0, 1});
  EXPECT_TRUE(Refused(MsPad(x, pads, nullptr, "wrap"), StatusCode::kInvalidArgument,
                      "mode must be 'constant', 'reflect' or 'edge', not 'wrap'"));
  EXPECT_TRUE(Refused(MsPad(x, Tensor::FromVector<int64_t>({2}, {1, 1}), nullptr, ""), StatusCode::kInvalidArgument,
                      "pads must be int64 of shape [4] or [1, 4]"));
  EXPECT_TRUE(Refused(MsPad(x, Tensor::FromVector<int64_t>({2, 2}, {0, 1, 0, 1}), nullptr, ""),
                      StatusCode::kInvalidArgument, "got int64 [2,2]"));
  EXPECT_TRUE(Refused(MsPad(x, Tensor::FromVector<int32_t>({4}, {0, 1, 0, 1}), nullptr, ""),
                      StatusCode::kInvalidArgument, "got int32 [4]"));
  const Tensor two = F({2}, {1, 2});
  EXPECT_TRUE(Refused(MsPad(x, pads, &two, ""), StatusCode::kInvalidArgument,
                      "value must be a single float32, got float32 [2]"));
  const Tensor dbl = Tensor::FromVector<double>({}, {1});
  EXPECT_TRUE(Refused(MsPad(x, pads, &dbl, ""), StatusCode::kInvalidArgument,
                      "value must be a single float32, got float64 []"));
  // Pads that would leave a negative size, and pads near 2^62 whose output no memory holds.
  EXPECT_TRUE(Refused(MsPad(x, Tensor::FromVector<int64_t>({4}, {0, -2, 0, -2}), nullptr, ""),
                      StatusCode::kInvalidArgument, "negative size"));
  EXPECT_TRUE(Refused(MsPad(x, Tensor::FromVector<int64_t>({4}, {0, int64_t{1} << 59, 0, 0}), nullptr, ""),
                      StatusCode::kResourceExhausted, "max_tensor_bytes"));
}

// ---- GatherND ----

TEST(MsGatherND, TuplesAndSlicesWithInt32AndInt64Indices) {
  const Tensor data = F({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  // Full tuples pick elements; a shorter tuple picks a slice; negative indices count from the end.
  OpTest elements("GatherND", 1, kMsDomain);
  elements.Input(data).Input(Tensor::FromVector<int32_t>({2, 3}, {0, 1, 1, 1, -1, 0}));
  auto e = RunMs(elements);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({2}, {3, 6}), (*e)[0].tensor()));
  OpTest slices("GatherND", 1, kMsDomain);
  slices.Input(data).Input(Tensor::FromVector<int64_t>({2, 1}, {1, 0}));
  auto s = RunMs(slices);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({2, 2, 2}, {4, 5, 6, 7, 0, 1, 2, 3}), (*s)[0].tensor()));
}

TEST(MsGatherND, Refusals) {
  const Tensor data = F({2, 2}, {0, 1, 2, 3});
  OpTest out_of_range("GatherND", 1, kMsDomain);
  out_of_range.Input(data).Input(Tensor::FromVector<int64_t>({1, 2}, {0, 2}));
  EXPECT_TRUE(Refused(RunMs(out_of_range), StatusCode::kOutOfRange, "index 2 is out of range"));
  OpTest too_long("GatherND", 1, kMsDomain);
  too_long.Input(data).Input(Tensor::FromVector<int64_t>({1, 3}, {0, 0, 0}));
  EXPECT_TRUE(Refused(RunMs(too_long), StatusCode::kInvalidArgument, "exceeds data rank"));
  OpTest float_indices("GatherND", 1, kMsDomain);
  float_indices.Input(data).Input(F({1, 1}, {0}));
  EXPECT_TRUE(Refused(RunMs(float_indices), StatusCode::kInvalidArgument, "must be int32 or int64"));
}

// ---- Unique ----

struct UniqueOut {
  Tensor y, idx, counts;
};

Result<UniqueOut> MsUnique(const Tensor& x) {
  OpTest t("Unique", 1, kMsDomain);
  t.Input(x).Outputs(3);
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> out, RunMs(t));
  return UniqueOut{out[0].tensor(), out[1].tensor(), out[2].tensor()};
}

TEST(MsUnique, FirstOccurrenceOrder) {
  // The schema's example.
  auto u = MsUnique(F({6}, {2, 1, 1, 3, 4, 3}));
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(TensorsEqual(F({4}, {2, 1, 3, 4}), u->y));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({6}, {0, 1, 1, 2, 3, 2}), u->idx));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({4}, {1, 2, 2, 1}), u->counts));
  // Integers and strings the same way.
  auto s = MsUnique(Tensor::FromVector<std::string>({4}, {"b", "a", "b", "c"}));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<std::string>({3}, {"b", "a", "c"}), s->y));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({4}, {0, 1, 0, 2}), s->idx));
  auto i = MsUnique(Tensor::FromVector<int64_t>({5}, {7, -7, 7, 7, 0}));
  ASSERT_TRUE(i.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({3}, {7, -7, 0}), i->y));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({3}, {3, 1, 1}), i->counts));
}

TEST(MsUnique, SignedZerosMergeAndNaNsStayApart) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto u = MsUnique(F({6}, {-0.0f, nan, 0.0f, nan, 1, -0.0f}));
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  ASSERT_EQ(u->y.shape(), (Shape{4}));
  const float* y = u->y.data<float>();
  EXPECT_TRUE(y[0] == 0.0f && std::signbit(y[0]));  // the first seen, -0.0
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(y[3], 1.0f);
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({6}, {0, 1, 0, 2, 3, 0}), u->idx));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({4}, {3, 1, 1, 1}), u->counts));
}

TEST(MsUnique, EmptyInputAndRefusals) {
  auto e = MsUnique(F({0}, {}));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->y.shape(), (Shape{0}));
  EXPECT_EQ(e->idx.shape(), (Shape{0}));
  EXPECT_EQ(e->counts.shape(), (Shape{0}));
  EXPECT_TRUE(
      Refused(MsUnique(F({2, 2}, {1, 2, 3, 4})), StatusCode::kInvalidArgument, "x must be 1-D, got shape [2,2]"));
  EXPECT_TRUE(Refused(MsUnique(F({}, {1})), StatusCode::kInvalidArgument, "x must be 1-D"));
}

}  // namespace
}  // namespace onnxflow
