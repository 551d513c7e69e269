#include "include/onnxflow/custom_op.h"

#include "ops/register_all.h"

namespace onnxflow {

Status CustomOpSet::Add(const std::string& domain, const std::string& op_type, int since_version,
                        int until_version, KernelFactory factory) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string what = "custom op " + (domain.empty() ? std::string() : domain + ".") + op_type;
  if (merged_ != nullptr) return FailedPrecondition(what + ": the set is already in use by a session");
  if (since_version < 1 || until_version < since_version) {
    return InvalidArgument(what + ": the version range [" + std::to_string(since_version) + ", " +
                           std::to_string(until_version) + "] is empty");
  }
  if (!factory) return InvalidArgument(what + ": no kernel factory");
  defs_.push_back(KernelDef{NormalizeDomain(domain), op_type, since_version, until_version, std::move(factory)});
  return Status::Ok();
}

Result<const KernelRegistry*> CustomOpSet::Registry() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (merged_ == nullptr) {
    // The built-in kernels first, then the host's: KernelRegistry::Register refuses an overlap,
    // so a custom kernel can never silently shadow (or be shadowed by) a built-in one.
    auto registry = std::make_shared<KernelRegistry>();
    ONNXFLOW_RETURN_IF_ERROR(RegisterAllKernels(*registry));
    for (const KernelDef& def : defs_) {
      Status s = registry->Register(def.domain, def.op_type, def.since_version, def.until_version, def.factory);
      if (!s.ok()) {
        return InvalidArgument("custom op " + (def.domain.empty() ? std::string() : def.domain + ".") + def.op_type +
                               " [" + std::to_string(def.since_version) + ", " +
                               (def.until_version == kOpenEnded ? std::string("open") : std::to_string(def.until_version)) +
                               "]: " + s.message());
      }
    }
    merged_ = std::move(registry);
  }
  return merged_.get();
}

}  // namespace onnxflow
