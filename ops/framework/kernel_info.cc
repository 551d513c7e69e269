#include "ops/framework/kernel_info.h"

#include "ops/framework/tensor_proto.h"

namespace onnxflow {

const onnx::AttributeProto* KernelInfo::attribute(const std::string& name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

namespace {

using Type = onnx::AttributeProto::AttributeType;

const char* TypeName(Type t) {
  switch (t) {
    case onnx::AttributeProto::FLOAT: return "FLOAT";
    case onnx::AttributeProto::INT: return "INT";
    case onnx::AttributeProto::STRING: return "STRING";
    case onnx::AttributeProto::TENSOR: return "TENSOR";
    case onnx::AttributeProto::GRAPH: return "GRAPH";
    case onnx::AttributeProto::SPARSE_TENSOR: return "SPARSE_TENSOR";
    case onnx::AttributeProto::TYPE_PROTO: return "TYPE_PROTO";
    case onnx::AttributeProto::FLOATS: return "FLOATS";
    case onnx::AttributeProto::INTS: return "INTS";
    case onnx::AttributeProto::STRINGS: return "STRINGS";
    case onnx::AttributeProto::TENSORS: return "TENSORS";
    case onnx::AttributeProto::GRAPHS: return "GRAPHS";
    case onnx::AttributeProto::SPARSE_TENSORS: return "SPARSE_TENSORS";
    case onnx::AttributeProto::TYPE_PROTOS: return "TYPE_PROTOS";
    default: return "UNDEFINED";
  }
}

// The kind of value the attribute actually holds, from its fields (UNDEFINED when none is set: a
// proto3-style writer omits a zero scalar).
Type HeldType(const onnx::AttributeProto& a) {
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.has_g()) return onnx::AttributeProto::GRAPH;
  if (a.floats_size()) return onnx::AttributeProto::FLOATS;
  if (a.ints_size()) return onnx::AttributeProto::INTS;
  if (a.strings_size()) return onnx::AttributeProto::STRINGS;
  if (a.tensors_size()) return onnx::AttributeProto::TENSORS;
  if (a.graphs_size()) return onnx::AttributeProto::GRAPHS;
  return onnx::AttributeProto::UNDEFINED;
}

}  // namespace

const onnx::AttributeProto* KernelInfo::Typed(const std::string& name, Type type) const {
  const auto* a = attribute(name);
  if (a == nullptr) return nullptr;
  // The declared type decides; IR-1 files that leave it out are judged by the field they set.
  const Type declared = a->type() != onnx::AttributeProto::UNDEFINED ? a->type() : HeldType(*a);
  const Type held = HeldType(*a);
  std::string error;
  if (declared != type && declared != onnx::AttributeProto::UNDEFINED) {
    error = std::string("attribute '") + name + "' is " + TypeName(declared) + ", expected " + TypeName(type);
  } else if (held != type && held != onnx::AttributeProto::UNDEFINED) {
    error = std::string("attribute '") + name + "' is declared " + TypeName(type) + " but holds " + TypeName(held);
  }
  if (error.empty()) return a;
  if (attribute_error_.empty()) attribute_error_ = std::move(error);
  return nullptr;
}

Status KernelInfo::attribute_status() const {
  return attribute_error_.empty() ? Status() : InvalidArgument(attribute_error_);
}

int64_t KernelInfo::GetInt(const std::string& name, int64_t default_value) const {
  const auto* a = Typed(name, onnx::AttributeProto::INT);
  return a != nullptr ? a->i() : default_value;
}

float KernelInfo::GetFloat(const std::string& name, float default_value) const {
  const auto* a = Typed(name, onnx::AttributeProto::FLOAT);
  return a != nullptr ? a->f() : default_value;
}

std::string KernelInfo::GetString(const std::string& name, const std::string& default_value) const {
  const auto* a = Typed(name, onnx::AttributeProto::STRING);
  return a != nullptr ? a->s() : default_value;
}

std::vector<int64_t> KernelInfo::GetInts(const std::string& name, std::vector<int64_t> default_value) const {
  const auto* a = Typed(name, onnx::AttributeProto::INTS);
  if (a == nullptr) return default_value;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> KernelInfo::GetFloats(const std::string& name, std::vector<float> default_value) const {
  const auto* a = Typed(name, onnx::AttributeProto::FLOATS);
  if (a == nullptr) return default_value;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::vector<std::string> KernelInfo::GetStrings(const std::string& name,
                                                std::vector<std::string> default_value) const {
  const auto* a = Typed(name, onnx::AttributeProto::STRINGS);
  if (a == nullptr) return default_value;
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

Result<int64_t> KernelInfo::RequireInt(const std::string& name) const {
  if (attribute(name) == nullptr) return InvalidArgument("attribute '" + name + "' is required");
  const auto* a = Typed(name, onnx::AttributeProto::INT);
  if (a == nullptr) return attribute_status();
  return a->i();
}

Result<Tensor> KernelInfo::GetTensor(const std::string& name) const {
  if (attribute(name) == nullptr) return InvalidArgument("tensor attribute '" + name + "' is required");
  const auto* a = Typed(name, onnx::AttributeProto::TENSOR);
  if (a == nullptr) return attribute_status();
  if (!a->has_t()) return InvalidArgument("tensor attribute '" + name + "' holds no tensor");
  return TensorFromProto(a->t());
}

}  // namespace onnxflow
