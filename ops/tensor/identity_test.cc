#include <gtest/gtest.h>

#include "ops/tensor/test_util.h"

namespace onnxflow {
namespace tensor_test {
namespace {

template <typename T>
class IdentityTyped : public ::testing::Test {};
TYPED_TEST_SUITE(IdentityTyped, AllTypes);

TYPED_TEST(IdentityTyped, PassesEveryTypeThroughWithoutCopy) {
  const Tensor x = Iota<TypeParam>({2, 0, 3});
  OpTest test("Identity", 16);
  test.Input(x);
  const Tensor y = Out(test);
  EXPECT_TRUE(Same(x, y));
  const Tensor z = Iota<TypeParam>({5});
  OpTest test2("Identity", 16);
  test2.Input(z);
  EXPECT_TRUE(Out(test2).SharesStorageWith(z));
}

TEST(Identity, SequencesAndEmptyOptionals) {
  auto seq = std::make_shared<Sequence>();
  seq->elem_type = DataType::kFloat;
  seq->tensors = {Iota<float>({2}), Iota<float>({3})};
  OpTest test("Identity", 16);
  test.Input(Value(std::shared_ptr<const Sequence>(seq)));
  auto r = RunOp(test);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE((*r)[0].is_sequence());
  EXPECT_EQ((*r)[0].sequence_ptr().get(), seq.get());

  OpTest none("Identity", 16);
  none.Input(Value());
  auto n = RunOp(none);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_TRUE((*n)[0].is_none());
}

TEST(Shape, StartAndEndAreClamped) {
  const Tensor x = Iota<float>({2, 3, 4, 5});
  struct Case {
    int64_t start;
    int64_t end;  // INT64_MIN: not given
    std::vector<int64_t> expected;
  };
  const std::vector<Case> cases = {{0, INT64_MIN, {2, 3, 4, 5}}, {1, INT64_MIN, {3, 4, 5}}, {-1, INT64_MIN, {5}},
                                   {1, -1, {3, 4}},             {-10, 10, {2, 3, 4, 5}},   {3, 1, {}},
                                   {0, 0, {}}};
  for (const Case& c : cases) {
    OpTest test("Shape", 15);
    test.Input(x).Attr("start", c.start);
    if (c.end != INT64_MIN) test.Attr("end", c.end);
    const Tensor y = Out(test);
    EXPECT_TRUE(Same(I64({static_cast<int64_t>(c.expected.size())}, c.expected), y))
        << "start " << c.start << " end " << c.end;
  }
}

TEST(Shape, OfScalarIsEmpty) {
  OpTest test("Shape", 13);
  test.Input(Tensor::Scalar<std::string>("a"));
  EXPECT_EQ(Out(test).shape(), (Shape{0}));
}

TEST(Size, CountsElements) {
  OpTest test("Size", 13);
  test.Input(Iota<bool>({2, 3, 4}));
  EXPECT_TRUE(Same(Tensor::Scalar<int64_t>(24), Out(test)));
  OpTest empty("Size", 13);
  empty.Input(Iota<float>({2, 0}));
  EXPECT_TRUE(Same(Tensor::Scalar<int64_t>(0), Out(empty)));
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
