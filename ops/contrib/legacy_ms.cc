// The com.microsoft ops of version 1 that converters (tf2onnx, keras2onnx, the Keras Mask R-CNN
// exports) wrote before ONNX had the op, or had it in this form, and that ONNX Runtime's CPU
// provider still runs: ExpandDims, MatMulInteger16, Pad, GatherND and Unique. Pad and GatherND run
// on the ONNX kernels of ops/tensor, which mean the same; the others are small enough to stand alone.
#include <cmath>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/math/matmul.h"

namespace onnxflow {
namespace contrib {
namespace {

std::string TypeAndShape(const Tensor& t) {
  return std::string(DataTypeName(t.dtype())) + " " + ShapeToString(t.shape());
}

// ExpandDims(X, axis): X with a dim of 1 inserted at `axis`, an int32 scalar in [-rank - 1, rank];
// a negative axis counts from the end of the output's rank + 1 dims (-1 appends), as TensorFlow's
// expand_dims does. The output shares X's storage.
class ExpandDimsKernel final : public OpKernel {
 public:
  explicit ExpandDimsKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* axis_t, ctx.RequireTensor(1));
    if (axis_t->dtype() != DataType::kInt32 || axis_t->size() != 1 || axis_t->rank() > 1) {
      return InvalidArgument("ExpandDims: axis must be an int32 scalar, got " + TypeAndShape(*axis_t));
    }
    const int64_t rank = x->rank();
    int64_t axis = axis_t->data<int32_t>()[0];
    if (axis < -rank - 1 || axis > rank) {
      return InvalidArgument("ExpandDims: axis " + std::to_string(axis) + " is out of range [" +
                             std::to_string(-rank - 1) + ", " + std::to_string(rank) + "] for X of shape " +
                             ShapeToString(x->shape()));
    }
    if (axis < 0) axis += rank + 1;
    Shape out = x->shape();
    out.insert(out.begin() + axis, 1);
    ctx.SetOutput(0, Value(x->Reshaped(std::move(out))));
    return Status::Ok();
  }
};

// MatMulInteger16(A, B): numpy's matmul of 16-bit integers, int32 out (uint32 when both are
// uint16), with no zero points. ONNX Runtime's CPU kernel takes int16 x int16 only; the schema's
// other combinations cost nothing more here. Sums wrap at 32 bits, as the int32 accumulation
// there does: they are kept modulo 2^64 and the low 32 bits written.
class MatMulInteger16Kernel final : public OpKernel {
 public:
  explicit MatMulInteger16Kernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
    auto is_16 = [](DataType t) { return t == DataType::kInt16 || t == DataType::kUint16; };
    if (!is_16(a->dtype()) || !is_16(b->dtype())) {
      return InvalidArgument(std::string("MatMulInteger16: A and B must be int16 or uint16, got ") +
                             DataTypeName(a->dtype()) + " and " + DataTypeName(b->dtype()));
    }
    const bool unsigned_out = a->dtype() == DataType::kUint16 && b->dtype() == DataType::kUint16;
    ONNXFLOW_ASSIGN_OR_RETURN(MatMulShapes s, ResolveMatMulShapes(a->shape(), b->shape()));
    // Zero-filled: with K = 0 every sum is empty.
    const DataType out_type = unsigned_out ? DataType::kUint32 : DataType::kInt32;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, out_type, s.output));
    if (y->size() == 0 || s.k == 0) return Status::Ok();
    // int32 and uint32 share the bits written.
    uint32_t* out = static_cast<uint32_t*>(y->mutable_raw_data());
    return DispatchType<int16_t, uint16_t>(a->dtype(), [&](auto ta) {
      return DispatchType<int16_t, uint16_t>(b->dtype(), [&](auto tb) {
        Multiply(ctx, a->data<decltype(ta)>(), b->data<decltype(tb)>(), s, out);
        return Status::Ok();
      });
    });
  }

 private:
  // One output row per item: row i of A times B, accumulated along B's rows (contiguous reads).
  template <typename TA, typename TB>
  static void Multiply(const KernelContext& ctx, const TA* pa, const TB* pb, const MatMulShapes& s, uint32_t* out) {
    const std::vector<MatMulBatch> jobs = MatMulBatches(s);
    const int64_t m = s.m, n = s.n, k = s.k;
    ParallelFor(ctx, static_cast<int64_t>(jobs.size()) * m, n * k, [&](int64_t r0, int64_t r1) {
      std::vector<uint64_t> acc(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        const MatMulBatch& job = jobs[r / m];
        const int64_t i = r % m;
        std::fill(acc.begin(), acc.end(), 0);
        const TA* a_row = pa + job.a + i * k;
        for (int64_t p = 0; p < k; ++p) {
          const int64_t av = a_row[p];
          if (av == 0) continue;
          const TB* b_row = pb + job.b + p * n;
          // |av * b| < 2^32: exact in int64; the sum wraps modulo 2^64 as unsigned.
          for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<uint64_t>(av * static_cast<int64_t>(b_row[j]));
        }
        uint32_t* y_row = out + job.y + i * n;
        for (int64_t j = 0; j < n; ++j) y_row[j] = static_cast<uint32_t>(acc[j]);
      }
    });
  }
};

// com.microsoft Pad (version 1): ONNX Pad-11 (pads and the constant value as inputs), except that
// pads (int64) may also be [1, 2 * rank], the value must be one element, and the modes are
// constant, reflect and edge (Pad-19's wrap is not in this schema). Runs on the ONNX Pad kernel.
class MsPadKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, const KernelFactory& pad11) {
    const std::string mode = info.GetString("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge") {
      return InvalidArgument("Pad: mode must be 'constant', 'reflect' or 'edge', not '" + mode + "'");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> inner, pad11(info));
    return std::unique_ptr<OpKernel>(new MsPadKernel(std::move(inner)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* pads, ctx.RequireTensor(1));
    const int64_t rank = x->rank();
    const bool row = pads->rank() == 2 && pads->dim(0) == 1;
    if (pads->dtype() != DataType::kInt64 || (pads->rank() != 1 && !row) || pads->size() != 2 * rank) {
      return InvalidArgument("Pad: pads must be int64 of shape [" + std::to_string(2 * rank) + "] or [1, " +
                             std::to_string(2 * rank) + "] (2 * rank of X " + ShapeToString(x->shape()) + "), got " +
                             TypeAndShape(*pads));
    }
    const Tensor* value = ctx.input_tensor(2);
    if (value != nullptr && (value->size() != 1 || value->dtype() != x->dtype())) {
      return InvalidArgument("Pad: value must be a single " + std::string(DataTypeName(x->dtype())) + ", got " +
                             TypeAndShape(*value));
    }
    if (!row) return inner_->Compute(ctx);
    // The ONNX kernel reads 1-D pads only.
    return ComputeOn(*inner_, ctx, {Value(*x), Value(pads->Reshaped({2 * rank})), value ? Value(*value) : Value()});
  }

 private:
  explicit MsPadKernel(std::unique_ptr<OpKernel> inner) : inner_(std::move(inner)) {}
  std::unique_ptr<OpKernel> inner_;
};

// Unique(x): for 1-D x, y its distinct values in order of first occurrence, idx (int64, x's shape)
// the position in y of each element, counts (int64) how often each occurs. As ONNX Runtime's
// kernel (a hash map keyed by the value) has it: 0.0 and -0.0 are one value (y keeps the one seen
// first), and each NaN is a value of its own (it equals nothing), where ONNX Unique puts NaNs
// together. ONNX Runtime runs float only; every type but the 16-bit floats is taken here.
class MsUniqueKernel final : public OpKernel {
 public:
  explicit MsUniqueKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() != 1) return InvalidArgument("Unique: x must be 1-D, got shape " + ShapeToString(x->shape()));
    const int64_t n = x->size();
    return DispatchType<float, double, ONNXFLOW_INT_TYPES, bool, std::string>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* v = x->data<T>();
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * idx_t, ctx.AllocateUninitialized(1, DataType::kInt64, {n}));
      int64_t* idx = idx_t->mutable_data<int64_t>();
      std::vector<int64_t> first, counts;  // per unique: where it first occurs, how often
      std::unordered_map<T, int64_t> position;
      for (int64_t i = 0; i < n; ++i) {
        int64_t p = static_cast<int64_t>(first.size());
        bool fresh = true;
        if constexpr (std::is_floating_point_v<T>) {
          if (!std::isnan(v[i])) {
            // -0.0 and 0.0 compare equal; one key for both, whatever the hash makes of the sign.
            auto [it, inserted] = position.emplace(v[i] == T(0) ? T(0) : v[i], p);
            p = it->second;
            fresh = inserted;
          }
        } else {
          auto [it, inserted] = position.emplace(v[i], p);
          p = it->second;
          fresh = inserted;
        }
        if (fresh) {
          first.push_back(i);
          counts.push_back(0);
        }
        idx[i] = p;
        ++counts[p];
      }
      const int64_t u = static_cast<int64_t>(first.size());
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y_t, ctx.AllocateUninitialized(0, x->dtype(), {u}));
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * counts_t, ctx.AllocateUninitialized(2, DataType::kInt64, {u}));
      T* y = y_t->mutable_data<T>();
      for (int64_t j = 0; j < u; ++j) y[j] = v[first[j]];
      std::copy(counts.begin(), counts.end(), counts_t->mutable_data<int64_t>());
      return Status::Ok();
    });
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterLegacyMsOps(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "ExpandDims", 1, kOpenEnded, Make<ExpandDimsKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kMsDomain, "MatMulInteger16", 1, kOpenEnded, Make<MatMulInteger16Kernel>()));
  // Built as Pad-11: the contrib node's version 1 would make the ONNX kernel read Pad-1's attributes.
  ONNXFLOW_ASSIGN_OR_RETURN(KernelFactory pad11, Adapt(registry, kOnnxDomain, "Pad", 11, nullptr));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "Pad", 1, kOpenEnded, Make<MsPadKernel>(pad11)));
  // GatherND-11 exactly (ONNX Runtime registers one kernel for both), with int32 indices as well;
  // this schema has no batch_dims.
  auto no_batch_dims = [](const onnx::NodeProto&, onnx::NodeProto* to) {
    RemoveAttr(to, "batch_dims");
    return Status::Ok();
  };
  ONNXFLOW_ASSIGN_OR_RETURN(KernelFactory gather_nd, Adapt(registry, kOnnxDomain, "GatherND", 11, no_batch_dims));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "GatherND", 1, kOpenEnded, gather_nd));
  return registry.Register(kMsDomain, "Unique", 1, kOpenEnded, Make<MsUniqueKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
