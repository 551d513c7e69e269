// ONNX Runtime's normalizations for transformers:
//   SkipLayerNormalization(input, skip, gamma, beta?, bias?) -> output, mean?, inv_std_var?,
//       input_skip_bias_sum?: LayerNorm over the last dim of s = input + skip (+ bias)
//   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): the same with RMS normalization
//   SimplifiedLayerNormalization(X, scale) -> Y, inv_std_var?: RMS normalization over dims axis..
//   LayerNormalization below opset 17 (ONNX Runtime's own, as ONNX later specified it)
//   EmbedLayerNormalization: word + position (+ segment) embeddings, then LayerNorm; mask_index
//   QEmbedLayerNormalization: the same on 8-bit tables, dequantized as rows are read
// Rows go to cores; each row is summed and normalized by the vectorized row kernels of ops/nn.
#include <cmath>
#include <optional>

#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/elementwise/broadcast.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/row_kernels.h"

namespace onnxflow {
namespace contrib {
namespace {

// Normalizes one row of n floats from `src` into `dst`; returns (mean, inv_std).
inline std::pair<float, float> NormalizeOne(const float* src, int64_t n, bool rms, float epsilon, const float* gamma,
                                            const float* beta, float* dst) {
  float mean = 0.0f;
  if (!rms) mean = static_cast<float>(RowSum(src, n) / static_cast<double>(n));
  const double var = RowSumSquaredDiff(src, mean, n) / static_cast<double>(n);
  const float inv = static_cast<float>(1.0 / std::sqrt(var + epsilon));
  NormalizeRow(src, mean, inv, gamma, beta, dst, n);
  return {mean, inv};
}

Result<const Tensor*> RequireVector(const KernelContext& ctx, int i, int64_t n, DataType t, const char* op,
                                    const char* name, bool optional) {
  const Tensor* v = ctx.input_tensor(i);
  if (v == nullptr) {
    if (optional) return v;
    return InvalidArgument(std::string(op) + ": input '" + name + "' is required");
  }
  // t undefined: any float-like type.
  if (v->size() != n || (t != DataType::kUndefined && v->dtype() != t) || !IsFloatLike(v->dtype())) {
    const std::string want = t != DataType::kUndefined ? DataTypeName(t) : "a float type";
    return InvalidArgument(std::string(op) + ": input '" + name + "' must be " + std::to_string(n) + " values of " +
                           want + ", got " + DataTypeName(v->dtype()) + " " + ShapeToString(v->shape()));
  }
  return v;
}

// Row r of n values of a float-like tensor as floats: in place for float, else widened into `buf`.
const float* FloatRow(const Tensor& t, int64_t r, int64_t n, float* buf) {
  if (t.dtype() == DataType::kFloat) return t.data<float>() + r * n;
  WidenHalves(t.dtype(), static_cast<const uint16_t*>(t.raw_data()) + r * n, buf, n);
  return buf;
}

// A float tensor's copy of a float-like one (the broadcast path's 16-bit operands).
Tensor FloatCopy(const Tensor& t) {
  Tensor f = Tensor::Uninitialized(DataType::kFloat, t.shape());
  if (t.dtype() == DataType::kFloat) {
    std::copy(t.data<float>(), t.data<float>() + t.size(), f.mutable_data<float>());
  } else {
    WidenHalves(t.dtype(), t.raw_data(), f.mutable_data<float>(), t.size());
  }
  return f;
}

class SkipNormKernel : public OpKernel {
 public:
  // `any_broadcast`: the internal AddLayerNormalization (graph/norm_fusion.cc), whose operands are
  // those of an Add and may broadcast in any way Add allows; the common case, equal shapes, runs
  // as SkipLayerNormalization does.
  SkipNormKernel(const KernelInfo& info, bool rms, bool any_broadcast = false)
      : rms_(any_broadcast ? info.GetInt("rms", 0) != 0 : rms), any_broadcast_(any_broadcast),
        op_(any_broadcast ? "AddLayerNormalization" : rms ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization"),
        epsilon_(info.GetFloat("epsilon", 1e-12f)),
        output_type_(any_broadcast ? info.GetInt("output_type", 0) : 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* skip, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*x, op_, "input"));
    // AddLayerNormalization's operands may be float or 16-bit each (a float16 model's activations
    // stored in half, graph/blocked_half); output 0's type is its output_type, and the sum (output
    // 3) is then float: a residual stream rounded to half at every layer drifts (ViT-S float16's
    // logits 2.4 half-ulps from ONNX Runtime's with it in half, 1.4 with it in float, which costs
    // 0.2 MB of its 62 MB). Without output_type, both take the input's type.
    const DataType operand_type = any_broadcast_ ? DataType::kUndefined : x->dtype();
    DataType y_type = x->dtype();
    if (output_type_ != 0) {
      if (output_type_ != 1 && output_type_ != 10 && output_type_ != 16) {
        return InvalidArgument(std::string(op_) + ": output_type must be FLOAT (1), FLOAT16 (10) or BFLOAT16 (16), got " +
                               std::to_string(output_type_));
      }
      y_type = static_cast<DataType>(output_type_);
    }
    const DataType sum_type = output_type_ != 0 ? DataType::kFloat : y_type;
    if (any_broadcast_) ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*skip, op_, "skip"));
    if (any_broadcast_ && (x->shape() != skip->shape() || x->rank() < 2)) return BroadcastSum(ctx, *x, *skip, y_type, sum_type);
    if (x->rank() < 2) return InvalidArgument(std::string(op_) + ": input must have rank 2 or 3, got " + ShapeToString(x->shape()));
    const int64_t n = x->dim(x->rank() - 1), rows = x->size() / std::max<int64_t>(n, 1);
    // skip: the shape of input, or (1, S, H) / (S, H) repeated over the batch.
    if ((!any_broadcast_ && skip->dtype() != x->dtype()) || skip->dim(skip->rank() - 1) != n || x->size() % std::max<int64_t>(skip->size(), 1) != 0 ||
        (skip->size() != x->size() && skip->size() != SizeFromDim(x->shape(), x->rank() - 2))) {
      return InvalidArgument(std::string(op_) + ": skip " + ShapeToString(skip->shape()) + " does not fit input " +
                             ShapeToString(x->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* gamma, RequireVector(ctx, 2, n, operand_type, op_, "gamma", false));
    const Tensor* beta = nullptr;
    if (!rms_) { ONNXFLOW_ASSIGN_OR_RETURN(beta, RequireVector(ctx, 3, n, operand_type, op_, "beta", true)); }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* bias, RequireVector(ctx, rms_ ? 3 : 4, n, operand_type, op_, "bias", true));

    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, y_type, x->shape()));
    Shape stat_shape = x->shape();
    stat_shape.back() = 1;
    Tensor* mean_t = nullptr;
    Tensor* inv_t = nullptr;
    Tensor* sum_t = nullptr;
    // The RMS form's mean is 0 (ONNX Runtime writes zeros there too).
    if (ctx.has_output(1)) { ONNXFLOW_ASSIGN_OR_RETURN(mean_t, ctx.Allocate(1, DataType::kFloat, stat_shape)); }
    if (ctx.has_output(2)) { ONNXFLOW_ASSIGN_OR_RETURN(inv_t, ctx.Allocate(2, DataType::kFloat, stat_shape)); }
    if (ctx.has_output(3)) { ONNXFLOW_ASSIGN_OR_RETURN(sum_t, ctx.AllocateUninitialized(3, sum_type, x->shape())); }
    if (y->size() == 0) return Status::Ok();

    FloatIn gi(*gamma);
    std::optional<FloatIn> be, bi;
    if (beta != nullptr) be.emplace(*beta);
    if (bias != nullptr) bi.emplace(*bias);
    // 16-bit operands are widened, and 16-bit outputs rounded, a row at a time: no float copy of a
    // whole tensor.
    const bool half_out = y_type != DataType::kFloat;
    const int64_t skip_rows = skip->size() / n;
    ParallelFor(ctx, rows, n * 6, [&](int64_t r0, int64_t r1) {
      std::vector<float> buf(static_cast<size_t>(4 * n));
      float* const a_buf = buf.data();
      float* const b_buf = a_buf + n;
      float* const s_buf = b_buf + n;
      float* const y_buf = s_buf + n;
      for (int64_t r = r0; r < r1; ++r) {
        const float* a = FloatRow(*x, r, n, a_buf);
        const float* b = FloatRow(*skip, r % skip_rows, n, b_buf);
        float* s = sum_t != nullptr && sum_type == DataType::kFloat ? sum_t->mutable_data<float>() + r * n : s_buf;
        float* out = half_out ? y_buf : y->mutable_data<float>() + r * n;
        // s = a + b (+ bias), vectorized (NormalizeRow with mean 0, scale 1 is x + bias): the
        // scalar loops took half of BERT's SkipLayerNormalization time.
        NormalizeRow(a, 0.0f, 1.0f, nullptr, b, s, n);
        if (bi) NormalizeRow(s, 0.0f, 1.0f, nullptr, bi->data, s, n);
        auto [mean, inv] = NormalizeOne(s, n, rms_, epsilon_, gi.data, be ? be->data : nullptr, out);
        if (half_out) NarrowFloats(out, y_type, static_cast<uint16_t*>(y->mutable_raw_data()) + r * n, n);
        if (sum_t != nullptr && sum_type != DataType::kFloat) {
          NarrowFloats(s, sum_type, static_cast<uint16_t*>(sum_t->mutable_raw_data()) + r * n, n);
        }
        if (mean_t != nullptr) mean_t->mutable_data<float>()[r] = mean;
        if (inv_t != nullptr) inv_t->mutable_data<float>()[r] = inv;
      }
    });
    return Status::Ok();
  }

 private:
  // a + b broadcast as Add does (into output 3 when it is read, else a scratch tensor), then each
  // last-axis row normalized. In float: 16-bit operands are widened whole and 16-bit outputs
  // rounded at the end (a broadcast is rare enough in a float16 model not to need more).
  Status BroadcastSum(KernelContext& ctx, const Tensor& a_in, const Tensor& b_in, DataType y_type,
                      DataType sum_type) const {
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a_in.shape(), b_in.shape()));
    if (shape.empty()) return InvalidArgument(std::string(op_) + ": the sum must have rank 1 or more");
    const int64_t n = shape.back(), rows = ElementCount(shape) / std::max<int64_t>(n, 1);
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* gamma, RequireVector(ctx, 2, n, DataType::kUndefined, op_, "gamma", false));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* beta, RequireVector(ctx, 3, n, DataType::kUndefined, op_, "beta", true));
    const bool half_out = y_type != DataType::kFloat;
    Tensor scratch_sum, scratch_y;
    Tensor* sum_out = nullptr;
    if (ctx.has_output(3)) { ONNXFLOW_ASSIGN_OR_RETURN(sum_out, ctx.AllocateUninitialized(3, sum_type, shape)); }
    Tensor* sum = sum_out != nullptr && sum_type == DataType::kFloat ? sum_out : &scratch_sum;
    if (sum == &scratch_sum) scratch_sum = Tensor::Uninitialized(DataType::kFloat, shape);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y_out, ctx.AllocateUninitialized(0, y_type, shape));
    if (y_out->size() == 0) return Status::Ok();
    Tensor* y = y_out;
    if (half_out) {
      scratch_y = Tensor::Uninitialized(DataType::kFloat, shape);
      y = &scratch_y;
    }
    Tensor a_float, b_float;
    if (a_in.dtype() != DataType::kFloat) a_float = FloatCopy(a_in);
    if (b_in.dtype() != DataType::kFloat) b_float = FloatCopy(b_in);
    const Tensor& a = a_in.dtype() != DataType::kFloat ? a_float : a_in;
    const Tensor& b = b_in.dtype() != DataType::kFloat ? b_float : b_in;
    ONNXFLOW_RETURN_IF_ERROR((RunBinary<float, float, float>(
        ctx, a, b, sum, 1, [](const float* p, bool p_one, const float* q, bool q_one, float* o, int64_t m) {
          for (int64_t i = 0; i < m; ++i) o[i] = p[p_one ? 0 : i] + q[q_one ? 0 : i];
        })));
    FloatIn g(*gamma);
    std::optional<FloatIn> be;
    if (beta != nullptr) be.emplace(*beta);
    const float* s = sum->data<float>();
    float* out = y->mutable_data<float>();
    ParallelFor(ctx, rows, n * 6, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) NormalizeOne(s + r * n, n, rms_, epsilon_, g.data, be ? be->data : nullptr, out + r * n);
    });
    if (half_out) NarrowFloats(out, y_type, y_out->mutable_raw_data(), y_out->size());
    if (sum_out != nullptr && sum_type != DataType::kFloat) NarrowFloats(s, sum_type, sum_out->mutable_raw_data(), sum_out->size());
    return Status::Ok();
  }

  bool rms_;
  bool any_broadcast_;
  const char* op_;
  float epsilon_;
  int64_t output_type_;  // AddLayerNormalization: outputs 0 and 3's type (0: the input's)
};

// SimplifiedLayerNormalization: Y = X / sqrt(mean(X^2) + epsilon) * scale over dims axis..;
// inv_std_var (output 1) in float, or in X's type with stash_type 0.
class SimplifiedNormKernel : public OpKernel {
 public:
  explicit SimplifiedNormKernel(const KernelInfo& info)
      : axis_(info.GetInt("axis", -1)),
        epsilon_(info.GetFloat("epsilon", 1e-5f)),
        stash_float_(info.GetInt("stash_type", 1) == 1) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*x, "SimplifiedLayerNormalization", "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, x->rank()));
    const int64_t n = SizeFromDim(x->shape(), axis), rows = SizeToDim(x->shape(), axis);
    if (scale->size() != n || !IsFloatLike(scale->dtype())) {
      return InvalidArgument("SimplifiedLayerNormalization: scale must be " + std::to_string(n) +
                             " float values (the normalized dims of X " + ShapeToString(x->shape()) + "), got " +
                             DataTypeName(scale->dtype()) + " " + ShapeToString(scale->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    std::optional<FloatOut> inv;
    if (ctx.has_output(1)) {
      Shape stat(x->shape().begin(), x->shape().begin() + axis);
      stat.resize(x->rank(), 1);
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * inv_t, ctx.Allocate(1, stash_float_ ? DataType::kFloat : x->dtype(), stat));
      inv.emplace(inv_t);
    }
    if (y->size() == 0) return Status::Ok();
    FloatIn xi(*x), si(*scale);
    FloatOut out(y);
    ParallelFor(ctx, rows, n * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float s = NormalizeOne(xi.data + r * n, n, true, epsilon_, si.data, nullptr, out.data + r * n).second;
        if (inv) inv->data[r] = s;
      }
    });
    out.Finish();
    if (inv) inv->Finish();
    return Status::Ok();
  }

 private:
  int64_t axis_;
  float epsilon_;
  bool stash_float_;  // stash_type 1 (the default): inv_std_var in float
};

// LayerNorm of one embedding sum in ONNX Runtime's arithmetic: float sums in order, the deviation
// divided, not multiplied by its inverse. A dynamically quantized BERT quantizes this output at
// once (DynamicQuantizeLinear before QAttention), where one ulp moves a value across a rounding
// edge and the error grows layer by layer: with the ops/nn row kernels' double sums, a 12-layer
// encoder ended 0.14 away from ONNX Runtime's output.
void EmbedNormalize(const float* s, int64_t n, float epsilon, const float* gamma, const float* beta, float* out) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += s[i];
  const float mean = sum / static_cast<float>(n);
  float squares = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float a = s[i] - mean;
    out[i] = a;
    squares += a * a;
  }
  const float deviation = std::sqrt(squares / static_cast<float>(n) + epsilon);
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] / deviation * gamma[i] + beta[i];
}

// One embedding table's rows as floats: a float-like table (widened once per run), or an 8-bit one
// (QEmbedLayerNormalization) dequantized row by row, (q - zero_point) * scale, as it is read.
struct EmbeddingRows {
  std::optional<FloatIn> f;
  const uint8_t* q = nullptr;
  bool q_signed = false;
  float scale = 1.0f;
  int32_t zero = 0;
  int64_t rows = 0, hidden = 0;

  // s = row r when `first`, else s += row r.
  void Add(int64_t r, float* s, bool first) const {
    if (f) {
      const float* row = f->data + r * hidden;
      for (int64_t j = 0; j < hidden; ++j) s[j] = first ? row[j] : s[j] + row[j];
      return;
    }
    const uint8_t* row = q + r * hidden;
    for (int64_t j = 0; j < hidden; ++j) {
      const int32_t v = q_signed ? static_cast<int8_t>(row[j]) : row[j];
      const float d = static_cast<float>(v - zero) * scale;
      s[j] = first ? d : s[j] + d;
    }
  }
};

// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
// segment_embedding?, gamma, beta, mask?, position_ids?) -> output, mask_index, embedding_sum?
// QEmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
// segment_embedding?, gamma, beta, mask?, then the scales of the five tables and their zero
// points) -> output, mask_index: the same with 8-bit tables (dynamic quantization of a BERT
// embedding), float output.
class EmbedLayerNormKernel : public OpKernel {
 public:
  EmbedLayerNormKernel(const KernelInfo& info, bool quantized)
      : epsilon_(info.GetFloat("epsilon", 1e-12f)),
        quantized_(quantized),
        op_(quantized ? "QEmbedLayerNormalization" : "EmbedLayerNormalization") {}

  Status Compute(KernelContext& ctx) const override {
    const char* op = op_;
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* ids, ctx.RequireTensor(0));
    const Tensor* seg = ctx.input_tensor(1);
    if (ids->rank() != 2 || ids->dtype() != DataType::kInt32) {
      return InvalidArgument(std::string(op) + ": input_ids must be int32 (batch, sequence), got " +
                             DataTypeName(ids->dtype()) + " " + ShapeToString(ids->shape()));
    }
    EmbeddingRows word, pos, seg_rows, gamma, beta;
    DataType out_type = DataType::kFloat;
    ONNXFLOW_RETURN_IF_ERROR(Table(ctx, 2, 8, 13, "word_embedding", false, &word, &out_type));
    ONNXFLOW_RETURN_IF_ERROR(Table(ctx, 3, 9, 14, "position_embedding", false, &pos, nullptr));
    const int64_t batch = ids->dim(0), seq = ids->dim(1), hidden = word.hidden;
    if (pos.hidden != hidden) {
      return InvalidArgument(std::string(op) + ": word_embedding and position_embedding must be (rows, hidden) of one type");
    }
    const bool has_seg = seg != nullptr && ctx.input_tensor(4) != nullptr;
    if (seg != nullptr) {
      if (seg->shape() != ids->shape() || seg->dtype() != DataType::kInt32 || ctx.input_tensor(4) == nullptr) {
        return InvalidArgument(std::string(op) + ": segment_ids must be int32 like input_ids, with a (rows, " +
                               std::to_string(hidden) + ") segment_embedding");
      }
      ONNXFLOW_RETURN_IF_ERROR(Table(ctx, 4, 10, 15, "segment_embedding", false, &seg_rows, nullptr));
      if (seg_rows.hidden != hidden) return InvalidArgument(std::string(op) + ": segment_embedding must have " + std::to_string(hidden) + " columns");
    }
    ONNXFLOW_RETURN_IF_ERROR(Table(ctx, 5, 11, 16, "gamma", true, &gamma, nullptr));
    ONNXFLOW_RETURN_IF_ERROR(Table(ctx, 6, 12, 17, "beta", true, &beta, nullptr));
    if (gamma.hidden != hidden || beta.hidden != hidden) {
      return InvalidArgument(std::string(op) + ": gamma and beta must hold " + std::to_string(hidden) + " values each");
    }
    std::vector<float> gamma_f(hidden), beta_f(hidden);
    gamma.Add(0, gamma_f.data(), true);
    beta.Add(0, beta_f.data(), true);
    const Tensor* mask = ctx.input_tensor(7);
    if (mask != nullptr && (mask->shape() != ids->shape() || mask->dtype() != DataType::kInt32)) {
      return InvalidArgument(std::string(op) + ": mask must be int32 like input_ids");
    }
    const Tensor* pos_ids = quantized_ ? nullptr : ctx.input_tensor(8);
    if (pos_ids != nullptr && (pos_ids->dtype() != DataType::kInt32 || pos_ids->rank() != 2 || pos_ids->dim(1) != seq ||
                               (pos_ids->dim(0) != 1 && pos_ids->dim(0) != batch))) {
      return InvalidArgument(std::string(op) + ": position_ids must be int32 (1 or batch, sequence)");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, out_type, {batch, seq, hidden}));
    Tensor* sum_t = nullptr;
    if (!quantized_ && ctx.has_output(2)) { ONNXFLOW_ASSIGN_OR_RETURN(sum_t, ctx.AllocateUninitialized(2, out_type, {batch, seq, hidden})); }
    if (ctx.has_output(1)) {
      // mask_index: the number of ones in each row of the mask; 0 without a mask, as ONNX Runtime
      // writes (Attention then adds the mask value to every key alike, which changes nothing).
      // mask_index_type only informs shape inference: ONNX Runtime counts whatever it says.
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * mi, ctx.Allocate(1, DataType::kInt32, {batch}));
      for (int64_t b = 0; b < batch; ++b) {
        int32_t count = 0;
        for (int64_t s = 0; mask != nullptr && s < seq; ++s) count += mask->data<int32_t>()[b * seq + s] == 1;
        mi->mutable_data<int32_t>()[b] = count;
      }
    }
    FloatOut out(y);
    std::optional<FloatOut> sum;
    if (sum_t != nullptr) sum.emplace(sum_t);
    const int32_t* idp = ids->data<int32_t>();
    auto position = [&](int64_t t) -> int64_t {
      return pos_ids != nullptr ? pos_ids->data<int32_t>()[(pos_ids->dim(0) == 1 ? 0 : t / seq) * seq + t % seq] : t % seq;
    };
    // Indices are checked before any row is written: an out-of-range id is the caller's error.
    for (int64_t t = 0; t < batch * seq; ++t) {
      const int64_t p = position(t);
      if (idp[t] < 0 || idp[t] >= word.rows || p < 0 || p >= pos.rows ||
          (has_seg && (seg->data<int32_t>()[t] < 0 || seg->data<int32_t>()[t] >= seg_rows.rows))) {
        return InvalidArgument(std::string(op) + ": token " + std::to_string(t) + " indexes past an embedding table (id " +
                               std::to_string(idp[t]) + ", position " + std::to_string(p) + ")");
      }
    }
    ParallelFor(ctx, batch * seq, hidden * 6, [&](int64_t t0, int64_t t1) {
      std::vector<float> row(hidden);
      for (int64_t t = t0; t < t1; ++t) {
        float* s = sum ? sum->data + t * hidden : row.data();
        word.Add(idp[t], s, true);
        pos.Add(position(t), s, false);
        if (has_seg) seg_rows.Add(seg->data<int32_t>()[t], s, false);
        EmbedNormalize(s, hidden, epsilon_, gamma_f.data(), beta_f.data(), out.data + t * hidden);
      }
    });
    out.Finish();
    if (sum) sum->Finish();
    return Status::Ok();
  }

 private:
  // Input `i` as rows: a float-like (rows, hidden) table, or a `vector` (gamma, beta) as one row;
  // quantized, an 8-bit one with its scale at `scale_i` and zero point at `zero_i`. `type`, when
  // given, receives the output type (the table's, or the scale's when quantized).
  Status Table(const KernelContext& ctx, int i, int scale_i, int zero_i, const char* name, bool vector,
               EmbeddingRows* rows, DataType* type) const {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
    if (t->rank() != (vector ? 1 : 2) || t->size() == 0) {
      return InvalidArgument(std::string(op_) + ": input '" + name + "' must be " + (vector ? "a vector" : "(rows, hidden)") +
                             ", got " + ShapeToString(t->shape()));
    }
    rows->rows = vector ? 1 : t->dim(0);
    rows->hidden = t->dim(t->rank() - 1);
    if (!quantized_) {
      ONNXFLOW_RETURN_IF_ERROR(RequireFloatLike(*t, op_, name));
      rows->f.emplace(*t);
      if (type != nullptr) *type = t->dtype();
      return Status::Ok();
    }
    if (t->dtype() != DataType::kUint8 && t->dtype() != DataType::kInt8) {
      return InvalidArgument(std::string(op_) + ": input '" + name + "' must be uint8 or int8, got " + DataTypeName(t->dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(scale_i));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* zero, ctx.RequireTensor(zero_i));
    if (scale->size() != 1 || !IsFloatLike(scale->dtype()) || zero->size() != 1 || zero->dtype() != t->dtype()) {
      return InvalidArgument(std::string(op_) + ": the scale and zero point of '" + name +
                             "' must be one float and one value of its type");
    }
    rows->q = static_cast<const uint8_t*>(t->raw_data());
    rows->q_signed = t->dtype() == DataType::kInt8;
    rows->scale = FloatIn(*scale).data[0];
    rows->zero = rows->q_signed ? zero->data<int8_t>()[0] : zero->data<uint8_t>()[0];
    if (type != nullptr) *type = scale->dtype();
    return Status::Ok();
  }

  float epsilon_;
  bool quantized_;
  const char* op_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterNormOps(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "SkipLayerNormalization", 1, kOpenEnded,
                                             Make<SkipNormKernel>(/*rms=*/false)));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "SkipSimplifiedLayerNormalization", 1, kOpenEnded,
                                             Make<SkipNormKernel>(/*rms=*/true)));
  // ONNX Runtime registers SimplifiedLayerNormalization (and LayerNormalization before ONNX defined
  // it in opset 17) in the default domain; exporters also write it under com.microsoft.
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "SimplifiedLayerNormalization", 1, kOpenEnded, Make<SimplifiedNormKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kMsDomain, "SimplifiedLayerNormalization", 1, kOpenEnded, Make<SimplifiedNormKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxflowDomain, internal_ops::kAddLayerNormalization,
                                             internal_ops::kVersion, kOpenEnded,
                                             Make<SkipNormKernel>(/*rms=*/false, /*any_broadcast=*/true)));
  ONNXFLOW_ASSIGN_OR_RETURN(KernelFactory ln, Adapt(registry, kOnnxDomain, "LayerNormalization", 17, nullptr));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "LayerNormalization", 1, 16, ln));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "LayerNormalization", 1, kOpenEnded, ln));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kMsDomain, "EmbedLayerNormalization", 1, kOpenEnded, Make<EmbedLayerNormKernel>(false)));
  return registry.Register(kMsDomain, "QEmbedLayerNormalization", 1, kOpenEnded, Make<EmbedLayerNormKernel>(true));
}

}  // namespace contrib
}  // namespace onnxflow
