// What a kernel factory sees at load: the node, its attributes, the opset it was resolved at,
// what is known about its inputs (types, constant values for pre-packing) and its subgraphs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "proto/onnx.pb.h"

namespace onnxflow {

class Subgraph;

class KernelInfo {
 public:
  KernelInfo(const onnx::NodeProto& node, int opset, std::vector<DataType> input_types,
             std::vector<const Tensor*> constant_inputs, std::map<std::string, const Subgraph*> subgraphs)
      : node_(node), opset_(opset), input_types_(std::move(input_types)),
        constant_inputs_(std::move(constant_inputs)), subgraphs_(std::move(subgraphs)) {}

  const onnx::NodeProto& node() const { return node_; }
  const std::string& name() const { return node_.name(); }
  const std::string& op_type() const { return node_.op_type(); }
  // The model's opset for this node's domain; kernels that span versions switch on it.
  int opset() const { return opset_; }

  int input_count() const { return node_.input_size(); }
  bool has_input(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  int output_count() const { return node_.output_size(); }
  bool has_output(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }
  // kUndefined when not known at load.
  DataType input_type(int i) const {
    return i < static_cast<int>(input_types_.size()) ? input_types_[i] : DataType::kUndefined;
  }
  // An output's type as inferred or declared at load (kUndefined when not known): what fixes a type
  // constraint no input binds (LinearAttention's state type without a past state).
  DataType output_type(int i) const {
    return i < static_cast<int>(output_types_.size()) ? output_types_[i] : DataType::kUndefined;
  }
  void set_output_types(std::vector<DataType> types) { output_types_ = std::move(types); }
  // The value of input i when it is an initializer or folded constant, else nullptr.
  const Tensor* constant_input(int i) const {
    return i < static_cast<int>(constant_inputs_.size()) ? constant_inputs_[i] : nullptr;
  }

  const onnx::AttributeProto* attribute(const std::string& name) const;
  bool has_attribute(const std::string& name) const { return attribute(name) != nullptr; }
  int64_t GetInt(const std::string& name, int64_t default_value) const;
  float GetFloat(const std::string& name, float default_value) const;
  std::string GetString(const std::string& name, const std::string& default_value) const;
  std::vector<int64_t> GetInts(const std::string& name, std::vector<int64_t> default_value = {}) const;
  std::vector<float> GetFloats(const std::string& name, std::vector<float> default_value = {}) const;
  std::vector<std::string> GetStrings(const std::string& name, std::vector<std::string> default_value = {}) const;
  // Required attributes: an error naming the attribute when it is missing.
  Result<int64_t> RequireInt(const std::string& name) const;
  Result<Tensor> GetTensor(const std::string& name) const;
  // OK, or the first attribute a getter above found of another type than it reads (an INT read
  // from a FLOAT, a type field naming one kind while another is set). KernelDef::Create checks it
  // after the factory, so no kernel is built on an attribute it misread as its default.
  Status attribute_status() const;
  const Subgraph* subgraph(const std::string& attribute_name) const {
    auto it = subgraphs_.find(attribute_name);
    return it == subgraphs_.end() ? nullptr : it->second;
  }

 private:
  const onnx::NodeProto& node_;
  int opset_;
  std::vector<DataType> input_types_;
  std::vector<DataType> output_types_;
  std::vector<const Tensor*> constant_inputs_;
  std::map<std::string, const Subgraph*> subgraphs_;
  mutable std::string attribute_error_;  // the first misread attribute (load time, one thread)

  // The attribute `name` when it holds a value of `type`; nullptr when absent, or when it holds
  // another kind of value (then recorded in attribute_error_).
  const onnx::AttributeProto* Typed(const std::string& name, onnx::AttributeProto::AttributeType type) const;
};

}  // namespace onnxflow
