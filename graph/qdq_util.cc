#include "graph/qdq_util.h"

#include <string>
#include <utility>

#include "ops/framework/domains.h"

namespace onnxflow::graph {
namespace {

float ZeroValue(const Tensor& z, int64_t i) {
  return z.dtype() == DataType::kInt8 ? static_cast<float>(z.data<int8_t>()[i]) : static_cast<float>(z.data<uint8_t>()[i]);
}

}  // namespace

bool IsQdqOp(const Node& n, const char* op) {
  return (n.domain.empty() || n.domain == kMsDomain) && n.op_type() == op;
}

const Tensor* Constant(const Graph& g, const onnx::NodeProto& n, int input) {
  if (input >= n.input_size() || n.input(input).empty()) return nullptr;
  auto it = g.constants.find(n.input(input));
  return it == g.constants.end() ? nullptr : &it->second;
}

DataType QuantizedType(const Graph& g, const Node& n, const Tensor* zero, const std::string& quantized) {
  DataType type = zero != nullptr ? zero->dtype() : KnownType(g, quantized);
  if (zero == nullptr && IsQdqOp(n, "QuantizeLinear")) {
    const auto* dtype = Attr(*n.proto, "output_dtype");
    type = dtype != nullptr ? static_cast<DataType>(dtype->i()) : DataType::kUint8;
  }
  return type;
}

void AddConstant(const Graph& g, Patch* patch, const std::string& name, Tensor t) {
  if (g.constants.count(name)) return;
  for (const auto& [n, c] : patch->constants) {
    if (n == name) return;
  }
  patch->constants.emplace_back(name, std::move(t));
}

std::string ZeroConstant(const Graph& g, Patch* patch, DataType type) {
  const std::string name = std::string("onnxflow_qdq_zero_") + DataTypeName(type);
  AddConstant(g, patch, name, type == DataType::kInt8 ? Tensor::Scalar<int8_t>(0) : Tensor::Scalar<uint8_t>(0));
  return name;
}

bool PerTensorParams(const Graph& g, Patch* patch, const Node& n, const std::string& quantized, QSide* side) {
  const auto& p = *n.proto;
  if (p.input_size() < 2 || Attr(p, "block_size") != nullptr) return false;
  const Tensor* scale = Constant(g, p, 1);
  const Tensor* zero = Constant(g, p, 2);
  if (scale == nullptr || scale->dtype() != DataType::kFloat || scale->size() != 1) return false;
  if (p.input_size() > 2 && !p.input(2).empty() && (zero == nullptr || zero->size() != 1)) return false;
  const DataType type = QuantizedType(g, n, zero, quantized);
  if (!Is8Bit(type)) return false;
  if (const auto* sat = Attr(p, "saturate"); sat != nullptr && sat->i() == 0) return false;
  side->value = quantized;
  side->scale = p.input(1);
  side->zero = zero != nullptr ? p.input(2) : ZeroConstant(g, patch, type);
  side->type = type;
  side->scale_value = scale->data<float>()[0];
  side->zero_value = zero != nullptr ? ZeroValue(*zero, 0) : 0.f;
  return true;
}

}  // namespace onnxflow::graph
