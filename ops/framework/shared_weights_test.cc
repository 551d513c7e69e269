#include "ops/framework/shared_weights.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace onnxflow {
namespace {

// The object a cached buffer stands for, counting how many were made and how many are alive.
struct Packed {
  static int made, alive;
  std::vector<float> values;
  explicit Packed(std::vector<float> v) : values(std::move(v)) { ++made, ++alive; }
  Packed(Packed&& o) noexcept : values(std::move(o.values)) { ++alive; }
  ~Packed() { --alive; }
};
int Packed::made = 0, Packed::alive = 0;

std::shared_ptr<const Packed> Get(const std::string& kind, const Tensor& w) {
  return SharedWeights::Get<Packed>(WeightKey(kind).Add(w), [&] {
    return Packed(std::vector<float>(w.data<float>(), w.data<float>() + w.size()));
  });
}

TEST(SharedWeights, SameContentSharesOneObjectDifferentContentDoesNot) {
  Packed::made = 0;
  const Tensor w = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  const Tensor same = w.Clone();  // other storage, same bytes
  const Tensor other = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 5});
  const Tensor reshaped = Tensor::FromVector<float>({4}, {1, 2, 3, 4});
  auto a = Get("test.kind", w);
  auto b = Get("test.kind", same);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(Packed::made, 1);
  auto c = Get("test.kind", other);
  auto d = Get("test.kind", reshaped);  // same bytes, another shape: another packing
  auto e = Get("test.other_kind", w);   // same tensor, another packing
  EXPECT_NE(c.get(), a.get());
  EXPECT_NE(d.get(), a.get());
  EXPECT_NE(e.get(), a.get());
  EXPECT_EQ(Packed::made, 4);
  EXPECT_EQ(c->values, (std::vector<float>{1, 2, 3, 5}));
}

TEST(SharedWeights, ParametersArePartOfTheKey) {
  const Tensor w = Tensor::FromVector<float>({2}, {1, 2});
  auto make = [] { return Packed({}); };
  auto a = SharedWeights::Get<Packed>(WeightKey("test.params").Add(w).Add(int64_t{1}), make);
  auto b = SharedWeights::Get<Packed>(WeightKey("test.params").Add(w).Add(int64_t{2}), make);
  auto c = SharedWeights::Get<Packed>(WeightKey("test.params").Add(w).Add(0.5), make);
  auto d = SharedWeights::Get<Packed>(WeightKey("test.params").Add(w).Add(int64_t{1}), make);
  EXPECT_NE(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(a.get(), d.get());
}

TEST(SharedWeights, FreedWhenTheLastHolderLetsGo) {
  const Tensor w = Tensor::FromVector<float>({3}, {7, 8, 9});
  const int alive_before = Packed::alive;
  const size_t live_before = SharedWeights::LiveCount();
  auto a = Get("test.release", w);
  auto b = Get("test.release", w);
  EXPECT_EQ(Packed::alive, alive_before + 1);
  EXPECT_EQ(SharedWeights::LiveCount(), live_before + 1);
  a.reset();
  EXPECT_EQ(Packed::alive, alive_before + 1);  // b still holds it
  b.reset();
  EXPECT_EQ(Packed::alive, alive_before);  // the cache itself keeps nothing alive
  EXPECT_EQ(SharedWeights::LiveCount(), live_before);
  const int made = Packed::made;
  auto again = Get("test.release", w);  // made anew
  EXPECT_EQ(Packed::made, made + 1);
}

TEST(SharedWeights, ConcurrentLoadsGetOneObject) {
  const Tensor w = Tensor::FromVector<float>({4}, {1, 1, 2, 3});
  std::vector<std::shared_ptr<const Packed>> got(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) threads.emplace_back([&, i] { got[i] = Get("test.concurrent", w); });
  for (auto& t : threads) t.join();
  for (const auto& p : got) EXPECT_EQ(p.get(), got[0].get());
}

TEST(SharedWeights, InternedTensorsShareStorageWhileOneIsAlive) {
  const size_t live_before = SharedWeights::LiveCount();
  Tensor a = SharedWeights::Intern(Tensor::FromVector<float>({3}, {1, 2, 3}));
  Tensor b = SharedWeights::Intern(Tensor::FromVector<float>({3}, {1, 2, 3}));
  Tensor c = SharedWeights::Intern(Tensor::FromVector<float>({3}, {1, 2, 4}));
  EXPECT_TRUE(a.SharesStorageWith(b));
  EXPECT_FALSE(a.SharesStorageWith(c));
  EXPECT_EQ(b.data<float>()[2], 3.0f);
  EXPECT_EQ(SharedWeights::LiveCount(), live_before + 2);
  a = Tensor();
  b = Tensor();
  c = Tensor();
  EXPECT_EQ(SharedWeights::LiveCount(), live_before);
}

TEST(SharedWeights, DigestSeesEveryByte) {
  std::vector<unsigned char> bytes(1000, 0);
  const ContentDigest zero = DigestBytes(bytes.data(), bytes.size());
  EXPECT_EQ(DigestBytes(bytes.data(), bytes.size()), zero);
  for (size_t i : {size_t{0}, size_t{7}, size_t{15}, size_t{16}, size_t{991}, size_t{999}}) {
    bytes[i] = 1;
    EXPECT_FALSE(DigestBytes(bytes.data(), bytes.size()) == zero) << "byte " << i;
    bytes[i] = 0;
  }
  // The length counts: a zero more is another content.
  EXPECT_FALSE(DigestBytes(bytes.data(), 999) == zero);
  EXPECT_FALSE(DigestBytes(bytes.data(), 0) == DigestBytes(bytes.data(), 1));
}

}  // namespace
}  // namespace onnxflow
