// Tensors in the protocol's encodings: datatype names, JSON "data" arrays, and the raw bytes of
// the binary data extension (HTTP) and of raw_input_contents / raw_output_contents (gRPC).
//
// Raw layout (the protocol's): elements in row-major order, little-endian as they sit in memory;
// BOOL one byte each; BYTES each element as a 4-byte little-endian length, then its bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "include/onnxflow/session.h"
#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow::server {

// "FP32", "INT64", "BYTES", ...; "" when the protocol has no name for the type.
const char* DatatypeName(DataType dtype);
// The inverse; kUndefined for a name the protocol does not define.
DataType ParseDatatype(const std::string& name);

// The element count of a shape taken from a request: dims must be >= 0 and the tensor within
// `max_bytes` (checked before anything is allocated, so a forged shape cannot exhaust memory).
Result<int64_t> CheckedElementCount(const std::string& name, DataType dtype, const Shape& shape, int64_t max_bytes);

// A tensor from a JSON "data" array (flat, or nested to the shape's depth).
Result<Tensor> TensorFromJson(const std::string& name, DataType dtype, const Shape& shape,
                              const nlohmann::json& data, int64_t max_bytes);
// The flat JSON array of a tensor's elements.
Result<nlohmann::json> TensorToJson(const std::string& name, const Tensor& tensor);

// A tensor from raw bytes (copied: the request's buffer need not be aligned or outlive the run).
Result<Tensor> TensorFromRaw(const std::string& name, DataType dtype, const Shape& shape, std::string_view bytes,
                             int64_t max_bytes);
// Appends a tensor's raw bytes to `out`.
void AppendRaw(const Tensor& tensor, std::string* out);
// The size AppendRaw adds.
size_t RawSize(const Tensor& tensor);

}  // namespace onnxflow::server
