#include "ops/framework/registry.h"

namespace onnxflow {

Result<std::unique_ptr<OpKernel>> KernelDef::Create(const KernelInfo& info) const {
  Result<std::unique_ptr<OpKernel>> kernel = factory(info);
  ONNXFLOW_RETURN_IF_ERROR(info.attribute_status());
  return kernel;
}

std::string NormalizeDomain(const std::string& domain) { return domain == "ai.onnx" ? kOnnxDomain : domain; }

Status KernelRegistry::Register(std::string_view domain_view, std::string_view op_view, int since_version,
                                int until_version, KernelFactory factory) {
  const std::string domain = NormalizeDomain(std::string(domain_view)), op_type(op_view);
  auto& defs = kernels_[{domain, op_type}];
  for (const KernelDef& d : defs) {
    if (since_version <= d.until_version && d.since_version <= until_version) {
      return Internal("kernel for " + op_type + " [" + std::to_string(since_version) + ", " +
                      std::to_string(until_version) + "] overlaps one registered for [" +
                      std::to_string(d.since_version) + ", " + std::to_string(d.until_version) + "]");
    }
  }
  defs.push_back(KernelDef{domain, op_type, since_version, until_version, std::move(factory)});
  return Status::Ok();
}

const KernelDef* KernelRegistry::Find(const std::string& domain, const std::string& op_type, int version) const {
  auto it = kernels_.find({NormalizeDomain(domain), op_type});
  if (it == kernels_.end()) return nullptr;
  for (const KernelDef& d : it->second) {
    if (d.since_version <= version && version <= d.until_version) return &d;
  }
  return nullptr;
}

bool KernelRegistry::HasOp(const std::string& domain, const std::string& op_type) const {
  return kernels_.count({NormalizeDomain(domain), op_type}) > 0;
}

Status RegisterEach(KernelRegistry& registry, std::initializer_list<Registrar> registrars) {
  for (Registrar registrar : registrars) ONNXFLOW_RETURN_IF_ERROR(registrar(registry));
  return Status::Ok();
}

}  // namespace onnxflow
