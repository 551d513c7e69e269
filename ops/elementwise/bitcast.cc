// BitCast (opset 26): reinterprets each element's bits as another type of the same bit width.
// Bytes are copied as they are (this runtime is little endian like the spec's byte order), except
// where the in-memory form is not the bit pattern itself: bool must hold 0 or 1, and sub-byte
// types are unpacked one per byte with the signed ones sign-extended, so their low 4 (or 2) bits
// are reinterpreted and re-extended.
#include <cstring>
#include <string>

#include "ops/elementwise/common.h"

namespace onnxflow {
namespace {

int BitWidth(DataType t) {
  switch (t) {
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
      return 4;
    case DataType::kUint2:
    case DataType::kInt2:
      return 2;
    default:
      return static_cast<int>(ElementSize(t)) * 8;
  }
}

class BitCastKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t to, info.RequireInt("to"));
    if (!IsValidDataType(static_cast<int32_t>(to)) || to == static_cast<int64_t>(DataType::kString) ||
        to == static_cast<int64_t>(DataType::kUndefined)) {
      return InvalidArgument("BitCast: 'to' = " + std::to_string(to) + " is not a bit-castable type");
    }
    return std::unique_ptr<OpKernel>(new BitCastKernel(static_cast<DataType>(to)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() == DataType::kString) return InvalidArgument("BitCast cannot take a string tensor");
    if (BitWidth(x->dtype()) != BitWidth(to_)) {
      return InvalidArgument(std::string("BitCast: ") + DataTypeName(x->dtype()) + " and " + DataTypeName(to_) +
                             " have different bit widths");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, to_, x->shape()));
    const int64_t n = x->size();
    const int bits = BitWidth(to_);
    if (bits < 8) {
      const uint8_t* in = static_cast<const uint8_t*>(x->raw_data());
      uint8_t* out = static_cast<uint8_t*>(y->mutable_raw_data());
      const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
      const bool sign_extend = to_ == DataType::kInt4 || to_ == DataType::kInt2;
      const uint8_t sign_bit = static_cast<uint8_t>(1u << (bits - 1));
      for (int64_t i = 0; i < n; ++i) {
        uint8_t v = in[i] & mask;
        if (sign_extend && (v & sign_bit)) v |= static_cast<uint8_t>(~mask);
        out[i] = v;
      }
    } else if (to_ == DataType::kBool) {
      const uint8_t* in = static_cast<const uint8_t*>(x->raw_data());
      bool* out = y->mutable_data<bool>();
      for (int64_t i = 0; i < n; ++i) out[i] = in[i] != 0;
    } else if (n > 0) {
      std::memcpy(y->mutable_raw_data(), x->raw_data(), x->nbytes());
    }
    return Status::Ok();
  }

 private:
  explicit BitCastKernel(DataType to) : to_(to) {}
  DataType to_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBitCastKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "BitCast", 26, kOpenEnded, Make<BitCastKernel>());
}

}  // namespace onnxflow
