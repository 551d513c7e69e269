// com.microsoft MurmurHash3 against ONNX Runtime 1.30's outputs for the same inputs (run once with
// onnxruntime-node, copied here): strings (ASCII and UTF-8, every tail length) and int32 keys.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/text/register.h"

namespace onnxflow {
namespace {

Result<std::vector<Value>> Hash(Tensor x, int64_t positive, int64_t seed) {
  OpTest t("MurmurHash3", 1, "com.microsoft");
  t.Input(std::move(x)).Attr("positive", positive).Attr("seed", seed);
  return t.Run(RegisterTextKernels);
}

const std::vector<std::string> kStrings = {"", "hello", "Hello, world!", "abc", "abcd", "h\xC3\xA9llo w\xC3\xB6rld"};

TEST(MurmurHash3, StringsAsOnnxRuntimeHashesThem) {
  auto out = Hash(Tensor::FromVector<std::string>({6}, kStrings), 1, 0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = out.value()[0].tensor();
  ASSERT_EQ(y.dtype(), DataType::kUint32);
  const std::vector<uint32_t> want = {0u, 613153351u, 3224780355u, 3017643002u, 1139631978u, 2549609076u};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y.data<uint32_t>()[i], want[i]) << kStrings[i];

  out = Hash(Tensor::FromVector<std::string>({6}, kStrings), 0, 42);  // int32, seed 42
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<int32_t> signed_want = {142593372, -488910111, 747406643, 1313807976, -396302900, 857211688};
  ASSERT_EQ(out.value()[0].tensor().dtype(), DataType::kInt32);
  for (size_t i = 0; i < signed_want.size(); ++i) EXPECT_EQ(out.value()[0].tensor().data<int32_t>()[i], signed_want[i]);
}

TEST(MurmurHash3, Int32KeysAndRefusals) {
  auto out = Hash(Tensor::FromVector<int32_t>({4}, {0, 1, -1, 123456789}), 1, 7);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<uint32_t> want = {2565180293u, 3775148407u, 1935827890u, 1663077238u};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out.value()[0].tensor().data<uint32_t>()[i], want[i]);
  EXPECT_FALSE(Hash(Tensor::FromVector<float>({1}, {1}), 1, 0).ok());
}

}  // namespace
}  // namespace onnxflow
