// Einsum (12): explicit ("ij,jk->ik") and implicit ("ij,jk") forms, ellipsis with broadcasting,
// repeated labels within one operand (diagonals). Two float operands whose labels are each batch
// (both operands and the output), M (the first and the output), N (the second and the output) or
// K (both operands, summed) are a batched product on the GEMM, each operand permuted only when its
// labels are not already in GEMM order (transformer exports' "bhqd,bhkd->bhqk": 67 -> 0.17 ms
// against ONNX Runtime's 3.9, one core). Everything else runs a direct loop over every combination of output
// and summed labels: exact, and fast enough for the sizes einsum sees there.
#include <algorithm>
#include <map>
#include <type_traits>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/framework/parallel.h"
#include "ops/math/gemm.h"
#include "ops/math/matmul.h"
#include "ops/math/register.h"
#include "ops/tensor/permute.h"

namespace onnxflow {
namespace {

constexpr int kEllipsisBase = 100;  // labels 0..51 are letters; ellipsis dims are 100 + i

struct Term {
  std::vector<int> labels;  // with the ellipsis expanded per operand at run time
  bool has_ellipsis = false;
  int ellipsis_at = -1;     // position of the ellipsis among the letters
};

std::string LabelName(int label) {
  if (label >= kEllipsisBase) return "...";
  return std::string(1, static_cast<char>(label < 26 ? 'a' + label : 'A' + label - 26));
}

// The most steps (output elements times summed combinations, per operand) the direct loop may take:
// about 10 s on one core. A hostile equation over a few MB of operands can ask for 2^40 and more.
constexpr int64_t kMaxDirectSteps = int64_t{1} << 31;

Result<Term> ParseTerm(const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (t.has_ellipsis || s.compare(i, 3, "...") != 0) return InvalidArgument("Einsum: bad ellipsis in '" + s + "'");
      t.has_ellipsis = true;
      t.ellipsis_at = static_cast<int>(t.labels.size());
      i += 2;
    } else if (c >= 'a' && c <= 'z') {
      t.labels.push_back(c - 'a');
    } else if (c >= 'A' && c <= 'Z') {
      t.labels.push_back(26 + c - 'A');
    } else {
      return InvalidArgument(std::string("Einsum: unexpected character '") + c + "'");
    }
  }
  return t;
}

// The order of `labels` that lists `first`, then `second`, then `third` (each in its own order),
// as a permutation of positions in `labels`; empty when `labels` holds a label outside them.
std::vector<int64_t> OrderOf(const std::vector<int>& labels, const std::vector<int>& first, const std::vector<int>& second,
                             const std::vector<int>& third) {
  std::vector<int64_t> perm;
  for (const std::vector<int>* group : {&first, &second, &third}) {
    for (int l : *group) {
      const auto at = std::find(labels.begin(), labels.end(), l);
      if (at != labels.end()) perm.push_back(at - labels.begin());
    }
  }
  if (perm.size() != labels.size()) perm.clear();
  return perm;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// `t` with its axes in order `perm`: `t` itself when that is its order, else a permuted copy in `store`.
Result<const Tensor*> InOrder(const KernelContext& ctx, const Tensor& t, const std::vector<int64_t>& perm, Tensor* store) {
  if (IsIdentity(perm)) return &t;
  Shape shape;
  for (int64_t p : perm) shape.push_back(t.dim(p));
  *store = Tensor::Uninitialized(t.dtype(), shape);
  ONNXFLOW_RETURN_IF_ERROR(tensor_ops::Permute(ctx, t, t.shape(), perm, store));
  return store;
}

// The batched-GEMM form of a two-operand float contraction (see the top of the file); false when
// the equation is not one (a label summed within one operand, a diagonal, a broadcast dim of 1).
Result<bool> ContractOnGemm(KernelContext& ctx, const std::vector<const Tensor*>& xs,
                            const std::vector<std::vector<int>>& labels, const std::vector<int>& out_labels,
                            const std::map<int, int64_t>& size, Tensor* y) {
  if (xs.size() != 2 || xs[0]->dtype() != DataType::kFloat) return false;
  auto has = [](const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); };
  for (size_t i = 0; i < 2; ++i) {
    for (size_t d = 0; d < labels[i].size(); ++d) {
      if (std::count(labels[i].begin(), labels[i].end(), labels[i][d]) != 1) return false;  // a diagonal
      if (xs[i]->dim(d) != size.at(labels[i][d])) return false;                             // broadcast
    }
  }
  std::vector<int> batch, m, n, k;
  for (int l : out_labels) {
    const bool a = has(labels[0], l), b = has(labels[1], l);
    (a && b ? batch : a ? m : n).push_back(l);
  }
  for (int l : labels[0]) {
    if (has(out_labels, l)) continue;
    if (!has(labels[1], l)) return false;  // summed within the first operand alone
    k.push_back(l);
  }
  for (int l : labels[1]) {
    if (!has(out_labels, l) && !has(labels[0], l)) return false;
  }
  auto count = [&](const std::vector<int>& group) {
    int64_t c = 1;
    for (int l : group) c *= size.at(l);
    return c;
  };
  const int64_t batches = count(batch), rows = count(m), cols = count(n), depth = count(k);
  if (y->size() == 0) return true;
  if (depth == 0) {  // nothing summed: zeros
    std::fill(y->mutable_data<float>(), y->mutable_data<float>() + y->size(), 0.0f);
    return true;
  }
  // A as [batch, M, K], or [batch, K, M] read transposed; B as [batch, K, N] or [batch, N, K].
  const std::vector<int64_t> a_plain = OrderOf(labels[0], batch, m, k), a_trans = OrderOf(labels[0], batch, k, m);
  const std::vector<int64_t> b_plain = OrderOf(labels[1], batch, k, n), b_trans = OrderOf(labels[1], batch, n, k);
  const bool trans_a = !IsIdentity(a_plain) && IsIdentity(a_trans);
  const bool trans_b = !IsIdentity(b_plain) && IsIdentity(b_trans);
  Tensor a_store, b_store, c_store;
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, InOrder(ctx, *xs[0], trans_a ? a_trans : a_plain, &a_store));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, InOrder(ctx, *xs[1], trans_b ? b_trans : b_plain, &b_store));
  // C as [batch, M, N], permuted into Y's order after when that is another.
  std::vector<int> c_labels = batch;
  c_labels.insert(c_labels.end(), m.begin(), m.end());
  c_labels.insert(c_labels.end(), n.begin(), n.end());
  const bool c_is_y = c_labels == out_labels;
  Shape c_shape;
  for (int l : c_labels) c_shape.push_back(size.at(l));
  if (!c_is_y) c_store = Tensor::Uninitialized(DataType::kFloat, c_shape);
  float* c = c_is_y ? y->mutable_data<float>() : c_store.mutable_data<float>();
  const float* ad = a->data<float>();
  const float* bd = b->data<float>();
  const int64_t macs = rows * cols * depth;
  const int inner = GemmThreadsPerBatch(batches, macs, ctx.threads());
  ParallelFor(ctx, batches, inner > 1 ? 1 : macs, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) {
      GemmInputA ia{nullptr, ad + i * rows * depth, trans_a ? rows : depth, trans_a};
      GemmInputB ib{nullptr, bd + i * depth * cols, trans_b ? depth : cols, trans_b};
      Sgemm(rows, cols, depth, ia, ib, c + i * rows * cols, cols, GemmEpilogue{}, inner);
    }
  });
  if (!c_is_y) {
    std::vector<int64_t> to_y;  // Y's axis j is C's axis to_y[j]
    for (int l : out_labels) to_y.push_back(std::find(c_labels.begin(), c_labels.end(), l) - c_labels.begin());
    ONNXFLOW_RETURN_IF_ERROR(tensor_ops::Permute(ctx, c_store, c_shape, to_y, y));
  }
  return true;
}

class EinsumKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const std::string eq = info.GetString("equation", "");
    auto kernel = std::unique_ptr<EinsumKernel>(new EinsumKernel());
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    size_t start = 0;
    while (true) {
      const size_t comma = lhs.find(',', start);
      ONNXFLOW_ASSIGN_OR_RETURN(Term t, ParseTerm(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
      kernel->inputs_.push_back(t);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    kernel->explicit_ = arrow != std::string::npos;
    if (kernel->explicit_) {
      ONNXFLOW_ASSIGN_OR_RETURN(kernel->output_, ParseTerm(eq.substr(arrow + 2)));
      // One output axis per label: the loops below (and the GEMM's M, N and batch groups) give each
      // label one extent, and the spec allows no diagonal in the output.
      const std::vector<int>& out = kernel->output_.labels;
      for (size_t i = 0; i < out.size(); ++i) {
        if (std::count(out.begin(), out.end(), out[i]) > 1) {
          return InvalidArgument("Einsum: attribute 'equation' ('" + eq + "') names output label '" + LabelName(out[i]) +
                                 "' more than once");
        }
      }
    }
    return std::unique_ptr<OpKernel>(kernel.release());
  }

  Status Compute(KernelContext& ctx) const override {
    if (ctx.input_count() != static_cast<int>(inputs_.size())) {
      return InvalidArgument("Einsum: the equation names " + std::to_string(inputs_.size()) + " operands, got " +
                             std::to_string(ctx.input_count()));
    }
    std::vector<const Tensor*> xs;
    for (int i = 0; i < ctx.input_count(); ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(i));
      if (!xs.empty() && x->dtype() != xs[0]->dtype()) return InvalidArgument("Einsum: operands differ in type");
      xs.push_back(x);
    }
    // Expand ellipses and collect label sizes.
    int64_t ell_rank = 0;
    std::vector<std::vector<int>> labels(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const Term& t = inputs_[i];
      const int64_t letters = static_cast<int64_t>(t.labels.size());
      if ((!t.has_ellipsis && xs[i]->rank() != letters) || (t.has_ellipsis && xs[i]->rank() < letters)) {
        return InvalidArgument("Einsum: operand " + std::to_string(i) + " " + ShapeToString(xs[i]->shape()) +
                               " does not match its term");
      }
      if (t.has_ellipsis) ell_rank = std::max(ell_rank, xs[i]->rank() - letters);
    }
    std::map<int, int64_t> size;
    std::map<int, int> count;
    for (size_t i = 0; i < xs.size(); ++i) {
      const Term& t = inputs_[i];
      std::vector<int>& l = labels[i];
      const int64_t e = xs[i]->rank() - static_cast<int64_t>(t.labels.size());
      for (int p = 0; p < static_cast<int>(t.labels.size()) + 1; ++p) {
        if (t.has_ellipsis && p == t.ellipsis_at) {
          for (int64_t q = 0; q < e; ++q) l.push_back(kEllipsisBase + static_cast<int>(ell_rank - e + q));
        }
        if (p < static_cast<int>(t.labels.size())) l.push_back(t.labels[p]);
      }
      std::map<int, int64_t> own;  // a label repeated within one operand takes its diagonal: no broadcast
      for (size_t d = 0; d < l.size(); ++d) {
        const int64_t dim = xs[i]->dim(d);
        if (!own.emplace(l[d], dim).second && own[l[d]] != dim) {
          return InvalidArgument("Einsum: input " + std::to_string(i) + " " + ShapeToString(xs[i]->shape()) +
                                 " repeats label '" + LabelName(l[d]) + "' over axes of different sizes");
        }
        auto it = size.find(l[d]);
        if (it == size.end() || it->second == 1) {
          size[l[d]] = dim;
        } else if (dim != it->second && dim != 1) {
          return InvalidArgument("Einsum: input " + std::to_string(i) + " " + ShapeToString(xs[i]->shape()) +
                                 " gives label '" + LabelName(l[d]) + "' size " + std::to_string(dim) +
                                 ", another input " + std::to_string(it->second));
        }
        ++count[l[d]];
      }
    }
    std::vector<int> out_labels;
    if (explicit_) {
      for (int p = 0; p < static_cast<int>(output_.labels.size()) + 1; ++p) {
        if (output_.has_ellipsis && p == output_.ellipsis_at) {
          for (int64_t q = 0; q < ell_rank; ++q) out_labels.push_back(kEllipsisBase + static_cast<int>(q));
        }
        if (p < static_cast<int>(output_.labels.size())) {
          if (!size.count(output_.labels[p])) return InvalidArgument("Einsum: output label not in any input");
          out_labels.push_back(output_.labels[p]);
        }
      }
      // Ellipsis dims missing from an explicit output are summed like any other label.
    } else {
      for (int64_t q = 0; q < ell_rank; ++q) out_labels.push_back(kEllipsisBase + static_cast<int>(q));
      for (const auto& [label, n] : count) {
        if (label < kEllipsisBase && n == 1) out_labels.push_back(label);
      }
    }
    std::vector<int> sum_labels;
    for (const auto& [label, n] : size) {
      if (std::find(out_labels.begin(), out_labels.end(), label) == out_labels.end()) sum_labels.push_back(label);
    }
    Shape out_shape;
    for (int l : out_labels) out_shape.push_back(size[l]);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, xs[0]->dtype(), out_shape));

    // Per operand, the stride of each loop label (repeated labels add up: diagonals).
    std::vector<int> loop = out_labels;
    loop.insert(loop.end(), sum_labels.begin(), sum_labels.end());
    std::vector<int64_t> loop_size;
    for (int l : loop) loop_size.push_back(size[l]);
    std::vector<std::vector<int64_t>> strides(xs.size(), std::vector<int64_t>(loop.size(), 0));
    for (size_t i = 0; i < xs.size(); ++i) {
      const std::vector<int64_t> st = Strides(xs[i]->shape());
      for (size_t d = 0; d < labels[i].size(); ++d) {
        if (xs[i]->dim(d) == 1) continue;  // broadcast
        const size_t pos = std::find(loop.begin(), loop.end(), labels[i][d]) - loop.begin();
        strides[i][pos] += st[d];
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const bool on_gemm, ContractOnGemm(ctx, xs, labels, out_labels, size, y));
    if (on_gemm) return Status::Ok();
    const int64_t out_count = y->size();
    // Summed labels come from different operands, so their product is not bounded by any tensor's size.
    int64_t sum_count = 1, steps = 0;
    for (size_t d = out_labels.size(); d < loop.size(); ++d) {
      if (loop_size[d] == 0) return Status::Ok();  // an empty sum: Y stays zeros
      if (__builtin_mul_overflow(sum_count, loop_size[d], &sum_count)) sum_count = kMaxDirectSteps;
    }
    if (__builtin_mul_overflow(out_count, sum_count, &steps) ||
        __builtin_mul_overflow(steps, static_cast<int64_t>(xs.size()), &steps) || steps > kMaxDirectSteps) {
      return ResourceExhausted("Einsum: attribute 'equation' asks for " + std::to_string(out_count) +
                               " outputs of " + std::to_string(sum_count) + " summed products each over " +
                               std::to_string(xs.size()) + " inputs, more than the direct loop's limit of " +
                               std::to_string(kMaxDirectSteps) + " steps");
    }
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(xs[0]->dtype(), [&](auto tag) {
      using T = decltype(tag);
      // Integers in uint64_t: products and sums wrap as two's complement does (the low bits are the
      // same), where a signed overflow would be undefined.
      using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
      T* yd = y->mutable_data<T>();
      std::vector<int64_t> idx(loop.size(), 0);
      for (int64_t o = 0; o < out_count; ++o) {
        Acc acc = Acc(0);
        for (int64_t s = 0; s < sum_count; ++s) {
          Acc prod = Acc(1);
          for (size_t i = 0; i < xs.size(); ++i) {
            int64_t off = 0;
            for (size_t d = 0; d < loop.size(); ++d) off += idx[d] * strides[i][d];
            prod = static_cast<Acc>(prod * static_cast<Acc>(ToCompute<T>(xs[i]->data<T>()[off])));
          }
          acc = static_cast<Acc>(acc + prod);
          for (int64_t d = static_cast<int64_t>(loop.size()) - 1; d >= static_cast<int64_t>(out_labels.size()); --d) {
            if (++idx[d] < loop_size[d]) break;
            idx[d] = 0;
          }
        }
        yd[o] = FromCompute<T>(static_cast<ComputeType<T>>(acc));
        for (int64_t d = static_cast<int64_t>(out_labels.size()) - 1; d >= 0; --d) {
          if (++idx[d] < loop_size[d]) break;
          idx[d] = 0;
        }
      }
      return Status::Ok();
    });
  }

 private:
  EinsumKernel() = default;
  std::vector<Term> inputs_;
  Term output_;
  bool explicit_ = false;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterEinsumKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Einsum", 12, kOpenEnded, Make<EinsumKernel>());
}

}  // namespace onnxflow
