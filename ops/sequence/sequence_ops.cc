// Sequence ops. A sequence value is immutable and shared, so every op here builds a new
// vector of tensor handles: inserting, erasing or reading an element never copies tensor data.
#include <memory>

#include "ops/framework/kernel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/sequence/register.h"
#include "ops/sequence/sequence_util.h"

namespace onnxflow {
namespace {

class SequenceEmpty : public OpKernel {
 public:
  explicit SequenceEmpty(const KernelInfo& info)
      : dtype_(static_cast<DataType>(info.GetInt("dtype", static_cast<int64_t>(DataType::kFloat)))) {}
  Status Compute(KernelContext& ctx) const override {
    auto seq = std::make_shared<Sequence>();
    seq->elem_type = dtype_;
    ctx.SetOutput(0, Value(std::shared_ptr<const Sequence>(std::move(seq))));
    return Status::Ok();
  }

 private:
  DataType dtype_;
};

class SequenceConstruct : public OpKernel {
 public:
  explicit SequenceConstruct(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    auto seq = std::make_shared<Sequence>();
    for (int i = 0; i < ctx.input_count(); ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
      if (i > 0 && t->dtype() != seq->elem_type) {
        return InvalidArgument("input " + std::to_string(i) + " is " + DataTypeName(t->dtype()) + ", the sequence holds " +
                               DataTypeName(seq->elem_type));
      }
      seq->elem_type = t->dtype();
      seq->tensors.push_back(*t);
    }
    ctx.SetOutput(0, Value(std::shared_ptr<const Sequence>(std::move(seq))));
    return Status::Ok();
  }
};

class SequenceInsert : public OpKernel {
 public:
  explicit SequenceInsert(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Sequence* in, RequireSequence(ctx, 0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(1));
    if (!in->tensors.empty() && t->dtype() != in->elem_type) {
      return InvalidArgument(std::string("cannot insert a ") + DataTypeName(t->dtype()) + " tensor into a sequence of " +
                             DataTypeName(in->elem_type));
    }
    const int64_t size = static_cast<int64_t>(in->tensors.size());
    int64_t position = size;
    if (ctx.has_input(2)) ONNXFLOW_RETURN_IF_ERROR(ReadPosition(ctx, 2, size, /*allow_end=*/true, &position));
    auto seq = std::make_shared<Sequence>(*in);
    seq->elem_type = t->dtype();
    seq->tensors.insert(seq->tensors.begin() + position, *t);
    ctx.SetOutput(0, Value(std::shared_ptr<const Sequence>(std::move(seq))));
    return Status::Ok();
  }
};

class SequenceAt : public OpKernel {
 public:
  explicit SequenceAt(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Sequence* in, RequireSequence(ctx, 0));
    int64_t position = 0;
    ONNXFLOW_RETURN_IF_ERROR(ReadPosition(ctx, 1, static_cast<int64_t>(in->tensors.size()), false, &position));
    ctx.SetOutput(0, Value(in->tensors[position]));
    return Status::Ok();
  }
};

class SequenceErase : public OpKernel {
 public:
  explicit SequenceErase(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Sequence* in, RequireSequence(ctx, 0));
    const int64_t size = static_cast<int64_t>(in->tensors.size());
    int64_t position = size - 1;
    if (ctx.has_input(1)) ONNXFLOW_RETURN_IF_ERROR(ReadPosition(ctx, 1, size, false, &position));
    if (size == 0) return OutOfRange("cannot erase from an empty sequence");
    auto seq = std::make_shared<Sequence>(*in);
    seq->tensors.erase(seq->tensors.begin() + position);
    ctx.SetOutput(0, Value(std::shared_ptr<const Sequence>(std::move(seq))));
    return Status::Ok();
  }
};

class SequenceLength : public OpKernel {
 public:
  explicit SequenceLength(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Sequence* in, RequireSequence(ctx, 0));
    ctx.SetOutput(0, Value(Tensor::Scalar<int64_t>(static_cast<int64_t>(in->tensors.size()))));
    return Status::Ok();
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSequenceBasics(KernelRegistry& r) {
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "SequenceEmpty", 11, kOpenEnded, Make<SequenceEmpty>()));
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "SequenceConstruct", 11, kOpenEnded, Make<SequenceConstruct>()));
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "SequenceInsert", 11, kOpenEnded, Make<SequenceInsert>()));
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "SequenceAt", 11, kOpenEnded, Make<SequenceAt>()));
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "SequenceErase", 11, kOpenEnded, Make<SequenceErase>()));
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "SequenceLength", 11, kOpenEnded, Make<SequenceLength>()));
  return Status::Ok();
}

}  // namespace onnxflow
