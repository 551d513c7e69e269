#include "scheduler/custom_op.h"

#include <exception>
#include <mutex>

#include "ops/register_all.h"

namespace onnxflow {

static_assert(CustomOpSet::kOpenEnded == kOpenEnded, "the public and the registry's open end differ");

struct CustomOpSet::State {
  struct Def {
    std::string domain, op_type;
    int since_version, until_version;
    CustomKernelFactory factory;
  };
  std::mutex mutex;
  std::vector<Def> defs;
  std::shared_ptr<const KernelRegistry> merged;
};

namespace {

// A host exception must not unwind through the runtime (its flow graph, its load): it becomes a status.
template <typename F>
auto Guarded(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Internal(what + " threw: " + e.what());
  } catch (...) {
    return Internal(what + " threw a non-standard exception");
  }
}

// KernelInfo as the public interface sees it.
class InfoView final : public CustomKernelInfo {
 public:
  explicit InfoView(const KernelInfo& info) : info_(info) {}
  const std::string& name() const override { return info_.name(); }
  const std::string& op_type() const override { return info_.op_type(); }
  int opset() const override { return info_.opset(); }
  int input_count() const override { return info_.input_count(); }
  bool has_input(int i) const override { return info_.has_input(i); }
  int output_count() const override { return info_.output_count(); }
  bool has_output(int i) const override { return info_.has_output(i); }
  DataType input_type(int i) const override { return info_.input_type(i); }
  const Tensor* constant_input(int i) const override { return info_.constant_input(i); }
  bool has_attribute(const std::string& name) const override { return info_.has_attribute(name); }
  int64_t GetInt(const std::string& name, int64_t d) const override { return info_.GetInt(name, d); }
  float GetFloat(const std::string& name, float d) const override { return info_.GetFloat(name, d); }
  std::string GetString(const std::string& name, const std::string& d) const override { return info_.GetString(name, d); }
  std::vector<int64_t> GetInts(const std::string& name, std::vector<int64_t> d) const override {
    return info_.GetInts(name, std::move(d));
  }
  std::vector<float> GetFloats(const std::string& name, std::vector<float> d) const override {
    return info_.GetFloats(name, std::move(d));
  }
  std::vector<std::string> GetStrings(const std::string& name, std::vector<std::string> d) const override {
    return info_.GetStrings(name, std::move(d));
  }
  Result<Tensor> GetTensor(const std::string& name) const override { return info_.GetTensor(name); }

 private:
  const KernelInfo& info_;
};

// KernelContext as the public interface sees it; one per Compute call, on its stack.
class ContextView final : public CustomKernelContext {
 public:
  explicit ContextView(KernelContext& ctx) : ctx_(ctx) {}
  int input_count() const override { return ctx_.input_count(); }
  const Value* input(int i) const override { return ctx_.input(i); }
  const Tensor* input_tensor(int i) const override { return ctx_.input_tensor(i); }
  Result<const Tensor*> RequireTensor(int i) const override { return ctx_.RequireTensor(i); }
  int output_count() const override { return ctx_.output_count(); }
  bool has_output(int i) const override { return ctx_.has_output(i); }
  Result<Tensor*> Allocate(int i, DataType dtype, const Shape& shape) override { return ctx_.Allocate(i, dtype, shape); }
  Result<Tensor*> AllocateUninitialized(int i, DataType dtype, const Shape& shape) override {
    return ctx_.AllocateUninitialized(i, dtype, shape);
  }
  void SetOutput(int i, Value value) override { ctx_.SetOutput(i, std::move(value)); }
  const std::string& node_name() const override { return ctx_.node_name(); }
  int threads() const override { return ctx_.threads(); }

 private:
  KernelContext& ctx_;
};

// The host's kernel as the executor runs it.
class CustomKernelAdapter final : public OpKernel {
 public:
  CustomKernelAdapter(std::unique_ptr<CustomKernel> kernel, std::string op) : kernel_(std::move(kernel)), op_(std::move(op)) {}
  Status Compute(KernelContext& ctx) const override {
    ContextView view(ctx);
    return Guarded(op_ + ": Compute", [&]() -> Status { return kernel_->Compute(view); });
  }

 private:
  const std::unique_ptr<const CustomKernel> kernel_;
  const std::string op_;
};

KernelFactory Adapt(const std::string& op, CustomKernelFactory factory) {
  return [op, factory = std::move(factory)](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    InfoView view(info);
    auto made = Guarded(op + ": the kernel factory",
                        [&]() -> Result<std::unique_ptr<CustomKernel>> { return factory(view); });
    if (!made.ok()) return made.status();
    if (*made == nullptr) return Internal(op + ": the kernel factory returned no kernel");
    return std::unique_ptr<OpKernel>(new CustomKernelAdapter(std::move(made).value(), op));
  };
}

std::string Describe(const std::string& domain, const std::string& op_type) {
  return "custom op " + (domain.empty() ? std::string() : domain + ".") + op_type;
}

}  // namespace

CustomOpSet::CustomOpSet() : state_(std::make_unique<State>()) {}
CustomOpSet::~CustomOpSet() = default;

Status CustomOpSet::Add(const std::string& domain, const std::string& op_type, int since_version,
                        int until_version, CustomKernelFactory factory) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  const std::string what = Describe(domain, op_type);
  if (state_->merged != nullptr) return FailedPrecondition(what + ": the set is already in use by a session");
  if (since_version < 1 || until_version < since_version) {
    return InvalidArgument(what + ": the version range [" + std::to_string(since_version) + ", " +
                           std::to_string(until_version) + "] is empty");
  }
  if (!factory) return InvalidArgument(what + ": no kernel factory");
  state_->defs.push_back({NormalizeDomain(domain), op_type, since_version, until_version, std::move(factory)});
  return Status::Ok();
}

Result<const KernelRegistry*> CustomOpSetAccess::Registry(const CustomOpSet& set) {
  CustomOpSet::State& state = *set.state_;
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.merged == nullptr) {
    // The built-in kernels first, then the host's: KernelRegistry::Register refuses an overlap,
    // so a custom kernel can never silently shadow (or be shadowed by) a built-in one.
    auto registry = std::make_shared<KernelRegistry>();
    ONNXFLOW_RETURN_IF_ERROR(RegisterAllKernels(*registry));
    for (const auto& def : state.defs) {
      const std::string what = Describe(def.domain, def.op_type);
      Status s = registry->Register(def.domain, def.op_type, def.since_version, def.until_version, Adapt(what, def.factory));
      if (!s.ok()) {
        return InvalidArgument(what + " [" + std::to_string(def.since_version) + ", " +
                               (def.until_version == kOpenEnded ? std::string("open") : std::to_string(def.until_version)) +
                               "]: " + s.message());
      }
    }
    state.merged = std::move(registry);
  }
  return state.merged.get();
}

}  // namespace onnxflow
