#include "server/tensor_codec.h"

#include <gtest/gtest.h>

#include "server/model_repository.h"

namespace onnxflow::server {
namespace {

TEST(DatatypeTest, NamesRoundTrip) {
  EXPECT_STREQ(DatatypeName(DataType::kFloat), "FP32");
  EXPECT_STREQ(DatatypeName(DataType::kString), "BYTES");
  EXPECT_STREQ(DatatypeName(DataType::kComplex64), "");
  EXPECT_EQ(ParseDatatype("INT64"), DataType::kInt64);
  EXPECT_EQ(ParseDatatype("FP16"), DataType::kFloat16);
  EXPECT_EQ(ParseDatatype("fp32"), DataType::kUndefined);
}

TEST(TensorCodecTest, JsonNestedAndFlatGiveTheSameTensor) {
  auto nested = TensorFromJson("x", DataType::kInt32, {2, 2}, nlohmann::json::parse("[[1, 2], [3, -4]]"), 1 << 20);
  auto flat = TensorFromJson("x", DataType::kInt32, {2, 2}, nlohmann::json::parse("[1, 2, 3, -4]"), 1 << 20);
  ASSERT_TRUE(nested.ok()) << nested.status().ToString();
  ASSERT_TRUE(flat.ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(nested->data<int32_t>()[i], flat->data<int32_t>()[i]);
  EXPECT_EQ(nested->data<int32_t>()[3], -4);
  auto json = TensorToJson("x", *flat);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->dump(), "[1,2,3,-4]");
}

TEST(TensorCodecTest, JsonRefusesWrongCountTypeAndRange) {
  auto count = TensorFromJson("x", DataType::kFloat, {3}, nlohmann::json::parse("[1, 2]"), 1 << 20);
  EXPECT_EQ(count.status().message(), "input 'x' has 2 elements in 'data', shape [3] needs 3");
  auto range = TensorFromJson("x", DataType::kUint8, {2}, nlohmann::json::parse("[1, 300]"), 1 << 20);
  EXPECT_EQ(range.status().message(), "input 'x': element 1 (300) is out of range for its datatype");
  auto type = TensorFromJson("x", DataType::kBool, {1}, nlohmann::json::parse("[1]"), 1 << 20);
  EXPECT_EQ(type.status().message(), "input 'x': element 0 is not a boolean (BOOL)");
  auto negative = TensorFromJson("x", DataType::kFloat, {-1}, nlohmann::json::parse("[]"), 1 << 20);
  EXPECT_EQ(negative.status().message(), "input 'x' has a negative dimension in shape [-1]");
}

TEST(TensorCodecTest, ForgedShapeIsRefusedBeforeAllocating) {
  auto huge = CheckedElementCount("x", DataType::kFloat, {1 << 30, 1 << 30, 1 << 30}, 64 << 20);
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  auto fits = CheckedElementCount("x", DataType::kFloat, {4, 0, 1 << 30}, 64 << 20);
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(*fits, 0);
}

TEST(TensorCodecTest, RawBytesRoundTrip) {
  Tensor strings(DataType::kString, {3});
  strings.mutable_data<std::string>()[0] = "a";
  strings.mutable_data<std::string>()[2] = std::string("b\0c", 3);
  std::string raw;
  AppendRaw(strings, &raw);
  EXPECT_EQ(raw.size(), RawSize(strings));
  EXPECT_EQ(raw.size(), 4u + 1 + 4 + 0 + 4 + 3);
  auto back = TensorFromRaw("s", DataType::kString, {3}, raw, 1 << 20);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->data<std::string>()[2], std::string("b\0c", 3));
  auto truncated = TensorFromRaw("s", DataType::kString, {3}, std::string_view(raw).substr(0, raw.size() - 1), 1 << 20);
  EXPECT_EQ(truncated.status().message(), "input 's': BYTES element 2 runs past the data");

  Tensor floats = Tensor::FromVector<float>({2}, {1.5f, -2});
  std::string fraw;
  AppendRaw(floats, &fraw);
  auto f = TensorFromRaw("f", DataType::kFloat, {2}, fraw, 1 << 20);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->data<float>()[1], -2.0f);
  EXPECT_EQ(TensorFromRaw("f", DataType::kFloat, {3}, fraw, 1 << 20).status().message(),
            "input 'f' has 8 bytes of data, shape [3] of FP32 needs 12");
}

TEST(ModelConfigTest, ParsesAndRefuses) {
  auto config = ParseModelConfig(R"({"threads": 2, "dynamic_batching": {"max_batch_size": 8, "max_delay_us": 500}})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->session.threads, 2);
  EXPECT_EQ(config->batching.max_batch_size, 8);
  EXPECT_EQ(config->batching.max_delay.count(), 500);
  EXPECT_EQ(ParseModelConfig(R"({"thread": 2})").status().message(), "config.json: unknown key 'thread'");
  EXPECT_EQ(ParseModelConfig(R"({"dynamic_batching": {"max_batch_size": 1}})").status().message(),
            "config.json: dynamic_batching.max_batch_size must be 2..4096");
  EXPECT_EQ(ParseModelConfig("{").status().message(), "config.json is not a JSON object");
}

}  // namespace
}  // namespace onnxflow::server
