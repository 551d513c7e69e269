// Writing a NodeProto's attributes (each setter replaces an attribute of that name, or adds it):
// what the internal ops' specs (internal_ops.h) use in their WriteTo.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/onnx.pb.h"

namespace onnxflow {

// The attribute `name` of `node` (its old value cleared), or a new one, of `type`.
inline onnx::AttributeProto* ResetAttribute(onnx::NodeProto& node, const std::string& name,
                                            onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* a = nullptr;
  for (auto& existing : *node.mutable_attribute()) {
    if (existing.name() == name) a = &existing;
  }
  if (a == nullptr) {
    a = node.add_attribute();
  } else {
    a->Clear();
  }
  a->set_name(name);
  a->set_type(type);
  return a;
}

inline void SetAttribute(onnx::NodeProto& node, const std::string& name, int64_t value) {
  ResetAttribute(node, name, onnx::AttributeProto::INT)->set_i(value);
}
inline void SetAttribute(onnx::NodeProto& node, const std::string& name, float value) {
  ResetAttribute(node, name, onnx::AttributeProto::FLOAT)->set_f(value);
}
inline void SetAttribute(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  ResetAttribute(node, name, onnx::AttributeProto::STRING)->set_s(value);
}
inline void SetAttribute(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = ResetAttribute(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
inline void SetAttribute(onnx::NodeProto& node, const std::string& name, const std::vector<float>& values) {
  auto* a = ResetAttribute(node, name, onnx::AttributeProto::FLOATS);
  for (float v : values) a->add_floats(v);
}
inline void SetAttribute(onnx::NodeProto& node, const std::string& name, const std::vector<std::string>& values) {
  auto* a = ResetAttribute(node, name, onnx::AttributeProto::STRINGS);
  for (const auto& v : values) a->add_strings(v);
}

// Removes attribute `name` from `node` (nothing when it has none).
inline void RemoveAttribute(onnx::NodeProto& node, const std::string& name) {
  auto* attributes = node.mutable_attribute();
  for (int i = 0; i < attributes->size(); ++i) {
    if (attributes->Get(i).name() == name) {
      attributes->DeleteSubrange(i, 1);
      return;
    }
  }
}

}  // namespace onnxflow
