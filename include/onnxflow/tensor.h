// Tensors and the values that flow along a graph's edges.
//
// A Tensor is a cheap handle: dtype, shape and shared storage. Copying one shares the bytes
// (like numpy views), so handing a tensor from node to node, or from one Loop iteration to the
// next, never copies data. Storage is either owned (freed with the last handle) or borrowed from
// the caller (who keeps it alive for the duration of the call).
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace onnxflow {

// Values match TensorProto.DataType in the ONNX spec.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};
constexpr int32_t kMaxDataType = 26;

// Storage types for the element types C++ lacks. Each holds the raw bits; arithmetic converts to
// float (see ops/framework/numeric.h). Sub-byte types (4- and 2-bit) are kept one element per
// byte in memory, sign-extended for the signed ones, so kernels index them like any other type;
// they are packed only in TensorProto bytes.
struct Float16 { uint16_t bits; };
struct BFloat16 { uint16_t bits; };
struct Float8E4M3FN { uint8_t bits; };
struct Float8E4M3FNUZ { uint8_t bits; };
struct Float8E5M2 { uint8_t bits; };
struct Float8E5M2FNUZ { uint8_t bits; };
struct Float8E8M0 { uint8_t bits; };
struct Float4E2M1 { uint8_t bits; };  // low 4 bits
struct UInt4 { uint8_t value; };       // 0..15
struct Int4 { int8_t value; };         // -8..7
struct UInt2 { uint8_t value; };       // 0..3
struct Int2 { int8_t value; };         // -2..1

const char* DataTypeName(DataType dtype);  // "float32", "int64", ...
bool IsValidDataType(int32_t value);
// Bytes one element takes in memory (sub-byte types: 1). 0 for kUndefined.
size_t ElementSize(DataType dtype);
bool IsFloatingPoint(DataType dtype);  // includes float16/bfloat16/float8/float4
bool IsSignedInteger(DataType dtype);
bool IsUnsignedInteger(DataType dtype);

// Maps a C++ element type to its DataType.
template <typename T> struct DataTypeOf;
#define ONNXFLOW_DATA_TYPE_OF(T, DT) \
  template <> struct DataTypeOf<T> { static constexpr DataType value = DataType::DT; }
ONNXFLOW_DATA_TYPE_OF(float, kFloat);
ONNXFLOW_DATA_TYPE_OF(uint8_t, kUint8);
ONNXFLOW_DATA_TYPE_OF(int8_t, kInt8);
ONNXFLOW_DATA_TYPE_OF(uint16_t, kUint16);
ONNXFLOW_DATA_TYPE_OF(int16_t, kInt16);
ONNXFLOW_DATA_TYPE_OF(int32_t, kInt32);
ONNXFLOW_DATA_TYPE_OF(int64_t, kInt64);
ONNXFLOW_DATA_TYPE_OF(std::string, kString);
ONNXFLOW_DATA_TYPE_OF(bool, kBool);
ONNXFLOW_DATA_TYPE_OF(Float16, kFloat16);
ONNXFLOW_DATA_TYPE_OF(double, kDouble);
ONNXFLOW_DATA_TYPE_OF(uint32_t, kUint32);
ONNXFLOW_DATA_TYPE_OF(uint64_t, kUint64);
ONNXFLOW_DATA_TYPE_OF(std::complex<float>, kComplex64);
ONNXFLOW_DATA_TYPE_OF(std::complex<double>, kComplex128);
ONNXFLOW_DATA_TYPE_OF(BFloat16, kBFloat16);
ONNXFLOW_DATA_TYPE_OF(Float8E4M3FN, kFloat8E4M3FN);
ONNXFLOW_DATA_TYPE_OF(Float8E4M3FNUZ, kFloat8E4M3FNUZ);
ONNXFLOW_DATA_TYPE_OF(Float8E5M2, kFloat8E5M2);
ONNXFLOW_DATA_TYPE_OF(Float8E5M2FNUZ, kFloat8E5M2FNUZ);
ONNXFLOW_DATA_TYPE_OF(UInt4, kUint4);
ONNXFLOW_DATA_TYPE_OF(Int4, kInt4);
ONNXFLOW_DATA_TYPE_OF(Float4E2M1, kFloat4E2M1);
ONNXFLOW_DATA_TYPE_OF(Float8E8M0, kFloat8E8M0);
ONNXFLOW_DATA_TYPE_OF(UInt2, kUint2);
ONNXFLOW_DATA_TYPE_OF(Int2, kInt2);
#undef ONNXFLOW_DATA_TYPE_OF

using Shape = std::vector<int64_t>;

// Product of dims; 1 for a scalar (empty shape). Callers validate dims first (non-negative,
// product within limits): see ShapeElementCount in ops/framework/shape.h for the checked form.
int64_t ElementCount(const Shape& shape);
std::string ShapeToString(const Shape& shape);  // "[1,3,224,224]"

class Tensor {
 public:
  Tensor() = default;

  // Owning, with fresh storage: zero-filled for numbers, empty strings for kString.
  Tensor(DataType dtype, Shape shape);

  // Owning, with storage whose contents are unspecified (for kernels that write every element;
  // strings are still default-constructed).
  static Tensor Uninitialized(DataType dtype, Shape shape);

  // Borrows `data`; the caller keeps it alive and unchanged while onnxflow may read it.
  static Tensor Borrow(DataType dtype, Shape shape, void* data);
  // The same for read-only memory (a host's const buffer, a mapped file): onnxflow reads graph
  // inputs and never writes them, and kernels only take over storage a tensor owns
  // (KernelContext::ReusableInput), so a borrowed input is never written.
  static Tensor Borrow(DataType dtype, Shape shape, const void* data) {
    return Borrow(dtype, std::move(shape), const_cast<void*>(data));
  }

  // Owning tensor holding a copy of `values`. `values` must hold exactly as many elements as
  // `shape` has: otherwise the result is an undefined tensor (defined() is false), which
  // Session::Run refuses as an input, rather than a tensor padded with zeros or cut short.
  template <typename T>
  static Tensor FromVector(Shape shape, const std::vector<T>& values) {
    for (int64_t d : shape) {
      if (d < 0) return Tensor();
    }
    if (ElementCount(shape) != static_cast<int64_t>(values.size())) return Tensor();
    Tensor t = Uninitialized(DataTypeOf<T>::value, std::move(shape));
    T* out = t.mutable_data<T>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
    return t;
  }
  template <typename T>
  static Tensor Scalar(T value) { return FromVector<T>({}, {value}); }

  // Adopts storage that someone else allocated (the runtime's buffer pool uses this).
  Tensor(DataType dtype, Shape shape, std::shared_ptr<void> storage, void* data)
      : dtype_(dtype), shape_(std::move(shape)), storage_(std::move(storage)), data_(data) {}

  bool defined() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t axis) const { return shape_[axis]; }
  int64_t size() const { return ElementCount(shape_); }
  size_t nbytes() const { return static_cast<size_t>(size()) * ElementSize(dtype_); }

  template <typename T> const T* data() const { return static_cast<const T*>(data_); }
  template <typename T> T* mutable_data() { return static_cast<T*>(data_); }
  // What keeps the bytes alive (null for borrowed tensors); views share it.
  const std::shared_ptr<void>& storage() const { return storage_; }
  const void* raw_data() const { return data_; }
  void* mutable_raw_data() { return data_; }

  // The same bytes seen with another shape of equal element count.
  Tensor Reshaped(Shape shape) const {
    Tensor t = *this;
    t.shape_ = std::move(shape);
    return t;
  }
  // Rows [begin, end) along axis 0, sharing storage (no copy). Requires rank >= 1 and
  // 0 <= begin <= end <= dim(0); `keep_axis` false drops axis 0 (then end must be begin + 1).
  Tensor SliceAxis0(int64_t begin, int64_t end, bool keep_axis = true) const {
    Shape shape = shape_;
    int64_t row = 1;
    for (size_t i = 1; i < shape.size(); ++i) row *= shape[i];
    if (keep_axis) {
      shape[0] = end - begin;
    } else {
      shape.erase(shape.begin());
    }
    return Tensor(dtype_, std::move(shape), storage_,
                  static_cast<char*>(data_) + begin * row * static_cast<int64_t>(ElementSize(dtype_)));
  }
  // A deep copy with storage of its own.
  Tensor Clone() const;
  // True when both handles point at the same bytes.
  bool SharesStorageWith(const Tensor& other) const { return data_ == other.data_ && data_ != nullptr; }

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  std::shared_ptr<void> storage_;  // keeps the bytes alive; null for borrowed tensors
  void* data_ = nullptr;
};

// An ONNX map (the ai.onnx.ml ops: ZipMap writes them, DictVectorizer and CastMap read them): the
// keys, a 1-D int64 or string tensor with no key twice, and beside them their values, a 1-D tensor
// as long, in the order the map was built. Two tensors rather than a node per entry: ZipMap's
// maps of one run all share one keys tensor.
struct Map {
  Tensor keys;
  Tensor values;

  // Keys and values are defined 1-D tensors of one length: what every reader of a map relies on,
  // checked where maps come in (Session::Run) and where a kernel takes one.
  bool well_formed() const {
    return keys.defined() && values.defined() && keys.rank() == 1 && values.rank() == 1 && keys.size() == values.size();
  }
};

// An ONNX sequence: tensors of one element type, or maps (ZipMap's output, a map per row), never
// both. Immutable once built and shared between values, so SequenceInsert and friends copy
// handles, never tensor data.
struct Sequence {
  DataType elem_type = DataType::kUndefined;  // the tensors' element type, or the maps' value type
  std::vector<Tensor> tensors;
  std::vector<Map> maps;
};

// What one graph edge carries: a tensor, a sequence, a map, or nothing (an optional without a
// value).
class Value {
 public:
  enum class Kind : uint8_t { kNone, kTensor, kSequence, kMap };

  Value() = default;  // an optional without a value
  Value(Tensor tensor) : kind_(Kind::kTensor), tensor_(std::move(tensor)) {}  // NOLINT
  // A null sequence or map is no value (an optional without one), never a handle to nothing that a
  // reader would dereference: Session::Run then refuses it by name where a value is required.
  Value(std::shared_ptr<const Sequence> seq)  // NOLINT
      : kind_(seq != nullptr ? Kind::kSequence : Kind::kNone), sequence_(std::move(seq)) {}
  Value(std::shared_ptr<const Map> map) : kind_(map != nullptr ? Kind::kMap : Kind::kNone), map_(std::move(map)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_map() const { return kind_ == Kind::kMap; }

  const Tensor& tensor() const { return tensor_; }
  Tensor& mutable_tensor() { return tensor_; }
  const Sequence& sequence() const { return *sequence_; }
  const std::shared_ptr<const Sequence>& sequence_ptr() const { return sequence_; }
  const Map& map() const { return *map_; }

  void Reset() { *this = Value(); }

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  std::shared_ptr<const Sequence> sequence_;
  std::shared_ptr<const Map> map_;
};

// Tensor storage that is freed goes to a process-wide pool of size classes for the next tensor
// (a run's buffers come back hot and mapped). This frees what the pool holds: a session calls it
// once loaded, so the load's temporaries (unfolded weights, folding results) do not stay resident.
void ReleasePooledStorage();
// The bytes the pool holds now.
size_t PooledStorageBytes();

}  // namespace onnxflow
