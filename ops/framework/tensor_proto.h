// TensorProto <-> Tensor, for every ONNX element type, with every size checked against the bytes
// actually present (a lying tensor is refused, never read past).
#pragma once

#include <string>
#include <string_view>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "proto/onnx.pb.h"

namespace onnxflow {

// `external` supplies the bytes of a tensor stored outside the model (data_location EXTERNAL);
// nullptr refuses such tensors. `max_bytes` bounds the tensor's size in memory.
Result<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string_view* external = nullptr,
                               int64_t max_bytes = int64_t{1} << 40);
// Writes raw_data (or string_data), dims and data_type; name is left to the caller.
void TensorToProto(const Tensor& tensor, onnx::TensorProto* proto);

// Values that are not plain tensors, as SequenceProto / OptionalProto (the test data's form).
Result<Value> ValueFromSequenceProto(const onnx::SequenceProto& proto);
Result<Value> ValueFromOptionalProto(const onnx::OptionalProto& proto);
void ValueToSequenceProto(const Value& value, onnx::SequenceProto* proto);
void ValueToOptionalProto(const Value& value, onnx::OptionalProto* proto);
Result<Value> ValueFromMapProto(const onnx::MapProto& proto);
void ValueToMapProto(const Value& value, onnx::MapProto* proto);

}  // namespace onnxflow
