// SplitToSequence and ConcatFromSequence: between one tensor and a sequence of its parts. Splits
// along axis 0 are views of the input (no copy); other axes copy each part once.
#include <memory>

#include "ops/framework/concat.h"
#include "ops/framework/shape.h"
#include "ops/sequence/sequence_util.h"

namespace onnxflow {
namespace {

// Part [begin, end) of `input` along `axis`.
Tensor Part(const Tensor& input, int64_t axis, int64_t begin, int64_t end) {
  if (axis == 0) return input.SliceAxis0(begin, end);
  Shape shape = input.shape();
  const int64_t len = shape[axis];
  shape[axis] = end - begin;
  Tensor out(input.dtype(), shape);
  const int64_t outer = SizeToDim(input.shape(), axis);
  const int64_t inner = SizeFromDim(input.shape(), axis + 1);
  const int64_t block = (end - begin) * inner;
  for (int64_t o = 0; o < outer; ++o) CopyElements(input, (o * len + begin) * inner, &out, o * block, block);
  return out;
}

class SplitToSequence : public OpKernel {
 public:
  explicit SplitToSequence(const KernelInfo& info) : axis_(info.GetInt("axis", 0)), keepdims_(info.GetInt("keepdims", 1) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, input->rank()));
    const int64_t len = input->dim(axis);
    std::vector<int64_t> sizes;
    const Tensor* split = ctx.input_tensor(1);
    if (split != nullptr) {
      if (split->dtype() != DataType::kInt64 && split->dtype() != DataType::kInt32) return InvalidArgument("split must be int32 or int64");
      auto at = [&](int64_t i) { return split->dtype() == DataType::kInt64 ? split->data<int64_t>()[i] : split->data<int32_t>()[i]; };
      if (split->rank() == 0) {
        const int64_t chunk = at(0);
        if (chunk <= 0) return InvalidArgument("split size " + std::to_string(chunk) + " must be positive");
        for (int64_t done = 0; done < len; done += chunk) sizes.push_back(std::min(chunk, len - done));
      } else {
        int64_t total = 0;
        for (int64_t i = 0; i < split->size(); ++i) {
          if (at(i) < 0) return InvalidArgument("split sizes must not be negative");
          sizes.push_back(at(i));
          total += at(i);
        }
        if (total != len) {
          return InvalidArgument("split sizes add up to " + std::to_string(total) + ", the axis has " + std::to_string(len));
        }
      }
    } else {
      sizes.assign(len, 1);
    }
    auto seq = std::make_shared<Sequence>();
    seq->elem_type = input->dtype();
    int64_t begin = 0;
    for (int64_t size : sizes) {
      Tensor part = Part(*input, axis, begin, begin + size);
      if (split == nullptr && !keepdims_) {
        Shape shape = part.shape();
        shape.erase(shape.begin() + axis);
        part = part.Reshaped(shape);
      }
      seq->tensors.push_back(std::move(part));
      begin += size;
    }
    ctx.SetOutput(0, Value(std::shared_ptr<const Sequence>(std::move(seq))));
    return Status::Ok();
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequence : public OpKernel {
 public:
  explicit ConcatFromSequence(const KernelInfo& info) : axis_(info.GetInt("axis", 0)), new_axis_(info.GetInt("new_axis", 0) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Sequence* seq, RequireSequence(ctx, 0));
    if (seq->tensors.empty()) return InvalidArgument("cannot concatenate an empty sequence");
    std::vector<const Tensor*> parts;
    for (const Tensor& t : seq->tensors) parts.push_back(&t);
    const int64_t rank = parts[0]->rank() + (new_axis_ ? 1 : 0);
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, ConcatOutputShape(parts, axis, new_axis_));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* out, ctx.Allocate(0, parts[0]->dtype(), shape));
    ConcatInto(parts, axis, new_axis_, out);
    return Status::Ok();
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSequenceTensorOps(KernelRegistry& r) {
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "SplitToSequence", 11, kOpenEnded, Make<SplitToSequence>()));
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "ConcatFromSequence", 11, kOpenEnded, Make<ConcatFromSequence>()));
  return Status::Ok();
}

}  // namespace onnxflow
