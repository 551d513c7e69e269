// How a host adds an operator of its own (include/onnxflow/custom_op.h): a kernel class, a
// CustomOpSet on the session options, a model that imports the domain. Prints the result.
//   ./bazelw run //tools:custom_op_example
#include <cstdio>
#include <memory>

#include "include/onnxflow/custom_op.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace {

using namespace onnxflow;  // NOLINT: an example

// com.example.Clip01(x) = min(max(x, 0), 1) for float32. Built once per node; Compute is const.
class Clip01 : public CustomKernel {
 public:
  explicit Clip01(const CustomKernelInfo& /*info*/) {}
  Status Compute(CustomKernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat) return InvalidArgument("Clip01 takes float32");
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.AllocateUninitialized(0, DataType::kFloat, x->shape()));
    const float* in = x->data<float>();
    float* out = y->mutable_data<float>();
    for (int64_t i = 0; i < x->size(); ++i) out[i] = in[i] < 0 ? 0 : in[i] > 1 ? 1 : in[i];
    return Status::Ok();
  }
};

}  // namespace

int main() {
  tools::ModelBuilder m(17);
  auto* domain = m.proto().add_opset_import();
  domain->set_domain("com.example");
  domain->set_version(1);
  m.Input("x", DataType::kFloat, {4});
  m.Node("Clip01", {"x"}, {"y"}, "clip").set_domain("com.example");
  m.Output("y", DataType::kFloat, {4});

  auto ops = std::make_shared<CustomOpSet>();
  Status added = ops->Add<Clip01>("com.example", "Clip01", 1, CustomOpSet::kOpenEnded);
  if (!added.ok()) return std::fprintf(stderr, "%s\n", added.ToString().c_str()), 2;
  SessionOptions options;
  options.custom_ops = ops;
  auto session = Session::LoadFromBytes(m.Serialize(), options);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 2;
  auto out = session->Run({{"x", Tensor::FromVector<float>({4}, {-1, 0.25f, 0.5f, 3})}});
  if (!out.ok()) return std::fprintf(stderr, "%s\n", out.status().ToString().c_str()), 2;
  const float* y = (*out)[0].value.tensor().data<float>();
  std::printf("y = [%g, %g, %g, %g]\n", y[0], y[1], y[2], y[3]);
  return 0;
}
