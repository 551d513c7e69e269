// A host program built outside Bazel against the installed tree (dist/custom_op_test.sh): only
// <onnxflow/...> headers and libonnxflow.so. Its own kernel for com.example.Scale (y = x * factor)
// serves the main graph and a Loop body, in both execution modes; prints one line per output.
#include <onnxflow/custom_op.h>
#include <onnxflow/session.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace {

class Scale : public onnxflow::CustomKernel {
 public:
  explicit Scale(const onnxflow::CustomKernelInfo& info) : factor_(info.GetFloat("factor", 1.0f)) {}
  onnxflow::Status Compute(onnxflow::CustomKernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const onnxflow::Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != onnxflow::DataType::kFloat) return onnxflow::InvalidArgument("Scale takes float32");
    ONNXFLOW_ASSIGN_OR_RETURN(onnxflow::Tensor* y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    for (int64_t i = 0; i < x->size(); ++i) y->mutable_data<float>()[i] = x->data<float>()[i] * factor_;
    return onnxflow::Status::Ok();
  }

 private:
  const float factor_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: custom_op_host MODEL.onnx\n"), 2;
  // Without the kernel the model is refused.
  auto unknown = onnxflow::Session::Load(argv[1]);
  if (unknown.ok()) return std::fprintf(stderr, "loaded without the custom kernel\n"), 1;
  std::printf("without: %s\n", onnxflow::StatusCodeName(unknown.status().code()));

  auto ops = std::make_shared<onnxflow::CustomOpSet>();
  onnxflow::Status added = ops->Add<Scale>("com.example", "Scale", 1, onnxflow::CustomOpSet::kOpenEnded);
  if (!added.ok()) return std::fprintf(stderr, "%s\n", added.ToString().c_str()), 1;
  for (auto mode : {onnxflow::ExecutionMode::kDataflow, onnxflow::ExecutionMode::kSequential}) {
    onnxflow::SessionOptions options;
    options.custom_ops = ops;
    options.mode = mode;
    auto session = onnxflow::Session::Load(argv[1], options);
    if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
    auto out = session->Run({{"x", onnxflow::Tensor::FromVector<float>({3}, {1, 2, 3})}});
    if (!out.ok()) return std::fprintf(stderr, "%s\n", out.status().ToString().c_str()), 1;
    for (const auto& named : *out) {
      const float* v = named.value.tensor().data<float>();
      std::printf("%s = %g %g %g\n", named.name.c_str(), v[0], v[1], v[2]);
    }
  }
  return 0;
}
