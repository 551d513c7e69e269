#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/random/generator.h"
#include "ops/random/register.h"

namespace onnxflow {
namespace {

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

Result<Tensor> RunOne(OpTest& test) {
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> out, test.Run(RegisterRandomKernels));
  return out[0].tensor();
}

// Values printed by numpy 1.24: np.random.RandomState(0).rand(3) and .randn(3).
TEST(NumpyRandom, MatchesNumpyRandomState) {
  NumpyRandom uniform(0);
  EXPECT_EQ(uniform.NextDouble(), 0.5488135039273248);
  EXPECT_EQ(uniform.NextDouble(), 0.7151893663724195);
  EXPECT_EQ(uniform.NextDouble(), 0.6027633760716439);
  NumpyRandom normal(0);
  EXPECT_DOUBLE_EQ(normal.NextGauss(), 1.764052345967664);
  EXPECT_DOUBLE_EQ(normal.NextGauss(), 0.4001572083672233);
  EXPECT_DOUBLE_EQ(normal.NextGauss(), 0.9787379841057392);
}

// np.random.seed(0); x = np.random.uniform(0, 1, 10); np.random.binomial(1, p=x)
// gives [0 1 1 0 0 1 0 1 1 1] (the ONNX Bernoulli test data comes from this stream).
TEST(NumpyRandom, BinomialMatchesNumpy) {
  NumpyRandom rng(0);
  std::vector<double> p(10);
  for (double& v : p) v = rng.NextDouble();
  std::vector<int64_t> got;
  for (double v : p) got.push_back(rng.NextBernoulli(v));
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1, 1, 0, 0, 1, 0, 1, 1, 1}));
  NumpyRandom rng5(5);  // RandomState(5).binomial(1, [.1, .9, .5, .3, .7, .2]) = [0 1 0 1 1 0]
  std::vector<int64_t> got5;
  for (double v : {0.1, 0.9, 0.5, 0.3, 0.7, 0.2}) got5.push_back(rng5.NextBernoulli(v));
  EXPECT_EQ(got5, (std::vector<int64_t>{0, 1, 0, 1, 1, 0}));
}

TEST(RandomUniform, SeededMatchesNumpyAndRepeats) {
  OpTest test("RandomUniform", 22);
  test.Attr("shape", std::vector<int64_t>{2}).Attr("low", -2.0f).Attr("high", 2.0f).Attr("seed", 42.0f);
  auto a = RunOne(test);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->dtype(), DataType::kFloat);
  // RandomState(42).rand(2).astype(float32) * 4 - 2
  EXPECT_EQ(Values<float>(*a), (std::vector<float>{-0.5018395185470581f, 1.8028571605682373f}));
  auto b = RunOne(test);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Values<float>(*a), Values<float>(*b));
}

TEST(RandomUniform, UnseededStaysInRangeAndVaries) {
  OpTest test("RandomUniform", 1);
  test.Attr("shape", std::vector<int64_t>{3, 1000}).Attr("low", 5.0f).Attr("high", 6.0f).Attr(
      "dtype", static_cast<int64_t>(DataType::kDouble));
  auto a = RunOne(test);
  auto b = RunOne(test);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->shape(), (Shape{3, 1000}));
  double sum = 0;
  for (double v : Values<double>(*a)) {
    ASSERT_GE(v, 5.0);
    ASSERT_LT(v, 6.0);
    sum += v;
  }
  EXPECT_NEAR(sum / 3000, 5.5, 0.05);
  EXPECT_NE(Values<double>(*a), Values<double>(*b));
  OpTest no_shape("RandomUniform", 1);
  EXPECT_TRUE(Refused(RunOne(no_shape), StatusCode::kInvalidArgument, "attribute 'shape' is required"));
  OpTest bad_type("RandomUniform", 1);
  bad_type.Attr("shape", std::vector<int64_t>{1}).Attr("dtype", static_cast<int64_t>(DataType::kInt32));
  EXPECT_TRUE(Refused(RunOne(bad_type), StatusCode::kInvalidArgument, "attribute dtype 6 must be float, double, float16 or bfloat16"));
}

TEST(RandomNormal, SeededDoubleAndHalf) {
  OpTest test("RandomNormal", 22);
  test.Attr("shape", std::vector<int64_t>{3})
      .Attr("mean", 1.0f)
      .Attr("scale", 2.0f)
      .Attr("seed", 0.0f)
      .Attr("dtype", static_cast<int64_t>(DataType::kDouble));
  auto y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  const std::vector<double> v = Values<double>(*y);
  EXPECT_DOUBLE_EQ(v[0], 1 + 2 * 1.764052345967664);
  EXPECT_DOUBLE_EQ(v[1], 1 + 2 * 0.4001572083672233);
  EXPECT_DOUBLE_EQ(v[2], 1 + 2 * 0.9787379841057392);

  OpTest half("RandomNormalLike", 22);
  half.Input(Tensor(DataType::kFloat16, {4, 5})).Attr("seed", 0.0f);
  auto h = RunOne(half);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->dtype(), DataType::kFloat16);
  EXPECT_EQ(h->shape(), (Shape{4, 5}));
  EXPECT_EQ(h->data<Float16>()[0].bits, FloatToHalf(1.764052345967664f));
}

TEST(RandomUniformLike, TypeFromInputOrAttribute) {
  OpTest like("RandomUniformLike", 22);
  like.Input(Tensor(DataType::kInt32, {2, 3})).Attr("dtype", static_cast<int64_t>(DataType::kFloat));
  auto y = RunOne(like);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->dtype(), DataType::kFloat);
  EXPECT_EQ(y->shape(), (Shape{2, 3}));
  OpTest no_dtype("RandomUniformLike", 22);
  no_dtype.Input(Tensor(DataType::kInt32, {2}));
  EXPECT_TRUE(Refused(RunOne(no_dtype), StatusCode::kInvalidArgument, "input type int32 is not a float type and no dtype attribute is given"));  // int input needs a dtype
}

TEST(Bernoulli, DeterministicCornersTypesAndErrors) {
  OpTest test("Bernoulli", 22);
  test.Input(Tensor::FromVector<float>({6}, {0, 1, 0, 1, 1, 0}));
  auto y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Values<float>(*y), (std::vector<float>{0, 1, 0, 1, 1, 0}));
  OpTest as_bool("Bernoulli", 15);
  as_bool.Input(Tensor::FromVector<double>({3}, {1, 0, 1})).Attr("dtype", static_cast<int64_t>(DataType::kBool));
  auto b = RunOne(as_bool);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Values<bool>(*b), (std::vector<bool>{true, false, true}));
  OpTest seeded("Bernoulli", 22);
  seeded.Input(Tensor::FromVector<double>({6}, {0.1, 0.9, 0.5, 0.3, 0.7, 0.2}))
      .Attr("seed", 5.0f)
      .Attr("dtype", static_cast<int64_t>(DataType::kInt64));
  auto s = RunOne(seeded);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Values<int64_t>(*s), (std::vector<int64_t>{0, 1, 0, 1, 1, 0}));
  OpTest bad("Bernoulli", 22);
  bad.Input(Tensor::FromVector<float>({2}, {0.5f, 1.5f}));
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "input element 1 = 1.500000 is not a probability in [0, 1]"));
}

TEST(Multinomial, ShapesTypesAndDistribution) {
  const float kNegInf = -std::numeric_limits<float>::infinity();
  OpTest peaked("Multinomial", 7);
  peaked.Input(Tensor::FromVector<float>({2, 3}, {0, kNegInf, kNegInf, kNegInf, kNegInf, 3}))
      .Attr("sample_size", int64_t{5})
      .Attr("dtype", static_cast<int64_t>(DataType::kInt64));
  auto y = RunOne(peaked);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (Shape{2, 5}));
  EXPECT_EQ(Values<int64_t>(*y), (std::vector<int64_t>{0, 0, 0, 0, 0, 2, 2, 2, 2, 2}));

  // log(1), log(3): class 1 about three times as often as class 0.
  OpTest weighted("Multinomial", 22);
  weighted.Input(Tensor::FromVector<double>({1, 2}, {0.0, std::log(3.0)})).Attr("sample_size", int64_t{4000}).Attr(
      "seed", 1.0f);
  auto w = RunOne(weighted);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->dtype(), DataType::kInt32);
  int ones = 0;
  for (int32_t v : Values<int32_t>(*w)) ones += v;
  EXPECT_NEAR(ones / 4000.0, 0.75, 0.03);
  auto again = RunOne(weighted);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Values<int32_t>(*w), Values<int32_t>(*again));

  OpTest bad_rank("Multinomial", 7);
  bad_rank.Input(Tensor::FromVector<float>({3}, {1, 2, 3}));
  EXPECT_TRUE(Refused(RunOne(bad_rank), StatusCode::kInvalidArgument, "input must be 2-D [batch_size, class_size], got shape [3]"));
}

}  // namespace
}  // namespace onnxflow
