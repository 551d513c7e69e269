// Whole models in the form ONNX Runtime saves them (its optimized-model files at the basic and
// extended levels): every domain it imports, com.microsoft fused ops, LayerNormalization in the
// default domain below opset 17, and the refusal of the NCHWc layout it writes only at 'all'.
#include <cmath>

#include <gtest/gtest.h>

#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using tools::ModelBuilder;
using tools::SetAttr;

Tensor F(Shape shape, const std::vector<float>& v) { return Tensor::FromVector<float>(std::move(shape), v); }

// The opset imports of a file ONNX Runtime 1.30 saved (ort_optimize.js ... basic).
void ImportLikeOrt(ModelBuilder& m) {
  for (const char* domain : {"ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview", "com.microsoft",
                             "ai.onnx.preview.training", "com.microsoft.experimental", "com.microsoft.nchwc",
                             "org.pytorch.aten"}) {
    auto* imp = m.proto().add_opset_import();
    imp->set_domain(domain);
    imp->set_version(std::string(domain) == "ai.onnx.ml" ? 5 : 1);
  }
}

void ExpectNear(const Tensor& expected, const Tensor& actual, float tol = 1e-5f) {
  ASSERT_EQ(expected.shape(), actual.shape());
  for (int64_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(expected.data<float>()[i], actual.data<float>()[i], tol) << "element " << i;
  }
}

TEST(ContribModels, FusedConvThenDefaultDomainLayerNormAtOpset9) {
  ModelBuilder m(9);
  ImportLikeOrt(m);
  m.Input("x", DataType::kFloat, {1, 1, 2, 2});
  m.Initializer("w", F({2, 1, 1, 1}, {2, -1}));
  m.Initializer("b", F({2}, {-1, 0}));
  m.Initializer("gamma", F({2}, {1, 1}));
  m.Initializer("beta", F({2}, {0, 0}));
  auto& conv = m.Node("FusedConv", {"x", "w", "b"}, {"c"}, "fused_conv");
  conv.set_domain("com.microsoft");
  SetAttr(conv, "activation", std::string("Relu"));
  SetAttr(conv, "kernel_shape", std::vector<int64_t>{1, 1});
  auto& ln = m.Node("LayerNormalization", {"c", "gamma", "beta"}, {"y"}, "ln");
  SetAttr(ln, "epsilon", 1e-12f);
  m.Output("y", DataType::kFloat, {1, 2, 2, 2});
  auto session = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = session->Run({{"x", F({1, 1, 2, 2}, {1, 2, -3, 0})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // channel 0: relu(2x - 1) = 1, 3, 0, 0; channel 1: relu(-x) = 0, 0, 3, 0; rows of 2 normalized.
  ExpectNear(F({1, 2, 2, 2}, {-1, 1, 0, 0, 0, 0, 1, -1}), (*out)[0].value.tensor());
}

TEST(ContribModels, TransformerBlockOfContribOps) {
  // FusedMatMul (alpha 0.5) -> BiasGelu -> SkipLayerNormalization with the input as skip.
  ModelBuilder m(13);
  ImportLikeOrt(m);
  m.Input("x", DataType::kFloat, {1, 2, 2});
  m.Initializer("w", F({2, 2}, {2, 0, 0, 2}));
  m.Initializer("bias", F({2}, {0, 0}));
  m.Initializer("gamma", F({2}, {1, 1}));
  auto& mm = m.Node("FusedMatMul", {"x", "w"}, {"h"});
  mm.set_domain("com.microsoft");
  SetAttr(mm, "alpha", 0.5f);
  m.Node("BiasGelu", {"h", "bias"}, {"g"}).set_domain("com.microsoft");
  auto& sln = m.Node("SkipLayerNormalization", {"g", "x", "gamma"}, {"y"});
  sln.set_domain("com.microsoft");
  SetAttr(sln, "epsilon", 0.0f);
  m.Output("y", DataType::kFloat, {1, 2, 2});
  auto session = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = session->Run({{"x", F({1, 2, 2}, {1, 0, 0, 2})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // row 0: gelu(1) + 1 = 1.8413, gelu(0) + 0 = 0 -> (1, -1); row 1: (0, gelu(2) + 2) -> (-1, 1)
  ExpectNear(F({1, 2, 2}, {1, -1, -1, 1}), (*out)[0].value.tensor());
}

TEST(ContribModels, NchwcLayoutIsRefusedWithWhatToDo) {
  ModelBuilder m(13);
  ImportLikeOrt(m);
  m.Input("x", DataType::kFloat, {1, 16, 1, 1});
  m.Node("ReorderInput", {"x"}, {"y"}, "reorder").set_domain("com.microsoft.nchwc");
  m.Output("y", DataType::kFloat, {1, 16, 1, 1});
  auto session = Session::LoadFromBytes(m.Serialize());
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(session.status().message().find("node 'reorder'"), std::string::npos) << session.status().message();
  EXPECT_NE(session.status().message().find("save the model at the 'extended' level instead"), std::string::npos)
      << session.status().message();
}

// The zoo's Tiny YOLOv2 (opsets 7 and 8) opens with ImageScaler; CoreML and Keras conversions of
// those opsets use the other experimental ops. Through the load passes (Conv folded with what
// follows, the blocked layout) with hand values: 1x1 Conv of weight 2 and bias -1, so each pixel p
// becomes 2 * (0.5 * p + bias[c]) - 1, then Crop's borders and the experimental ThresholdedRelu.
TEST(ContribModels, ExperimentalOpsOfOpset8) {
  ModelBuilder m(8);
  m.Input("image", DataType::kFloat, {1, 1, 3, 3});
  m.Initializer("w", F({1, 1, 1, 1}, {2}));
  m.Initializer("b", F({1}, {-1}));
  auto& scaler = m.Node("ImageScaler", {"image"}, {"scaled"}, "scaler");
  SetAttr(scaler, "scale", 0.5f);
  SetAttr(scaler, "bias", std::vector<float>{1.0f});
  m.Node("Conv", {"scaled", "w", "b"}, {"conv"}, "conv");
  auto& crop = m.Node("Crop", {"conv"}, {"crop"}, "crop");
  SetAttr(crop, "border", std::vector<int64_t>{1, 0, 0, 1});  // left 1, bottom 1: rows 0-1, columns 1-2
  auto& relu = m.Node("ThresholdedRelu", {"crop"}, {"y"}, "relu");
  SetAttr(relu, "alpha", 3.5f);
  m.Output("y", DataType::kFloat, {1, 1, 2, 2});
  auto session = Session::LoadFromBytes(m.Serialize());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = session->Run({{"image", F({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // p + 1 for p = 1, 2, 4, 5: 2, 3, 5, 6; ThresholdedRelu(3.5) keeps 5 and 6.
  ExpectNear(F({1, 1, 2, 2}, {0, 0, 5, 6}), (*out)[0].value.tensor());
}

// The version-1 com.microsoft ops old converters wrote (ops/contrib/legacy_ms.cc), through a whole
// load: their outputs' types are inferred (Unique's int64 idx, MatMulInteger16's uint32 for two
// uint16 operands), so a model declaring another type is refused by name.
TEST(ContribModels, LegacyMicrosoftOpsTypesAreInferred) {
  auto model = [](DataType idx_type, DataType product_type) {
    ModelBuilder m(9);
    ImportLikeOrt(m);
    m.Input("x", DataType::kFloat, {5});
    m.Input("a", DataType::kUint16, {1, 2});
    m.Input("b", DataType::kUint16, {2, 1});
    m.Node("Unique", {"x"}, {"y", "idx", "counts"}, "unique").set_domain("com.microsoft");
    m.Node("MatMulInteger16", {"a", "b"}, {"p"}, "product").set_domain("com.microsoft");
    m.Output("y", DataType::kFloat, {-1});
    m.Output("idx", idx_type, {5});
    m.Output("counts", DataType::kInt64, {-1});
    m.Output("p", product_type, {1, 1});
    return m.Serialize();
  };
  auto session = Session::LoadFromBytes(model(DataType::kInt64, DataType::kUint32));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = session->Run({{"x", F({5}, {3, 1, 3, 2, 1})},
                           {"a", Tensor::FromVector<uint16_t>({1, 2}, {60000, 2})},
                           {"b", Tensor::FromVector<uint16_t>({2, 1}, {60000, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear(F({3}, {3, 1, 2}), (*out)[0].value.tensor());
  EXPECT_EQ(std::vector<int64_t>((*out)[1].value.tensor().data<int64_t>(), (*out)[1].value.tensor().data<int64_t>() + 5),
            (std::vector<int64_t>{0, 1, 0, 2, 1}));
  EXPECT_EQ((*out)[3].value.tensor().dtype(), DataType::kUint32);
  EXPECT_EQ((*out)[3].value.tensor().data<uint32_t>()[0], 60000u * 60000u + 6u);  // 3,600,000,006 fits uint32

  auto float_idx = Session::LoadFromBytes(model(DataType::kFloat, DataType::kUint32));
  ASSERT_FALSE(float_idx.ok());
  EXPECT_NE(float_idx.status().message().find("output 'idx' is declared float but the graph produces int64"),
            std::string::npos)
      << float_idx.status().ToString();
  auto int32_product = Session::LoadFromBytes(model(DataType::kInt64, DataType::kInt32));
  ASSERT_FALSE(int32_product.ok());
  EXPECT_NE(int32_product.status().message().find("output 'p' is declared int32 but the graph produces uint32"),
            std::string::npos)
      << int32_product.status().ToString();
}

}  // namespace
}  // namespace onnxflow
