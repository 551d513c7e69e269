// Cast and CastLike: element-wise conversion to a type named by an attribute (Cast) or by the
// type of a second input (CastLike). One kernel serves every version: `saturate` (19+) and
// `round_mode` (24+) are read when present; Cast-1 names the type with a string ("FLOAT").
#include "ops/cast/register.h"

#include <map>
#include <memory>
#include <string>

#include "ops/cast/cast_elements.h"

namespace onnxflow {
namespace {

Result<E8M0Rounding> ParseRoundMode(const KernelInfo& info) {
  const std::string mode = info.GetString("round_mode", "up");
  if (mode == "up") return E8M0Rounding::kUp;
  if (mode == "down") return E8M0Rounding::kDown;
  if (mode == "nearest") return E8M0Rounding::kNearest;
  return InvalidArgument("attribute round_mode must be 'up', 'down' or 'nearest', got '" + mode + "'");
}

Result<CastOptions> ParseOptions(const KernelInfo& info) {
  CastOptions options;
  options.saturate = info.GetInt("saturate", 1) != 0;
  ONNXFLOW_ASSIGN_OR_RETURN(options.round_mode, ParseRoundMode(info));
  return options;
}

// Cast-1 spells the target type as the TensorProto.DataType enum name.
Result<DataType> DataTypeFromName(const std::string& name) {
  static const std::map<std::string, DataType> kNames = {
      {"FLOAT", DataType::kFloat},     {"UINT8", DataType::kUint8},     {"INT8", DataType::kInt8},
      {"UINT16", DataType::kUint16},   {"INT16", DataType::kInt16},     {"INT32", DataType::kInt32},
      {"INT64", DataType::kInt64},     {"STRING", DataType::kString},   {"BOOL", DataType::kBool},
      {"FLOAT16", DataType::kFloat16}, {"DOUBLE", DataType::kDouble},   {"UINT32", DataType::kUint32},
      {"UINT64", DataType::kUint64},   {"BFLOAT16", DataType::kBFloat16}};
  auto it = kNames.find(name);
  if (it == kNames.end()) return InvalidArgument("attribute 'to' names an unknown type '" + name + "'");
  return it->second;
}

// Converts input 0 to `to`; the output shares the input when nothing changes.
Status RunCast(KernelContext& ctx, DataType to, const CastOptions& options) {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  if (!IsCastableType(x->dtype())) {
    return Unimplemented(std::string("Cast from ") + DataTypeName(x->dtype()) + " is not supported");
  }
  if (x->dtype() == to) {
    ctx.SetOutput(0, Value(*x));
    return Status::Ok();
  }
  // CastElements writes every element (or fails): a zero fill first was 15% of a dynamically
  // quantized CNN's run, the int32 products of its ConvIntegers being cast to float.
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, to, x->shape()));
  return CastElements(*x, y, options, &ctx);
}

class CastKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const onnx::AttributeProto* to_attr = info.attribute("to");
    if (to_attr == nullptr) return InvalidArgument("attribute 'to' is required");
    DataType to = DataType::kUndefined;
    if (to_attr->type() == onnx::AttributeProto::STRING) {
      ONNXFLOW_ASSIGN_OR_RETURN(to, DataTypeFromName(to_attr->s()));
    } else {
      const int64_t value = to_attr->i();
      if (value < 0 || value > kMaxDataType || !IsCastableType(static_cast<DataType>(value))) {
        return Unimplemented("Cast to type " + std::to_string(value) + " is not supported");
      }
      to = static_cast<DataType>(value);
    }
    ONNXFLOW_ASSIGN_OR_RETURN(CastOptions options, ParseOptions(info));
    return std::unique_ptr<OpKernel>(new CastKernel(to, options));
  }

  Status Compute(KernelContext& ctx) const override { return RunCast(ctx, to_, options_); }

 private:
  CastKernel(DataType to, CastOptions options) : to_(to), options_(options) {}
  const DataType to_;
  const CastOptions options_;
};

class CastLikeKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(CastOptions options, ParseOptions(info));
    return std::unique_ptr<OpKernel>(new CastLikeKernel(options));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* target, ctx.RequireTensor(1));
    if (!IsCastableType(target->dtype())) {
      return Unimplemented(std::string("CastLike to ") + DataTypeName(target->dtype()) + " is not supported");
    }
    return RunCast(ctx, target->dtype(), options_);
  }

 private:
  explicit CastLikeKernel(CastOptions options) : options_(options) {}
  const CastOptions options_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterCastOps(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Cast", 1, kOpenEnded, Make<CastKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "CastLike", 15, kOpenEnded, Make<CastLikeKernel>()));
  return Status::Ok();
}

}  // namespace onnxflow
