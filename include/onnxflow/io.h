// Reading, writing and comparing values as files: serialized TensorProto / SequenceProto /
// OptionalProto (.pb, the ONNX test data format) and NumPy .npy arrays.
#pragma once

#include <string>

#include "include/onnxflow/session.h"
#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

// A .npy file is read as NumPy writes it; anything else as a .pb whose message type follows
// `declared` (sequence -> SequenceProto, optional -> OptionalProto, else TensorProto).
Result<Value> ReadValueFile(const std::string& path, const ValueInfo* declared = nullptr);
// Writes a .pb of the message type `declared` calls for, with `name` set.
Status WriteValueFile(const std::string& path, const Value& value, const std::string& name,
                      const ValueInfo* declared = nullptr);

// Deterministic input values of the given type and shape (the same pattern ONNX Runtime's bench
// script uses: floats (i % 97) / 97 - 0.5, integers i % 7, booleans alternate).
Result<Tensor> FillTensor(DataType dtype, const Shape& shape);

struct Comparison {
  bool match = true;
  double max_abs_error = 0;  // over elements compared numerically
  std::string mismatch;      // the first difference, when !match
};
// Floating-point elements: |actual - expected| <= atol + rtol * |expected|, NaN matches only NaN
// and an infinity only the same infinity. Integers, booleans and strings compare exactly in their
// own type; shapes, types and sequence lengths must match exactly.
Comparison CompareValues(const Value& expected, const Value& actual, double rtol = 1e-3, double atol = 1e-7);

}  // namespace onnxflow
