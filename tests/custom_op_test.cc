// Custom operators (include/onnxflow/custom_op.h): a host kernel registered on SessionOptions for
// a domain, op and version range serves the main graph and a Loop body; overlaps and unknown ops
// are refused with messages that say which.
#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>

#include "include/onnxflow/custom_op.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

// y = x * factor + bias(version): the version the node was built for shows which range served it.
class Scale : public CustomKernel {
 public:
  Scale(const CustomKernelInfo& info, float bias) : factor_(info.GetFloat("factor", 1.0f)), bias_(bias) {}
  Status Compute(CustomKernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat) return InvalidArgument("Scale takes float32");
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.AllocateUninitialized(0, DataType::kFloat, x->shape()));
    for (int64_t i = 0; i < x->size(); ++i) y->mutable_data<float>()[i] = x->data<float>()[i] * factor_ + bias_;
    return Status::Ok();
  }

 private:
  const float factor_;
  const float bias_;
};

std::shared_ptr<CustomOpSet> Ops() {
  auto ops = std::make_shared<CustomOpSet>();
  EXPECT_TRUE(ops->Add("com.example", "Scale", 1, 1, MakeCustomKernel<Scale>(0.0f)).ok());
  EXPECT_TRUE(ops->Add("com.example", "Scale", 2, CustomOpSet::kOpenEnded, MakeCustomKernel<Scale>(100.0f)).ok());
  return ops;
}

SessionOptions With(std::shared_ptr<CustomOpSet> ops) {
  SessionOptions options;
  options.custom_ops = std::move(ops);
  return options;
}

std::string ScaleModel(int version) {
  tools::ModelBuilder m(17);
  auto* imp = m.proto().add_opset_import();
  imp->set_domain("com.example");
  imp->set_version(version);
  m.Input("x", DataType::kFloat, {3});
  auto& node = m.Node("Scale", {"x"}, {"y"}, "scale");
  node.set_domain("com.example");
  tools::SetAttr(node, "factor", 3.0f);
  m.Output("y", DataType::kFloat, {3});
  return m.Serialize();
}

std::vector<float> Floats(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.size());
}

TEST(CustomOp, ServesTheMainGraphByVersionRange) {
  auto ops = Ops();
  for (int version : {1, 5}) {
    auto s = Session::LoadFromBytes(ScaleModel(version), With(ops));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    auto out = s->Run({{"x", Tensor::FromVector<float>({3}, {1, 2, 3})}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const float bias = version == 1 ? 0 : 100;
    EXPECT_EQ(Floats((*out)[0].value), (std::vector<float>{3 + bias, 6 + bias, 9 + bias}));
  }
}

TEST(CustomOp, WithoutTheSetTheOpIsUnknown) {
  auto s = Session::LoadFromBytes(ScaleModel(1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("Scale"), std::string::npos) << s.status().ToString();
}

TEST(CustomOp, ServesALoopBody) {
  // Loop 4 times: v = Scale(v) with factor 2 (version 1: no bias) -> v * 16.
  tools::ModelBuilder m(17);
  auto* imp = m.proto().add_opset_import();
  imp->set_domain("com.example");
  imp->set_version(1);
  m.Input("v0", DataType::kFloat, {2});
  m.Initializer("trips", Tensor::Scalar<int64_t>(4));
  m.Initializer("cond", Tensor::Scalar<bool>(true));
  auto& loop = m.Node("Loop", {"trips", "cond", "v0"}, {"v"}, "loop");
  tools::GraphBuilder body = tools::SetGraphAttr(loop, "body");
  body.Input("i", DataType::kInt64, {});
  body.Input("c", DataType::kBool, {});
  body.Input("v_in", DataType::kFloat, {2});
  body.Node("Identity", {"c"}, {"c_out"});
  auto& scale = body.Node("Scale", {"v_in"}, {"v_out"}, "body_scale");
  scale.set_domain("com.example");
  tools::SetAttr(scale, "factor", 2.0f);
  body.Output("c_out", DataType::kBool, {});
  body.Output("v_out", DataType::kFloat, {2});
  m.Output("v", DataType::kFloat, {2});
  for (ExecutionMode mode : {ExecutionMode::kDataflow, ExecutionMode::kSequential}) {
    SessionOptions options = With(Ops());
    options.mode = mode;
    auto s = Session::LoadFromBytes(m.Serialize(), options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    auto out = s->Run({{"v0", Tensor::FromVector<float>({2}, {1, -0.5f})}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Floats((*out)[0].value), (std::vector<float>{16, -8}));
  }
}

TEST(CustomOp, KernelErrorsNameTheNode) {
  tools::ModelBuilder m(17);
  auto* imp = m.proto().add_opset_import();
  imp->set_domain("com.example");
  imp->set_version(1);
  m.Input("x", DataType::kInt64, {3});
  m.Node("Scale", {"x"}, {"y"}, "int_scale").set_domain("com.example");
  m.Output("y", DataType::kFloat, {3});
  auto s = Session::LoadFromBytes(m.Serialize(), With(Ops()));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto out = s->Run({{"x", Tensor::FromVector<int64_t>({3}, {1, 2, 3})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("Scale takes float32"), std::string::npos) << out.status().ToString();
  EXPECT_NE(out.status().ToString().find("int_scale"), std::string::npos) << out.status().ToString();
}

// A host kernel that throws: the exception becomes a status naming the node, in the factory and in Compute.
class Throws : public CustomKernel {
 public:
  explicit Throws(const CustomKernelInfo& info) {
    if (info.GetInt("at_load", 0) != 0) throw std::runtime_error("bad attribute");
  }
  Status Compute(CustomKernelContext&) const override { throw std::runtime_error("boom"); }
};

TEST(CustomOp, ExceptionsBecomeStatuses) {
  auto ops = std::make_shared<CustomOpSet>();
  ASSERT_TRUE(ops->Add<Throws>("com.example", "Scale", 1, 1).ok());
  auto s = Session::LoadFromBytes(ScaleModel(1), With(ops));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto out = s->Run({{"x", Tensor::FromVector<float>({3}, {1, 2, 3})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInternal);
  EXPECT_NE(out.status().ToString().find("custom op com.example.Scale: Compute threw: boom"), std::string::npos)
      << out.status().ToString();
  EXPECT_NE(out.status().ToString().find("scale"), std::string::npos) << out.status().ToString();

  tools::ModelBuilder m(17);
  auto* imp = m.proto().add_opset_import();
  imp->set_domain("com.example");
  imp->set_version(1);
  m.Input("x", DataType::kFloat, {3});
  auto& node = m.Node("Scale", {"x"}, {"y"}, "throws_at_load");
  node.set_domain("com.example");
  tools::SetAttr(node, "at_load", int64_t{1});
  m.Output("y", DataType::kFloat, {3});
  auto refused = Session::LoadFromBytes(m.Serialize(), With(ops));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("custom op com.example.Scale: the kernel factory threw: bad attribute"), std::string::npos) << refused.status().ToString();
  EXPECT_NE(refused.status().ToString().find("throws_at_load"), std::string::npos) << refused.status().ToString();
}

TEST(CustomOp, RefusesOverlapsAndBadRanges) {
  auto ops = std::make_shared<CustomOpSet>();
  Status bad = ops->Add("com.example", "Scale", 3, 2, MakeCustomKernel<Scale>(0.0f));
  EXPECT_EQ(bad.message(), "custom op com.example.Scale: the version range [3, 2] is empty");
  // Relu of the default domain is built in from version 6 on.
  ASSERT_TRUE(ops->Add("", "Relu", 14, CustomOpSet::kOpenEnded, MakeCustomKernel<Scale>(0.0f)).ok());
  auto s = Session::LoadFromBytes(ScaleModel(1), With(ops));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("custom op Relu [14, open]: kernel for Relu [14, "), std::string::npos)
      << s.status().ToString();
  // Once a session used the set, it is fixed.
  auto fine = Ops();
  ASSERT_TRUE(Session::LoadFromBytes(ScaleModel(1), With(fine)).ok());
  EXPECT_EQ(fine->Add("com.example", "Other", 1, 1, MakeCustomKernel<Scale>(0.0f)).message(),
            "custom op com.example.Other: the set is already in use by a session");
}

}  // namespace
}  // namespace onnxflow
