// Concat and Split: both see a tensor as [outer, axis, inner] and move runs of axis*inner
// contiguous elements per outer index.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/framework/copy_bytes.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

// Rows of at most this many elements are joined (ConcatKernel) or cut (SplitKernel) a row at a
// time, each run copied element by element: a copy call per run of a few elements costs more
// than the copy.
constexpr int64_t kShortRow = 64;

// (T is a stand-in of the element's size, or std::string: DispatchBySize.)
template <typename T>
inline void CopyShort(const T* src, int64_t n, T* dst) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    CopyShortBytes(dst, src, n * static_cast<int64_t>(sizeof(T)));
  } else {
    for (int64_t k = 0; k < n; ++k) dst[k] = src[k];
  }
}

// Concat-1 defaults axis to 1; from Concat-4 the attribute is required.
class ConcatKernel : public OpKernel {
 public:
  explicit ConcatKernel(const KernelInfo& info)
      : has_axis_(info.has_attribute("axis") || info.opset() < 4), axis_(info.GetInt("axis", 1)) {}

  Status Compute(KernelContext& ctx) const override {
    if (!has_axis_) return InvalidArgument("attribute 'axis' is required");
    // The inputs that contribute; 1-D empty tensors of another rank are skipped, as other
    // runtimes do (exporters emit them as "nothing to append").
    std::vector<const Tensor*> inputs;
    int64_t rank = -1;
    for (int i = 0; i < ctx.input_count(); ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
      inputs.push_back(t);
      if (rank < 0 && !(t->rank() == 1 && t->size() == 0)) rank = t->rank();
    }
    if (inputs.empty()) return InvalidArgument("Concat needs at least one input");
    if (rank < 0) rank = inputs[0]->rank();
    std::vector<const Tensor*> parts;
    for (const Tensor* t : inputs) {
      if (t->rank() == rank) {
        parts.push_back(t);
      } else if (!(t->rank() == 1 && t->size() == 0)) {
        return InvalidArgument("inputs have different ranks: " + ShapeToString(inputs[0]->shape()) + " and " +
                               ShapeToString(t->shape()));
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, rank));
    const DataType dtype = parts[0]->dtype();
    Shape out_shape = parts[0]->shape();
    out_shape[axis] = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const Tensor* t = parts[i];
      if (t->dtype() != dtype) return InvalidArgument("inputs have different types");
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && t->dim(d) != out_shape[d]) {
          return InvalidArgument("input " + std::to_string(i) + " has shape " + ShapeToString(t->shape()) +
                                 ", which does not match " + ShapeToString(parts[0]->shape()) +
                                 " outside axis " + std::to_string(axis));
        }
      }
      out_shape[axis] += t->dim(axis);
    }
    if (parts.size() == 1) {
      ctx.SetOutput(0, Value(*parts[0]));
      return Status::Ok();
    }
    // Every output element is written below: no zero fill first.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateUninitialized(0, dtype, out_shape));
    if (out->size() == 0) return Status::Ok();
    const int64_t inner = SizeFromDim(out_shape, axis + 1);
    const int64_t out_row = out_shape[axis] * inner;
    // Per outer index the output row is the inputs' runs one after another: runs[i] elements of
    // input i starting at starts[i] within the row.
    std::vector<int64_t> runs, starts;
    int64_t at = 0;
    for (const Tensor* t : parts) {
      starts.push_back(at);
      runs.push_back(t->dim(axis) * inner);
      at += runs.back();
    }
    return DispatchBySize(dtype, [&](auto tag) {
      using T = decltype(tag);
      std::vector<const T*> srcs;
      for (const Tensor* t : parts) srcs.push_back(t->data<T>());
      T* dst = out->mutable_data<T>();
      // Many short rows (a detector's [anchors, 2] halves joined into [anchors, 4] boxes): a row
      // at a time, each input's few elements in turn, without a division, a search and a copy
      // call per run (4420 rows of 2 + 2 floats: 50 us, twice ONNX Runtime's time).
      const int64_t outer = out->size() / out_row;
      if (outer > 1 && out_row <= kShortRow) {
        ParallelFor(ctx, outer, out_row * kCopyCostPerElement, [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            T* d = dst + o * out_row;
            for (size_t i = 0; i < srcs.size(); ++i) {
              CopyShort(srcs[i] + o * runs[i], runs[i], d);
              d += runs[i];
            }
          }
        });
        return Status::Ok();
      }
      // One split over the whole output, each chunk copied in the longest runs that are
      // contiguous in both the output and one input (memmove for numbers). With outer == 1 that
      // is one block per input.
      ParallelFor(ctx, out->size(), kCopyCostPerElement, [&](int64_t begin, int64_t end) {
        for (int64_t pos = begin; pos < end;) {
          const int64_t o = pos / out_row, within = pos - o * out_row;
          // The input whose run holds `within` (empty inputs share their start with the next).
          const size_t i = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), within) - starts.begin()) - 1;
          const int64_t offset = within - starts[i];
          const int64_t n = std::min(end - pos, runs[i] - offset);
          std::copy_n(srcs[i] + o * runs[i] + offset, n, dst + pos);
          pos += n;
        }
      });
      return Status::Ok();
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

// Split sizes come from (by version): Split-1 input 1 or attribute; Split-2..12 attribute;
// Split-13+ optional input 1; otherwise equal parts over the outputs (Split-18: num_outputs,
// ceil-sized with a smaller last part).
class SplitKernel : public OpKernel {
 public:
  explicit SplitKernel(const KernelInfo& info)
      : opset_(info.opset()),
        axis_(info.GetInt("axis", 0)),
        has_split_attribute_(info.has_attribute("split")),
        split_attribute_(info.GetInts("split")),
        num_outputs_(info.GetInt("num_outputs", 0)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, x->rank()));
    const int64_t dim = x->dim(axis);
    const int outputs = ctx.output_count();
    std::vector<int64_t> split;
    const Tensor* split_input = (opset_ == 1 || opset_ >= 13) ? ctx.input_tensor(1) : nullptr;
    if (split_input != nullptr && split_input->size() > 0) {  // an empty split means "not given"
      ONNXFLOW_ASSIGN_OR_RETURN(split, ReadInt64s(*split_input, "input 'split'"));
    } else if (has_split_attribute_ && opset_ < 13) {
      split = split_attribute_;
    } else if (num_outputs_ > 0 && opset_ >= 18) {
      if (num_outputs_ != outputs) {
        return InvalidArgument("num_outputs is " + std::to_string(num_outputs_) + " but the node has " +
                               std::to_string(outputs) + " outputs");
      }
      const int64_t chunk = (dim + num_outputs_ - 1) / num_outputs_;
      for (int64_t i = 0; i < num_outputs_; ++i) split.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    } else {
      if (outputs <= 0 || dim % outputs != 0) {
        return InvalidArgument("axis " + std::to_string(axis) + " of size " + std::to_string(dim) +
                               " cannot be split evenly into " + std::to_string(outputs) + " outputs");
      }
      split.assign(outputs, dim / outputs);
    }
    if (static_cast<int>(split.size()) != outputs) {
      return InvalidArgument("split has " + std::to_string(split.size()) + " entries but the node has " +
                             std::to_string(outputs) + " outputs");
    }
    int64_t total = 0;
    for (int64_t s : split) {
      if (s < 0) return InvalidArgument("split has a negative size " + std::to_string(s));
      if (__builtin_add_overflow(total, s, &total)) {  // sizes near 2^62 can wrap back to the axis size
        return InvalidArgument("split sizes " + ShapeToString(split) + " sum past INT64_MAX, not the axis size " +
                               std::to_string(dim));
      }
    }
    if (total != dim) {
      return InvalidArgument("split sizes " + ShapeToString(split) + " sum to " + std::to_string(total) +
                             ", not the axis size " + std::to_string(dim));
    }
    const int64_t outer = SizeToDim(x->shape(), axis);
    const int64_t inner = SizeFromDim(x->shape(), axis + 1);
    const int64_t in_row = dim * inner;
    int64_t offset = 0;  // along the axis
    for (int i = 0; i < outputs; ++i) {
      Shape shape = x->shape();
      shape[axis] = split[i];
      const int64_t start = offset;
      offset += split[i];
      if (!ctx.has_output(i)) continue;
      if (split[i] == dim) {  // the whole input
        ctx.SetOutput(i, Value(*x));
        continue;
      }
      // With nothing before the axis, each output is a contiguous run of the input: a view of its
      // storage where it starts as a new buffer would (64-byte aligned), not a copy. A C2f's halves
      // in the blocked layout (YOLOv8n: 10 Splits, 2% of a run). A kernel writes into a view only
      // when it holds the storage alone (KernelContext::ReusableInput), so within its own run.
      const size_t view_offset = static_cast<size_t>(start * inner) * ElementSize(x->dtype());
      if (outer == 1 && x->dtype() != DataType::kString && x->storage() != nullptr && view_offset % 64 == 0 &&
          reinterpret_cast<uintptr_t>(x->raw_data()) % 64 == 0) {
        char* base = static_cast<char*>(const_cast<void*>(x->raw_data()));
        ctx.SetOutput(i, Value(Tensor(x->dtype(), std::move(shape), x->storage(), base + view_offset)));
        continue;
      }
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateUninitialized(i, x->dtype(), shape));  // fully written
      if (out->size() == 0) continue;
      const int64_t run = split[i] * inner;
      ONNXFLOW_RETURN_IF_ERROR(DispatchBySize(x->dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* src = x->data<T>() + start * inner;
        T* dst = out->mutable_data<T>();
        if (outer == 1) {
          ParallelFor(ctx, run, kCopyCostPerElement, [&](int64_t b, int64_t e) { std::copy(src + b, src + e, dst + b); });
        } else if (run <= kShortRow) {
          // A channels-last C2f's halves (YOLOv8n: 160 x 160 pixels of 16 + 16 bytes, 0.23 ->
          // 0.05 ms).
          ParallelFor(ctx, outer, run * kCopyCostPerElement, [&](int64_t b, int64_t e) {
            for (int64_t o = b; o < e; ++o) CopyShort(src + o * in_row, run, dst + o * run);
          });
        } else {
          ParallelFor(ctx, outer, run * kCopyCostPerElement, [&](int64_t b, int64_t e) {
            for (int64_t o = b; o < e; ++o) std::copy_n(src + o * in_row, run, dst + o * run);
          });
        }
        return Status::Ok();
      }));
    }
    return Status::Ok();
  }

 private:
  int opset_;
  int64_t axis_;
  bool has_split_attribute_;
  std::vector<int64_t> split_attribute_;
  int64_t num_outputs_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterConcatSplitKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Concat", 1, kOpenEnded, Make<ConcatKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Split", 1, kOpenEnded, Make<SplitKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
