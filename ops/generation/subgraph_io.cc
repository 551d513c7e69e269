#include "ops/generation/subgraph_io.h"

#include <cstring>

namespace onnxflow::generation {

std::vector<int64_t> DeclaredInputDims(const KernelInfo& info, const std::string& attr, int index) {
  const onnx::AttributeProto* a = info.attribute(attr);
  if (a == nullptr || !a->has_g() || index >= a->g().input_size()) return {};
  const onnx::TypeProto& type = a->g().input(index).type();
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return {};
  std::vector<int64_t> dims;
  for (const auto& d : type.tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

Result<const Subgraph*> RequireSubgraph(const KernelInfo& info, const std::string& attr) {
  const Subgraph* g = info.subgraph(attr);
  if (g == nullptr) return InvalidArgument("graph attribute '" + attr + "' is required");
  return g;
}

Status ExpectName(const std::vector<std::string>& names, int index, const std::string& name, const std::string& attr,
                  const char* kind) {
  if (index >= static_cast<int>(names.size()) || names[index] != name) {
    return InvalidArgument("graph '" + attr + "': " + kind + " " + std::to_string(index) + " must be '" + name +
                           "', got '" + (index < static_cast<int>(names.size()) ? names[index] : std::string("(none)")) +
                           "'");
  }
  return Status::Ok();
}

Status LastLogits(const Value& logits, const std::string& graph, int batch, int beams, int vocab,
                  std::vector<float>* out) {
  const int rows = batch * beams;
  const Tensor* t = logits.is_tensor() ? &logits.tensor() : nullptr;
  if (t == nullptr || t->dtype() != DataType::kFloat || t->rank() != 3 || t->dim(2) != vocab ||
      (t->dim(0) != rows && t->dim(0) != batch) || t->dim(1) < 1) {
    return InvalidArgument("graph '" + graph + "' returned logits " +
                           (t == nullptr ? std::string("that are not a tensor")
                                         : std::string(DataTypeName(t->dtype())) + " " + ShapeToString(t->shape())) +
                           "; expected float32 [" + std::to_string(rows) + ", length, " + std::to_string(vocab) + "]");
  }
  const int64_t length = t->dim(1);
  const bool per_sentence = t->dim(0) != rows;
  out->resize(static_cast<size_t>(rows) * vocab);
  for (int r = 0; r < rows; ++r) {
    const int64_t source = per_sentence ? r / beams : r;
    std::memcpy(out->data() + static_cast<size_t>(r) * vocab, t->data<float>() + ((source + 1) * length - 1) * vocab,
                sizeof(float) * vocab);
  }
  return Status::Ok();
}

Result<Tensor> GatherRows(const Tensor& t, int axis, const std::vector<int32_t>& rows, const std::string& what) {
  if (t.rank() <= axis || t.dtype() == DataType::kString) {
    return InvalidArgument(what + " has shape " + ShapeToString(t.shape()) + ", too few dims");
  }
  const int64_t n = t.dim(axis);
  for (int32_t r : rows) {
    if (r < 0 || r >= n) {
      return InvalidArgument(what + " has shape " + ShapeToString(t.shape()) + ": no row " + std::to_string(r) +
                             " on axis " + std::to_string(axis));
    }
  }
  int64_t outer = 1, block = 1;
  for (int d = 0; d < axis; ++d) outer *= t.dim(d);
  for (int64_t d = axis + 1; d < t.rank(); ++d) block *= t.dim(d);
  Shape shape = t.shape();
  shape[axis] = static_cast<int64_t>(rows.size());
  Tensor out = Tensor::Uninitialized(t.dtype(), shape);
  const size_t bytes = static_cast<size_t>(block) * ElementSize(t.dtype());
  const char* from = static_cast<const char*>(t.raw_data());
  char* to = static_cast<char*>(out.mutable_raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t j = 0; j < rows.size(); ++j) {
      std::memcpy(to + (o * rows.size() + j) * bytes, from + (o * n + rows[j]) * bytes, bytes);
    }
  }
  return out;
}

}  // namespace onnxflow::generation
