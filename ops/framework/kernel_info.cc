#include "ops/framework/kernel_info.h"

#include "ops/framework/tensor_proto.h"

namespace onnxflow {

const onnx::AttributeProto* KernelInfo::attribute(const std::string& name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t KernelInfo::GetInt(const std::string& name, int64_t default_value) const {
  const auto* a = attribute(name);
  return a != nullptr ? a->i() : default_value;
}

float KernelInfo::GetFloat(const std::string& name, float default_value) const {
  const auto* a = attribute(name);
  return a != nullptr ? a->f() : default_value;
}

std::string KernelInfo::GetString(const std::string& name, const std::string& default_value) const {
  const auto* a = attribute(name);
  return a != nullptr ? a->s() : default_value;
}

std::vector<int64_t> KernelInfo::GetInts(const std::string& name, std::vector<int64_t> default_value) const {
  const auto* a = attribute(name);
  if (a == nullptr) return default_value;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> KernelInfo::GetFloats(const std::string& name, std::vector<float> default_value) const {
  const auto* a = attribute(name);
  if (a == nullptr) return default_value;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::vector<std::string> KernelInfo::GetStrings(const std::string& name,
                                                std::vector<std::string> default_value) const {
  const auto* a = attribute(name);
  if (a == nullptr) return default_value;
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

Result<int64_t> KernelInfo::RequireInt(const std::string& name) const {
  const auto* a = attribute(name);
  if (a == nullptr) return InvalidArgument("attribute '" + name + "' is required");
  return a->i();
}

Result<Tensor> KernelInfo::GetTensor(const std::string& name) const {
  const auto* a = attribute(name);
  if (a == nullptr || !a->has_t()) return InvalidArgument("tensor attribute '" + name + "' is required");
  return TensorFromProto(a->t());
}

}  // namespace onnxflow
