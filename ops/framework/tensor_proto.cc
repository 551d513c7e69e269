#include "ops/framework/tensor_proto.h"

#include <cstring>

#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

// Bits per element as stored in a TensorProto (sub-byte types are packed there).
int StoredBits(DataType dtype) {
  switch (dtype) {
    case DataType::kUint4: case DataType::kInt4: case DataType::kFloat4E2M1: return 4;
    case DataType::kUint2: case DataType::kInt2: return 2;
    default: return static_cast<int>(ElementSize(dtype)) * 8;
  }
}

// Unpacks `count` sub-byte elements (`bits` wide, LSB first) into one byte each.
void UnpackSubByte(const uint8_t* packed, int64_t count, int bits, bool is_signed, uint8_t* out) {
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  for (int64_t i = 0; i < count; ++i) {
    uint8_t v = (packed[i / per_byte] >> ((i % per_byte) * bits)) & mask;
    if (is_signed && (v & (1 << (bits - 1)))) v |= static_cast<uint8_t>(~mask);  // sign-extend
    out[i] = v;
  }
}

void PackSubByte(const uint8_t* unpacked, int64_t count, int bits, std::string* out) {
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  out->assign((count + per_byte - 1) / per_byte, '\0');
  for (int64_t i = 0; i < count; ++i) {
    (*out)[i / per_byte] = static_cast<char>(static_cast<uint8_t>((*out)[i / per_byte]) |
                                             ((unpacked[i] & mask) << ((i % per_byte) * bits)));
  }
}

Status FillFromBytes(std::string_view bytes, Tensor* t) {
  const DataType dtype = t->dtype();
  const int64_t count = t->size();
  const int bits = StoredBits(dtype);
  const int64_t needed = (count * bits + 7) / 8;
  if (static_cast<int64_t>(bytes.size()) < needed) {
    return InvalidArgument("tensor data holds " + std::to_string(bytes.size()) + " bytes, its shape " +
                           ShapeToString(t->shape()) + " needs " + std::to_string(needed));
  }
  if (bits < 8) {
    UnpackSubByte(reinterpret_cast<const uint8_t*>(bytes.data()), count, bits, IsSignedInteger(dtype),
                  t->mutable_data<uint8_t>());
  } else if (needed > 0) {
    std::memcpy(t->mutable_raw_data(), bytes.data(), needed);
  }
  return Status::Ok();
}

template <typename Field>
Status CheckFieldSize(const Field& field, int64_t needed, const char* name) {
  if (field.size() < needed) {
    return InvalidArgument(std::string("tensor field ") + name + " holds " + std::to_string(field.size()) +
                           " values, its shape needs " + std::to_string(needed));
  }
  return Status::Ok();
}

// int32_data carries every type of 16 bits or less, one element each (sub-byte: packed).
Status FillFromInt32Data(const onnx::TensorProto& p, Tensor* t) {
  const DataType dtype = t->dtype();
  const int64_t count = t->size();
  const int bits = StoredBits(dtype);
  if (bits < 8) {
    const int per_entry = 8 / bits;
    ONNXFLOW_RETURN_IF_ERROR(CheckFieldSize(p.int32_data(), (count + per_entry - 1) / per_entry, "int32_data"));
    std::string bytes;
    for (int32_t v : p.int32_data()) bytes.push_back(static_cast<char>(v & 0xff));
    return FillFromBytes(bytes, t);
  }
  ONNXFLOW_RETURN_IF_ERROR(CheckFieldSize(p.int32_data(), count, "int32_data"));
  for (int64_t i = 0; i < count; ++i) {
    const int32_t v = p.int32_data(i);
    switch (ElementSize(dtype)) {
      case 1: t->mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      case 2: t->mutable_data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
      default: t->mutable_data<int32_t>()[i] = v; break;
    }
  }
  return Status::Ok();
}

// Refuses a tensor whose stored data is shorter than its shape says, before allocating for it.
Status CheckDataPresent(const onnx::TensorProto& p, DataType dtype, int64_t n, const std::string_view* external) {
  const int bits = StoredBits(dtype);
  const int64_t bytes_needed = (n * bits + 7) / 8;
  int64_t have_bytes = 0;
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    have_bytes = external != nullptr ? static_cast<int64_t>(external->size()) : 0;
  } else if (dtype == DataType::kString) {
    return CheckFieldSize(p.string_data(), n, "string_data");
  } else if (p.has_raw_data()) {
    have_bytes = static_cast<int64_t>(p.raw_data().size());
  } else {
    // Typed fields hold at least one stored element (or packed byte) per entry.
    const int64_t entries = p.float_data_size() + p.double_data_size() + p.int32_data_size() +
                            p.int64_data_size() + p.uint64_data_size();
    have_bytes = bits < 8 ? entries : entries * ((bits + 7) / 8) * 2;  // complex: two per element
  }
  if (have_bytes < bytes_needed) {
    return InvalidArgument("its data holds fewer elements than its shape needs (" + std::to_string(n) + ")");
  }
  return Status::Ok();
}

}  // namespace

Result<Tensor> TensorFromProto(const onnx::TensorProto& p, const std::string_view* external, int64_t max_bytes) {
  const std::string where = p.name().empty() ? "tensor" : "tensor '" + p.name() + "'";
  if (!IsValidDataType(p.data_type())) {
    return InvalidArgument(where + " has invalid data_type " + std::to_string(p.data_type()));
  }
  const DataType dtype = static_cast<DataType>(p.data_type());
  Shape shape(p.dims().begin(), p.dims().end());
  auto count = CheckedElementCount(shape);
  if (!count.ok()) return count.status().WithContext(where);
  if (*count > max_bytes / static_cast<int64_t>(ElementSize(dtype))) {
    return ResourceExhausted(where + " of shape " + ShapeToString(shape) + " exceeds the limit of " +
                             std::to_string(max_bytes) + " bytes per tensor");
  }
  if (p.has_segment()) return Unimplemented(where + " is segmented; segmented tensors are not supported");
  if (Status present = CheckDataPresent(p, dtype, *count, external); !present.ok()) {
    return present.WithContext(where);
  }
  Tensor t(dtype, shape);
  const int64_t n = *count;
  Status s;
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    if (external == nullptr) return InvalidArgument(where + " refers to external data that was not provided");
    if (dtype == DataType::kString) return InvalidArgument(where + ": string tensors cannot be external");
    s = FillFromBytes(*external, &t);
  } else if (dtype == DataType::kString) {
    s = CheckFieldSize(p.string_data(), n, "string_data");
    for (int64_t i = 0; s.ok() && i < n; ++i) t.mutable_data<std::string>()[i] = p.string_data(i);
  } else if (p.has_raw_data()) {
    s = FillFromBytes(p.raw_data(), &t);
  } else {
    switch (dtype) {
      case DataType::kFloat: case DataType::kComplex64: {
        const int64_t values = dtype == DataType::kFloat ? n : 2 * n;
        s = CheckFieldSize(p.float_data(), values, "float_data");
        if (s.ok() && values) std::memcpy(t.mutable_raw_data(), p.float_data().data(), values * sizeof(float));
        break;
      }
      case DataType::kDouble: case DataType::kComplex128: {
        const int64_t values = dtype == DataType::kDouble ? n : 2 * n;
        s = CheckFieldSize(p.double_data(), values, "double_data");
        if (s.ok() && values) std::memcpy(t.mutable_raw_data(), p.double_data().data(), values * sizeof(double));
        break;
      }
      case DataType::kInt64:
        s = CheckFieldSize(p.int64_data(), n, "int64_data");
        if (s.ok() && n) std::memcpy(t.mutable_raw_data(), p.int64_data().data(), n * sizeof(int64_t));
        break;
      case DataType::kUint32:
        s = CheckFieldSize(p.uint64_data(), n, "uint64_data");
        for (int64_t i = 0; s.ok() && i < n; ++i) t.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(p.uint64_data(i));
        break;
      case DataType::kUint64:
        s = CheckFieldSize(p.uint64_data(), n, "uint64_data");
        if (s.ok() && n) std::memcpy(t.mutable_raw_data(), p.uint64_data().data(), n * sizeof(uint64_t));
        break;
      default:
        s = FillFromInt32Data(p, &t);
        break;
    }
  }
  if (!s.ok()) return s.WithContext(where);
  return t;
}

void TensorToProto(const Tensor& t, onnx::TensorProto* p) {
  p->set_data_type(static_cast<int32_t>(t.dtype()));
  p->clear_dims();
  for (int64_t d : t.shape()) p->add_dims(d);
  const int64_t n = t.size();
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) p->add_string_data(t.data<std::string>()[i]);
    return;
  }
  const int bits = StoredBits(t.dtype());
  if (bits < 8) {
    PackSubByte(t.data<uint8_t>(), n, bits, p->mutable_raw_data());
  } else {
    p->set_raw_data(static_cast<const char*>(t.raw_data()), t.nbytes());
  }
}

// A MapProto's values are a sequence of one-element tensors, one per key (onnx.numpy_helper's
// from_dict); they become one 1-D tensor beside the keys.
Result<Map> MapFromProto(const onnx::MapProto& p) {
  const std::string where = "map '" + p.name() + "'";
  Map map;
  if (p.key_type() == static_cast<int32_t>(DataType::kString)) {
    map.keys = Tensor(DataType::kString, {static_cast<int64_t>(p.string_keys_size())});
    for (int i = 0; i < p.string_keys_size(); ++i) map.keys.mutable_data<std::string>()[i] = p.string_keys(i);
  } else if (p.key_type() == static_cast<int32_t>(DataType::kInt64)) {
    map.keys = Tensor(DataType::kInt64, {static_cast<int64_t>(p.keys_size())});
    for (int i = 0; i < p.keys_size(); ++i) map.keys.mutable_data<int64_t>()[i] = p.keys(i);
  } else {
    return Unimplemented(where + ": keys must be int64 or string");
  }
  const auto& values = p.values();
  if (values.elem_type() != onnx::SequenceProto::TENSOR || values.tensor_values_size() != map.keys.size()) {
    return InvalidArgument(where + ": needs one tensor value per key");
  }
  for (int i = 0; i < values.tensor_values_size(); ++i) {
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor v, TensorFromProto(values.tensor_values(i)));
    if (v.size() != 1 || v.dtype() == DataType::kUndefined || (i > 0 && v.dtype() != map.values.dtype())) {
      return InvalidArgument(where + ": each value must be one element of the map's value type");
    }
    if (i == 0) map.values = Tensor(v.dtype(), {map.keys.size()});
    const size_t elem = ElementSize(v.dtype());
    if (v.dtype() == DataType::kString) {
      map.values.mutable_data<std::string>()[i] = v.data<std::string>()[0];
    } else {
      std::memcpy(static_cast<char*>(map.values.mutable_raw_data()) + i * elem, v.raw_data(), elem);
    }
  }
  if (!map.values.defined()) map.values = Tensor(DataType::kFloat, {0});
  return map;
}

void MapToProto(const Map& map, onnx::MapProto* p) {
  p->set_key_type(static_cast<int32_t>(map.keys.dtype()));
  for (int64_t i = 0; i < map.keys.size(); ++i) {
    if (map.keys.dtype() == DataType::kString) {
      p->add_string_keys(map.keys.data<std::string>()[i]);
    } else {
      p->add_keys(map.keys.data<int64_t>()[i]);
    }
  }
  auto* values = p->mutable_values();
  values->set_elem_type(onnx::SequenceProto::TENSOR);
  for (int64_t i = 0; i < map.values.size(); ++i) TensorToProto(map.values.SliceAxis0(i, i + 1, false), values->add_tensor_values());
}

Result<Value> ValueFromMapProto(const onnx::MapProto& p) {
  ONNXFLOW_ASSIGN_OR_RETURN(Map map, MapFromProto(p));
  return Value(std::make_shared<const Map>(std::move(map)));
}

void ValueToMapProto(const Value& v, onnx::MapProto* p) {
  if (v.is_map()) MapToProto(v.map(), p);
}

Result<Value> ValueFromSequenceProto(const onnx::SequenceProto& p) {
  if (p.elem_type() == onnx::SequenceProto::MAP) {
    auto seq = std::make_shared<Sequence>();
    for (const auto& mp : p.map_values()) {
      ONNXFLOW_ASSIGN_OR_RETURN(Map map, MapFromProto(mp));
      seq->elem_type = map.values.dtype();
      seq->maps.push_back(std::move(map));
    }
    return Value(std::shared_ptr<const Sequence>(std::move(seq)));
  }
  if (p.elem_type() != onnx::SequenceProto::TENSOR && p.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return Unimplemented("sequence '" + p.name() + "': only sequences of tensors or maps are supported");
  }
  auto seq = std::make_shared<Sequence>();
  for (const auto& tp : p.tensor_values()) {
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(tp));
    seq->elem_type = t.dtype();
    seq->tensors.push_back(std::move(t));
  }
  return Value(std::shared_ptr<const Sequence>(std::move(seq)));
}

Result<Value> ValueFromOptionalProto(const onnx::OptionalProto& p) {
  switch (p.elem_type()) {
    case onnx::OptionalProto::UNDEFINED:
      return Value();
    case onnx::OptionalProto::TENSOR:
      if (!p.has_tensor_value()) return Value();
      {
        ONNXFLOW_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(p.tensor_value()));
        return Value(std::move(t));
      }
    case onnx::OptionalProto::SEQUENCE:
      if (!p.has_sequence_value()) return Value();
      return ValueFromSequenceProto(p.sequence_value());
    default:
      return Unimplemented("optional '" + p.name() + "' holds an unsupported element kind");
  }
}

void ValueToSequenceProto(const Value& v, onnx::SequenceProto* p) {
  if (v.is_sequence() && !v.sequence().maps.empty()) {
    p->set_elem_type(onnx::SequenceProto::MAP);
    for (const Map& map : v.sequence().maps) MapToProto(map, p->add_map_values());
    return;
  }
  p->set_elem_type(onnx::SequenceProto::TENSOR);
  if (!v.is_sequence()) return;
  for (const Tensor& t : v.sequence().tensors) TensorToProto(t, p->add_tensor_values());
}

void ValueToOptionalProto(const Value& v, onnx::OptionalProto* p) {
  if (v.is_tensor()) {
    p->set_elem_type(onnx::OptionalProto::TENSOR);
    TensorToProto(v.tensor(), p->mutable_tensor_value());
  } else if (v.is_sequence()) {
    p->set_elem_type(onnx::OptionalProto::SEQUENCE);
    ValueToSequenceProto(v, p->mutable_sequence_value());
  }
}

}  // namespace onnxflow
