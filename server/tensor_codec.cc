#include "server/tensor_codec.h"

#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace onnxflow::server {
namespace {

struct NamedType {
  DataType dtype;
  const char* name;
};
constexpr NamedType kTypes[] = {
    {DataType::kBool, "BOOL"},     {DataType::kUint8, "UINT8"},   {DataType::kUint16, "UINT16"},
    {DataType::kUint32, "UINT32"}, {DataType::kUint64, "UINT64"}, {DataType::kInt8, "INT8"},
    {DataType::kInt16, "INT16"},   {DataType::kInt32, "INT32"},   {DataType::kInt64, "INT64"},
    {DataType::kFloat16, "FP16"},  {DataType::kFloat, "FP32"},    {DataType::kDouble, "FP64"},
    {DataType::kString, "BYTES"},  {DataType::kBFloat16, "BF16"},
};

// Leaves of a (possibly nested) JSON array, in row-major order.
Status Flatten(const nlohmann::json& data, std::vector<const nlohmann::json*>* out, int depth) {
  if (!data.is_array()) {
    out->push_back(&data);
    return Status::Ok();
  }
  if (depth > 64) return InvalidArgument("data is nested too deeply");
  for (const auto& item : data) ONNXFLOW_RETURN_IF_ERROR(Flatten(item, out, depth + 1));
  return Status::Ok();
}

template <typename T>
Status FromJsonNumbers(const std::string& name, const std::vector<const nlohmann::json*>& items, T* out) {
  for (size_t i = 0; i < items.size(); ++i) {
    const nlohmann::json& v = *items[i];
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) return InvalidArgument("input '" + name + "': element " + std::to_string(i) + " is not a boolean (BOOL)");
      out[i] = v.get<bool>();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) return InvalidArgument("input '" + name + "': element " + std::to_string(i) + " is not a number");
      out[i] = static_cast<T>(v.get<double>());
    } else {
      bool fits = false;
      if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        fits = u <= static_cast<uint64_t>(std::numeric_limits<T>::max());
        out[i] = static_cast<T>(u);
      } else if (v.is_number_integer()) {
        const int64_t s = v.get<int64_t>();
        fits = std::is_signed_v<T> ? s >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                                         s <= static_cast<int64_t>(std::numeric_limits<T>::max())
                                   : s >= 0 && static_cast<uint64_t>(s) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
        out[i] = static_cast<T>(s);
      } else {
        return InvalidArgument("input '" + name + "': element " + std::to_string(i) + " is not an integer");
      }
      if (!fits) return InvalidArgument("input '" + name + "': element " + std::to_string(i) + " (" + v.dump() + ") is out of range for its datatype");
    }
  }
  return Status::Ok();
}

template <typename T>
nlohmann::json ToJsonNumbers(const Tensor& t) {
  nlohmann::json out = nlohmann::json::array();
  const T* p = t.data<T>();
  const int64_t n = t.size();
  auto& array = out.get_ref<nlohmann::json::array_t&>();
  array.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) array.emplace_back(p[i]);
  return out;
}

}  // namespace

const char* DatatypeName(DataType dtype) {
  for (const auto& t : kTypes) {
    if (t.dtype == dtype) return t.name;
  }
  return "";
}

DataType ParseDatatype(const std::string& name) {
  for (const auto& t : kTypes) {
    if (name == t.name) return t.dtype;
  }
  return DataType::kUndefined;
}

Result<int64_t> CheckedElementCount(const std::string& name, DataType dtype, const Shape& shape, int64_t max_bytes) {
  int64_t count = 1;
  // Strings are counted at their handle's size: what the tensor allocates before any text.
  const int64_t element = static_cast<int64_t>(ElementSize(dtype));
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument("input '" + name + "' has a negative dimension in shape " + ShapeToString(shape));
    if (d != 0 && count > max_bytes / d) {
      return ResourceExhausted("input '" + name + "' of shape " + ShapeToString(shape) + " is over the request size limit");
    }
    count *= d;
  }
  if (element > 0 && count > max_bytes / element) {
    return ResourceExhausted("input '" + name + "' of shape " + ShapeToString(shape) + " is over the request size limit");
  }
  return count;
}

Result<Tensor> TensorFromJson(const std::string& name, DataType dtype, const Shape& shape, const nlohmann::json& data,
                              int64_t max_bytes) {
  ONNXFLOW_ASSIGN_OR_RETURN(const int64_t count, CheckedElementCount(name, dtype, shape, max_bytes));
  std::vector<const nlohmann::json*> items;
  ONNXFLOW_RETURN_IF_ERROR(Flatten(data, &items, 0));
  if (static_cast<int64_t>(items.size()) != count) {
    return InvalidArgument("input '" + name + "' has " + std::to_string(items.size()) + " elements in 'data', shape " +
                           ShapeToString(shape) + " needs " + std::to_string(count));
  }
  Tensor t = Tensor::Uninitialized(dtype, shape);
  switch (dtype) {
    case DataType::kBool: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<bool>())); break;
    case DataType::kUint8: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<uint8_t>())); break;
    case DataType::kUint16: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<uint16_t>())); break;
    case DataType::kUint32: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<uint32_t>())); break;
    case DataType::kUint64: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<uint64_t>())); break;
    case DataType::kInt8: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<int8_t>())); break;
    case DataType::kInt16: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<int16_t>())); break;
    case DataType::kInt32: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<int32_t>())); break;
    case DataType::kInt64: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<int64_t>())); break;
    case DataType::kFloat: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<float>())); break;
    case DataType::kDouble: ONNXFLOW_RETURN_IF_ERROR(FromJsonNumbers(name, items, t.mutable_data<double>())); break;
    case DataType::kString: {
      std::string* out = t.mutable_data<std::string>();
      for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i]->is_string()) return InvalidArgument("input '" + name + "': element " + std::to_string(i) + " is not a string (BYTES)");
        out[i] = items[i]->get<std::string>();
      }
      break;
    }
    default:
      return InvalidArgument("input '" + name + "': datatype " + DatatypeName(dtype) +
                             " is not accepted as JSON; send it with the binary data extension");
  }
  return t;
}

Result<nlohmann::json> TensorToJson(const std::string& name, const Tensor& t) {
  switch (t.dtype()) {
    case DataType::kBool: return ToJsonNumbers<bool>(t);
    case DataType::kUint8: return ToJsonNumbers<uint8_t>(t);
    case DataType::kUint16: return ToJsonNumbers<uint16_t>(t);
    case DataType::kUint32: return ToJsonNumbers<uint32_t>(t);
    case DataType::kUint64: return ToJsonNumbers<uint64_t>(t);
    case DataType::kInt8: return ToJsonNumbers<int8_t>(t);
    case DataType::kInt16: return ToJsonNumbers<int16_t>(t);
    case DataType::kInt32: return ToJsonNumbers<int32_t>(t);
    case DataType::kInt64: return ToJsonNumbers<int64_t>(t);
    case DataType::kFloat: return ToJsonNumbers<float>(t);
    case DataType::kDouble: return ToJsonNumbers<double>(t);
    case DataType::kString: return ToJsonNumbers<std::string>(t);
    default:
      return InvalidArgument(std::string("output '") + name + "' has datatype " + DataTypeName(t.dtype()) +
                             ", which JSON cannot carry; ask for it with \"binary_data\": true");
  }
}

Result<Tensor> TensorFromRaw(const std::string& name, DataType dtype, const Shape& shape, std::string_view bytes,
                             int64_t max_bytes) {
  ONNXFLOW_ASSIGN_OR_RETURN(const int64_t count, CheckedElementCount(name, dtype, shape, max_bytes));
  if (dtype == DataType::kString) {
    std::vector<std::string_view> items;
    size_t at = 0;
    while (at < bytes.size()) {
      if (bytes.size() - at < 4) return InvalidArgument("input '" + name + "': BYTES data ends inside an element's length");
      uint32_t length;
      std::memcpy(&length, bytes.data() + at, 4);
      at += 4;
      if (bytes.size() - at < length) return InvalidArgument("input '" + name + "': BYTES element " + std::to_string(items.size()) + " runs past the data");
      items.push_back(bytes.substr(at, length));
      at += length;
    }
    if (static_cast<int64_t>(items.size()) != count) {
      return InvalidArgument("input '" + name + "' has " + std::to_string(items.size()) + " BYTES elements, shape " +
                             ShapeToString(shape) + " needs " + std::to_string(count));
    }
    Tensor t(dtype, shape);
    for (size_t i = 0; i < items.size(); ++i) t.mutable_data<std::string>()[i] = std::string(items[i]);
    return t;
  }
  const size_t element = ElementSize(dtype);
  if (bytes.size() != static_cast<size_t>(count) * element) {
    return InvalidArgument("input '" + name + "' has " + std::to_string(bytes.size()) + " bytes of data, shape " +
                           ShapeToString(shape) + " of " + DatatypeName(dtype) + " needs " +
                           std::to_string(static_cast<size_t>(count) * element));
  }
  Tensor t = Tensor::Uninitialized(dtype, shape);
  if (!bytes.empty()) std::memcpy(t.mutable_raw_data(), bytes.data(), bytes.size());
  return t;
}

size_t RawSize(const Tensor& t) {
  if (t.dtype() != DataType::kString) return t.nbytes();
  size_t size = 0;
  for (int64_t i = 0; i < t.size(); ++i) size += 4 + t.data<std::string>()[i].size();
  return size;
}

void AppendRaw(const Tensor& t, std::string* out) {
  if (t.dtype() != DataType::kString) {
    out->append(static_cast<const char*>(t.raw_data()), t.nbytes());
    return;
  }
  for (int64_t i = 0; i < t.size(); ++i) {
    const std::string& s = t.data<std::string>()[i];
    const uint32_t length = static_cast<uint32_t>(s.size());
    char prefix[4];
    std::memcpy(prefix, &length, 4);
    out->append(prefix, 4);
    out->append(s);
  }
}

}  // namespace onnxflow::server
