#include "include/onnxflow/io.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ops/framework/compare.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/framework/tensor_proto.h"

namespace onnxflow {
namespace {

// The file's bytes in one read into a string of the file's size. (Through a string stream, a
// 4.9 MB input took 13.3 MB of heap at once, the stream's doubling buffer and the copy str()
// returns, and the heap kept the pages: YOLOv8n's 640 x 640 input cost run_model 2 MB of peak RSS.)
// A file whose size is unknown (a pipe) is read as it comes.
Result<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return NotFound("cannot open '" + path + "'");
  const std::streamoff size = file.tellg();
  if (size < 0) {
    file.clear();
    std::ostringstream buffer;
    buffer << file.rdbuf();
    return buffer.str();
  }
  std::string bytes(static_cast<size_t>(size), '\0');
  file.seekg(0);
  if (!file.read(bytes.data(), size)) return InvalidArgument("cannot read '" + path + "'");
  return bytes;
}

// A .pb file parsed as it is read: no copy of the file's bytes beside the message's.
template <class Proto>
Status ParseProtoFile(const std::string& path, const char* type, Proto* proto) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFound("cannot open '" + path + "'");
  if (!proto->ParseFromIstream(&file)) return InvalidArgument("'" + path + "' is not a serialized " + type);
  return Status::Ok();
}

struct NpyType {
  const char* descr;
  DataType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {"f4", DataType::kFloat}, {"f8", DataType::kDouble}, {"f2", DataType::kFloat16},
    {"i1", DataType::kInt8},  {"i2", DataType::kInt16},  {"i4", DataType::kInt32},
    {"i8", DataType::kInt64}, {"u1", DataType::kUint8},  {"u2", DataType::kUint16},
    {"u4", DataType::kUint32}, {"u8", DataType::kUint64}, {"b1", DataType::kBool},
};

// The value of `key` in the .npy header dict, e.g. 'descr': '<f4'.
std::string HeaderField(const std::string& header, const std::string& key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t start = header.find(':', k);
  if (start == std::string::npos) return "";
  ++start;
  while (start < header.size() && header[start] == ' ') ++start;
  size_t end = start;
  if (header[start] == '(') {
    end = header.find(')', start);
    return end == std::string::npos ? "" : header.substr(start + 1, end - start - 1);
  }
  end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

Result<Tensor> ParseNpy(const std::string& bytes, const std::string& path) {
  const std::string where = "'" + path + "'";
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return InvalidArgument(where + " is not a .npy file");
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    offset = 10;
  } else {
    if (bytes.size() < 12) return InvalidArgument(where + " is truncated");
    header_len = static_cast<uint32_t>(static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8) |
                                       (static_cast<uint8_t>(bytes[10]) << 16) |
                                       (static_cast<uint32_t>(static_cast<uint8_t>(bytes[11])) << 24));
    offset = 12;
  }
  if (offset + header_len > bytes.size()) return InvalidArgument(where + " is truncated");
  const std::string header = bytes.substr(offset, header_len);
  std::string descr = HeaderField(header, "descr");
  if (descr.size() < 3) return InvalidArgument(where + ": cannot read dtype");
  descr = descr.substr(1, descr.size() - 2);  // strip quotes
  if (descr[0] == '>') return Unimplemented(where + ": big-endian arrays are not supported");
  const std::string code = descr.substr(1);
  DataType dtype = DataType::kUndefined;
  for (const auto& t : kNpyTypes) {
    if (code == t.descr) dtype = t.dtype;
  }
  if (dtype == DataType::kUndefined) return Unimplemented(where + ": dtype '" + descr + "' is not supported");
  if (HeaderField(header, "fortran_order").find("True") != std::string::npos) {
    return Unimplemented(where + ": Fortran-order arrays are not supported");
  }
  Shape shape;
  std::stringstream dims(HeaderField(header, "shape"));
  std::string dim;
  while (std::getline(dims, dim, ',')) {
    const size_t first = dim.find_first_not_of(" \t");
    if (first == std::string::npos) continue;  // the empty field after "(3,"
    const size_t last = dim.find_last_not_of(" \t");
    const std::string digits = dim.substr(first, last - first + 1);
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) {
      return InvalidArgument(where + ": shape entry '" + digits + "' is not a non-negative integer");
    }
    shape.push_back(std::stoll(digits));
  }
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d)) return InvalidArgument(where + ": absurd shape");
    count *= d;
  }
  const size_t data_offset = offset + header_len;
  const size_t nbytes = static_cast<size_t>(count) * ElementSize(dtype);
  if (bytes.size() - data_offset < nbytes) return InvalidArgument(where + " holds less data than its shape needs");
  Tensor t(dtype, shape);
  if (nbytes) std::memcpy(t.mutable_raw_data(), bytes.data() + data_offset, nbytes);
  return t;
}


Comparison CompareTensorValues(const Tensor& e, const Tensor& a, double rtol, double atol) {
  const TensorComparison t = CompareTensors(e, a, rtol, atol);
  Comparison c;
  c.match = t.match;
  c.max_abs_error = t.max_abs_error;
  c.mismatch = t.mismatch;
  return c;
}

// Maps match when they hold the same keys in the same order (exactly) and their values match.
Comparison CompareMaps(const Map& e, const Map& a, double rtol, double atol) {
  Comparison keys = CompareTensorValues(e.keys, a.keys, 0, 0);
  if (!keys.match) {
    keys.mismatch = "map keys: " + keys.mismatch;
    return keys;
  }
  Comparison values = CompareTensorValues(e.values, a.values, rtol, atol);
  if (!values.match) values.mismatch = "map values: " + values.mismatch;
  return values;
}

// Two sequences' elements, one by one: the largest error, and the first element that differs.
template <typename T, typename Compare>
Comparison CompareElements(const std::vector<T>& e, const std::vector<T>& a, const char* what, Compare compare,
                           double rtol, double atol) {
  Comparison c;
  if (e.size() != a.size()) {
    c.match = false;
    c.mismatch = "sequence of " + std::to_string(a.size()) + " " + what + ", expected " + std::to_string(e.size());
    return c;
  }
  for (size_t i = 0; i < e.size(); ++i) {
    Comparison one = compare(e[i], a[i], rtol, atol);
    c.max_abs_error = std::max(c.max_abs_error, one.max_abs_error);
    if (!one.match && c.match) {
      c.match = false;
      c.mismatch = "sequence element " + std::to_string(i) + ": " + one.mismatch;
    }
  }
  return c;
}

}  // namespace

Result<Value> ReadValueFile(const std::string& path, const ValueInfo* declared) {
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    ONNXFLOW_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor t, ParseNpy(bytes, path));
    return Value(std::move(t));
  }
  Result<Value> value = InvalidArgument("unreachable");
  if (declared != nullptr && declared->optional) {
    onnx::OptionalProto p;
    ONNXFLOW_RETURN_IF_ERROR(ParseProtoFile(path, "OptionalProto", &p));
    value = ValueFromOptionalProto(p);
  } else if (declared != nullptr && declared->kind == Value::Kind::kMap) {
    onnx::MapProto p;
    ONNXFLOW_RETURN_IF_ERROR(ParseProtoFile(path, "MapProto", &p));
    value = ValueFromMapProto(p);
  } else if (declared != nullptr && declared->kind == Value::Kind::kSequence) {
    onnx::SequenceProto p;
    ONNXFLOW_RETURN_IF_ERROR(ParseProtoFile(path, "SequenceProto", &p));
    value = ValueFromSequenceProto(p);
  } else {
    onnx::TensorProto p;
    ONNXFLOW_RETURN_IF_ERROR(ParseProtoFile(path, "TensorProto", &p));
    auto t = TensorFromProto(p);
    if (!t.ok()) return t.status();
    value = Value(std::move(t).value());
  }
  if (!value.ok()) return value.status().WithContext("'" + path + "'");
  return value;
}

Status WriteValueFile(const std::string& path, const Value& value, const std::string& name, const ValueInfo* declared) {
  std::string bytes;
  if ((declared != nullptr && declared->optional) || value.is_none()) {
    onnx::OptionalProto p;
    p.set_name(name);
    ValueToOptionalProto(value, &p);
    bytes = p.SerializeAsString();
  } else if (value.is_map()) {
    onnx::MapProto p;
    p.set_name(name);
    ValueToMapProto(value, &p);
    bytes = p.SerializeAsString();
  } else if (value.is_sequence()) {
    onnx::SequenceProto p;
    p.set_name(name);
    ValueToSequenceProto(value, &p);
    bytes = p.SerializeAsString();
  } else {
    onnx::TensorProto p;
    p.set_name(name);
    TensorToProto(value.tensor(), &p);
    bytes = p.SerializeAsString();
  }
  std::ofstream file(path, std::ios::binary);
  if (!file || !file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    return InvalidArgument("cannot write '" + path + "'");
  }
  return Status::Ok();
}

Result<Tensor> FillTensor(DataType dtype, const Shape& shape) {
  if (dtype == DataType::kUndefined) return InvalidArgument("cannot fill a tensor of undefined type");
  // The shape comes from the model (and --dim): refuse negative dims and element or byte counts that
  // overflow before the Tensor computes its size from them.
  ONNXFLOW_ASSIGN_OR_RETURN(const int64_t count, CheckedElementCount(shape));
  const int64_t element = static_cast<int64_t>(std::max<size_t>(ElementSize(dtype), 1));
  if (count > INT64_MAX / element) {
    return InvalidArgument("cannot fill a tensor of shape " + ShapeToString(shape) + ": too many bytes");
  }
  Tensor t(dtype, shape);
  const int64_t n = t.size();
  for (int64_t i = 0; i < n; ++i) {
    const double f = static_cast<double>(i % 97) / 97 - 0.5;
    switch (dtype) {
      case DataType::kFloat: t.mutable_data<float>()[i] = static_cast<float>(f); break;
      case DataType::kDouble: t.mutable_data<double>()[i] = f; break;
      case DataType::kFloat16: t.mutable_data<Float16>()[i] = Float16{FloatToHalf(static_cast<float>(f))}; break;
      case DataType::kBFloat16: t.mutable_data<BFloat16>()[i] = BFloat16{FloatToBFloat16(static_cast<float>(f))}; break;
      case DataType::kBool: t.mutable_data<bool>()[i] = (i & 1) != 0; break;
      case DataType::kString: t.mutable_data<std::string>()[i] = std::to_string(i % 7); break;
      case DataType::kInt64: t.mutable_data<int64_t>()[i] = i % 7; break;
      case DataType::kInt32: t.mutable_data<int32_t>()[i] = static_cast<int32_t>(i % 7); break;
      case DataType::kUint64: t.mutable_data<uint64_t>()[i] = i % 7; break;
      case DataType::kUint32: t.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(i % 7); break;
      case DataType::kInt16: t.mutable_data<int16_t>()[i] = static_cast<int16_t>(i % 7); break;
      case DataType::kUint16: t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(i % 7); break;
      default:
        if (ElementSize(dtype) == 1) t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i % 7);
        else return Unimplemented(std::string("cannot fill a tensor of type ") + DataTypeName(dtype));
    }
  }
  return t;
}

Comparison CompareValues(const Value& expected, const Value& actual, double rtol, double atol) {
  Comparison c;
  if (expected.kind() != actual.kind()) {
    c.match = false;
    const char* names[] = {"no value", "a tensor", "a sequence", "a map"};
    c.mismatch = std::string("got ") + names[static_cast<int>(actual.kind())] + ", expected " +
                 names[static_cast<int>(expected.kind())];
    return c;
  }
  if (expected.is_tensor()) return CompareTensorValues(expected.tensor(), actual.tensor(), rtol, atol);
  if (expected.is_map()) return CompareMaps(expected.map(), actual.map(), rtol, atol);
  if (expected.is_sequence() && !expected.sequence().maps.empty()) {
    return CompareElements(expected.sequence().maps, actual.sequence().maps, "maps", CompareMaps, rtol, atol);
  }
  if (expected.is_sequence()) {
    return CompareElements(expected.sequence().tensors, actual.sequence().tensors, "tensors", CompareTensorValues, rtol,
                           atol);
  }
  return c;
}

}  // namespace onnxflow
