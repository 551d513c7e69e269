// com.microsoft DynamicQuantizeLSTM-1: an LSTM (lstm_cell.h: the same cell, attributes and optional
// inputs) whose W and R are 8-bit and whose products run on the integer GEMM (ops/math/qgemm.h)
// with the activations quantized to uint8 as they come, the way ONNX Runtime's CPU kernel does
// (contrib_ops/cpu/quantization/dynamic_quantize_lstm.cc on the deep-CPU LSTM,
// providers/cpu/rnn/uni_directional_lstm.cc and rnn_helpers.cc):
//  * W is [num_directions, input_size, 4 * hidden_size] and R [num_directions, hidden_size,
//    4 * hidden_size], int8 or uint8: the GEMM's B as stored (transposed against ONNX LSTM's W/R),
//    columns in the gate order i, o, f, c. Inputs 8-11, W_scale, W_zero_point, R_scale and
//    R_zero_point, are [num_directions] (one value per direction) or [num_directions, 4 * hidden]
//    (one per column), zero points of their weight's type.
//  * Every GEMM call quantizes its whole A with DynamicQuantizeLinear's arithmetic (range widened
//    to 0, scale = range / 255, zero point round-half-even, values round-half-even and saturated):
//    the input projection once over X's rows for steps [0, longest sequence) of every batch row,
//    padding included; the recurrent product once per step over the hidden states of the batch
//    rows whose state came from the previous step (every row at step 0; a finished row's state
//    counts as 0, as ONNX Runtime zeroes it in Y before reading it back).
//  * The GEMM dequantizes in its epilogue: float(sum) * (a_scale * w_scale[column]), the
//    multiplier formed in float per call; the gates then add W x + R h + (Wb + Rb) in that order.
// ONNX Runtime splits the batch over threads for the recurrent product when batch > 4 or
// (batch >= 2 and hidden <= 256), each part quantized alone; this kernel always quantizes the
// batch as one, which is what ONNX Runtime does with one intra-op thread.
// Constant weights are packed for the GEMM once at load, shared by content (shared_weights.h).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shared_weights.h"
#include "ops/math/qgemm.h"
#include "ops/quant/quant_simd.h"
#include "ops/rnn/lstm_cell.h"
#include "ops/rnn/register.h"

namespace onnxflow {
namespace rnn {
namespace {

constexpr char kOp[] = "DynamicQuantizeLSTM";
enum QuantInput { kWScale = 8, kWZeroPoint, kRScale, kRZeroPoint };

bool IsQuant8(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

Status Refuse(const std::string& what) { return InvalidArgument(std::string(kOp) + ": " + what); }

// W or R packed per direction as the GEMM's B ([K, 4 * hidden] each).
struct PackedLstmWeight {
  std::vector<QPackedB> dirs;
  // The weight's type and shape without data: what Compute checks in its place when the weight
  // was packed at load and is not read at run.
  Tensor described;
};

PackedLstmWeight PackLstmWeight(const Tensor& w, int threads) {
  PackedLstmWeight p;
  const int64_t k = w.dim(1), n = w.dim(2);
  const bool is_signed = w.dtype() == DataType::kInt8;
  const uint8_t* data = static_cast<const uint8_t*>(w.raw_data());
  for (int64_t d = 0; d < w.dim(0); ++d) p.dirs.push_back(QPackB(data + d * k * n, is_signed, n, false, k, n, threads));
  p.described = Tensor(w.dtype(), w.shape(), /*storage=*/nullptr, /*data=*/nullptr);
  return p;
}

std::shared_ptr<const PackedLstmWeight> PackConstantWeight(const Tensor* w, const char* kind) {
  if (w == nullptr || !IsQuant8(w->dtype()) || w->rank() != 3 || w->size() == 0) return nullptr;
  return SharedWeights::Get<PackedLstmWeight>(WeightKey(kind).Add(*w), [&] { return PackLstmWeight(*w, 1); });
}

// One direction's dequantization of W or R: its scales and zero points (one, or one per column).
struct WeightQuant {
  std::vector<float> scale;   // [dirs * scale_count]
  std::vector<int32_t> zero;  // [dirs * zero_count], in the weight's own type
  int64_t scale_count = 1, zero_count = 1;
  // Per column: each direction's scales padded to whole strips of the packed weight, the
  // epilogue's column array as it reads it (QEpilogue::padded_cols); empty with one scale.
  std::vector<std::vector<float>> padded;
};

// Checks a scale or zero point of [dirs] or [dirs, gate_cols] and returns its per-direction count.
Result<int64_t> PerDirectionCount(const Tensor& t, int64_t dirs, int64_t gate_cols, const char* name) {
  if (t.rank() == 1 && t.dim(0) == dirs) return int64_t{1};
  if (t.rank() == 2 && t.dim(0) == dirs && t.dim(1) == gate_cols) return gate_cols;
  return Refuse(std::string(name) + " has shape " + ShapeToString(t.shape()) + ", expected " + ShapeToString({dirs}) +
                " (per direction) or " + ShapeToString({dirs, gate_cols}) + " (per column)");
}

Result<WeightQuant> ReadWeightQuant(const KernelContext& ctx, int scale_index, const char* scale_name,
                                    const char* zero_name, DataType weight_type, int64_t dirs, int64_t gate_cols) {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(scale_index));
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* zero, ctx.RequireTensor(scale_index + 1));
  if (scale->dtype() != DataType::kFloat) {
    return Refuse(std::string(scale_name) + " must be float, got " + DataTypeName(scale->dtype()));
  }
  if (zero->dtype() != weight_type) {
    return Refuse(std::string(zero_name) + " must have its weight's type " + DataTypeName(weight_type) + ", got " +
                  DataTypeName(zero->dtype()));
  }
  WeightQuant q;
  ONNXFLOW_ASSIGN_OR_RETURN(q.scale_count, PerDirectionCount(*scale, dirs, gate_cols, scale_name));
  ONNXFLOW_ASSIGN_OR_RETURN(q.zero_count, PerDirectionCount(*zero, dirs, gate_cols, zero_name));
  q.scale.assign(scale->data<float>(), scale->data<float>() + scale->size());
  q.zero.resize(static_cast<size_t>(zero->size()));
  for (int64_t i = 0; i < zero->size(); ++i) {
    q.zero[i] = weight_type == DataType::kInt8 ? int32_t{zero->data<int8_t>()[i]} : int32_t{zero->data<uint8_t>()[i]};
  }
  return q;
}

// A float matrix quantized to uint8 for one GEMM call, packed as its A.
struct QuantizedA {
  float scale = 1.0f, zero_point = 0.0f;
  std::vector<uint8_t> bytes;  // rows x k
};

// Pads each direction's per-column scales to `padded_cols` (WeightQuant::padded).
void PadScales(int64_t dirs, int64_t padded_cols, WeightQuant* q) {
  if (q->scale_count == 1) return;
  for (int64_t d = 0; d < dirs; ++d) {
    std::vector<float> col(static_cast<size_t>(padded_cols), 0.0f);
    std::copy_n(q->scale.begin() + d * q->scale_count, q->scale_count, col.begin());
    q->padded.push_back(std::move(col));
  }
}

// C[rows, 4h] = dequantized (A - a_zero)(B_d - w_zero) for direction d, as ONNX Runtime's
// quantized GEMM: float(sum) * (a_scale * w_scale[column]). The epilogue forms that multiplier as
// scale_row * scale_col, the same product.
void DequantizingGemm(int threads, const QuantizedA& a, int64_t rows, int64_t k, const QPackedB& b,
                      const WeightQuant& q, int64_t d, float* c) {
  const int64_t n = b.n;
  if (rows == 0 || n == 0) return;
  if (k == 0) {  // no products: the GEMM would pack nothing
    std::fill(c, c + rows * n, 0.0f);
    return;
  }
  const bool per_column = q.scale_count > 1;
  const std::vector<float> row_scale(static_cast<size_t>(rows),
                                     per_column ? a.scale : a.scale * q.scale[d * q.scale_count]);
  const int32_t a_zero = static_cast<int32_t>(a.zero_point);
  const QZeroPoints zero{&a_zero, 1, q.zero.data() + d * q.zero_count, q.zero_count};
  QEpilogue ep;
  ep.kind = QOutput::kFloat;
  ep.scale_row = row_scale.data();
  ep.scale_col = per_column ? q.padded[d].data() : nullptr;
  ep.padded_cols = true;
  const QPackedA packed = QPackA(a.bytes.data(), false, k, rows, k, threads);
  QGemm(packed, b, zero, ep, c, n, threads);
}

// Quantizes `rows` rows of k floats (row i at row(i)) with the parameters set in `a`.
template <typename Row>
void QuantizeRows(int threads, int64_t rows, int64_t k, Row&& row, QuantizedA* a) {
  a->bytes.resize(static_cast<size_t>(rows * k));
  ParallelFor(threads, rows, MacCost(k), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) QuantizeFloatToUint8(row(i), k, a->scale, a->zero_point, a->bytes.data() + i * k);
  });
}

class DynamicQuantizeLstmKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<DynamicQuantizeLstmKernel>();
    ONNXFLOW_ASSIGN_OR_RETURN(k->attrs_, ParseRecurrentAttributes(info, {ActivationKind::kSigmoid, ActivationKind::kTanh,
                                                                         ActivationKind::kTanh},
                                                                  /*typed_inputs=*/0));
    k->input_forget_ = info.GetInt("input_forget", 0) != 0;
    const DataType xt = info.input_type(kX);
    if (xt != DataType::kUndefined && xt != DataType::kFloat) {
      return Unimplemented(std::string(kOp) + " computes in float only, X is " + DataTypeName(xt));
    }
    k->packed_w_ = PackConstantWeight(info.constant_input(kW), "DynamicQuantizeLSTM.W");
    k->packed_r_ = PackConstantWeight(info.constant_input(kR), "DynamicQuantizeLSTM.R");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  bool ReadsAtRun(int input) const override {
    return !((input == kW && packed_w_ != nullptr) || (input == kR && packed_r_ != nullptr));
  }

  Status Compute(KernelContext& ctx) const override;

 private:
  // The weight at input i: packed at load, or packed now into `local`.
  Result<const PackedLstmWeight*> Weight(const KernelContext& ctx, int i, const char* name,
                                         const std::shared_ptr<const PackedLstmWeight>& packed,
                                         PackedLstmWeight* local) const {
    if (packed != nullptr) return packed.get();
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(i));
    if (!IsQuant8(w->dtype())) return Refuse(std::string(name) + " must be int8 or uint8, got " + DataTypeName(w->dtype()));
    if (w->rank() != 3) return Refuse(std::string(name) + " must be 3D, got shape " + ShapeToString(w->shape()));
    *local = PackLstmWeight(*w, ctx.threads());
    return local;
  }

  RecurrentAttributes attrs_;
  bool input_forget_ = false;
  std::shared_ptr<const PackedLstmWeight> packed_w_, packed_r_;
};

Status DynamicQuantizeLstmKernel::Compute(KernelContext& ctx) const {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(kX));
  if (x->dtype() != DataType::kFloat) return Refuse(std::string("X must be float, got ") + DataTypeName(x->dtype()));
  if (x->rank() != 3) return Refuse("X must be 3D, got shape " + ShapeToString(x->shape()));
  PackedLstmWeight local_w, local_r;
  ONNXFLOW_ASSIGN_OR_RETURN(const PackedLstmWeight* w, Weight(ctx, kW, "W", packed_w_, &local_w));
  ONNXFLOW_ASSIGN_OR_RETURN(const PackedLstmWeight* r, Weight(ctx, kR, "R", packed_r_, &local_r));
  const Tensor& wt = w->described;
  const Tensor& rt = r->described;

  RecurrentData<float> in;
  SetRecurrentSizes(attrs_, *x, 4, attrs_.hidden_size > 0 ? attrs_.hidden_size : rt.dim(1), &in);
  const int64_t hs = in.hidden, gh = 4 * hs;
  if (wt.shape() != Shape{in.dirs, in.input, gh}) {
    return Refuse("W has shape " + ShapeToString(wt.shape()) + ", expected " + ShapeToString({in.dirs, in.input, gh}) +
                  " ([num_directions, input_size, 4 * hidden_size])");
  }
  if (rt.shape() != Shape{in.dirs, hs, gh}) {
    return Refuse("R has shape " + ShapeToString(rt.shape()) + ", expected " + ShapeToString({in.dirs, hs, gh}) +
                  " ([num_directions, hidden_size, 4 * hidden_size])");
  }
  ONNXFLOW_ASSIGN_OR_RETURN(WeightQuant wq,
                            ReadWeightQuant(ctx, kWScale, "W_scale", "W_zero_point", wt.dtype(), in.dirs, gh));
  ONNXFLOW_ASSIGN_OR_RETURN(WeightQuant rq,
                            ReadWeightQuant(ctx, kRScale, "R_scale", "R_zero_point", rt.dtype(), in.dirs, gh));
  // Every direction's W and R were packed with 4 * hidden columns: the same strips.
  const int64_t padded_cols = w->dirs.front().strips() * kQNr;
  PadScales(in.dirs, padded_cols, &wq);
  PadScales(in.dirs, padded_cols, &rq);
  ONNXFLOW_RETURN_IF_ERROR(LoadRecurrentInputs(ctx, *x, true, &in).WithContext(kOp));
  const int64_t batch = in.batch, is = in.input, steps = MaxLen(in);
  ONNXFLOW_RETURN_IF_ERROR(
      ctx.CheckScratch({std::min(steps, ChunkSteps(batch, gh)) * batch, is}, 1, "the quantized X"));

  // X's range over the rows the projections read: steps [0, steps) of every batch row, padding
  // included, the same rows in either direction (a reverse walk reads them in another order).
  QuantizedA qx;
  {
    float lo = 0.0f, hi = 0.0f;
    for (int64_t t = 0; t < steps; ++t) {
      for (int64_t b = 0; b < batch; ++b) {
        float l = 0.0f, h = 0.0f;
        FloatRangeWithZero(in.X(t, b), is, &l, &h);
        lo = std::min(lo, l);
        hi = std::max(hi, h);
      }
    }
    DynamicUint8Params(lo, hi, &qx.scale, &qx.zero_point);
  }
  LstmOutputs<float> out(in);
  ForEachDirection(ctx.threads(), in.dirs, [&](int64_t d, int threads) {
    QuantizedA qx_d = qx, qh;  // X's parameters; the bytes of this direction's rows
    const bool backward = attrs_.Backward(d);
    auto project = [&](int64_t s0, int64_t s1, float* xw) {
      // Row (s - s0) * batch + b is batch row b's step s; past its length, X's row at time s (what
      // ONNX Runtime's reversed copy of X holds there).
      auto row = [&](int64_t i) {
        const int64_t s = s0 + i / batch, b = i % batch;
        return in.X(s < in.lens[b] ? TimeIndex(in, backward, b, s) : s, b);
      };
      QuantizeRows(threads, (s1 - s0) * batch, is, row, &qx_d);
      DequantizingGemm(threads, qx_d, (s1 - s0) * batch, is, w->dirs[d], wq, d, xw);
    };
    auto recur = [&](int64_t s, const float* h, float* gr) {
      float lo = 0.0f, hi = 0.0f;
      for (int64_t b = 0; b < batch; ++b) {
        if (in.lens[b] < s) continue;  // finished before step s - 1: a zero row in ONNX Runtime
        float l = 0.0f, u = 0.0f;
        FloatRangeWithZero(h + b * hs, hs, &l, &u);
        lo = std::min(lo, l);
        hi = std::max(hi, u);
      }
      DynamicUint8Params(lo, hi, &qh.scale, &qh.zero_point);
      QuantizeRows(threads, batch, hs, [&](int64_t b) { return h + b * hs; }, &qh);
      DequantizingGemm(threads, qh, batch, hs, r->dirs[d], rq, d, gr);
    };
    RunLstmDirection(in, attrs_, input_forget_, d, project, recur, &out);
  });
  // ONNX Runtime's Y_h and Y_c of a batch row of length 0 are zeros, not the initial state.
  for (int64_t d = 0; d < in.dirs; ++d) {
    for (int64_t b = 0; b < batch; ++b) {
      if (in.lens[b] != 0) continue;
      std::fill_n(out.y_h.begin() + in.StateOffset(d, b), hs, 0.0f);
      std::fill_n(out.y_c.begin() + in.StateOffset(d, b), hs, 0.0f);
    }
  }
  return out.Write(ctx, DataType::kFloat, in);
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDynamicQuantizeLstm(KernelRegistry& registry) {
  return registry.Register(kMsDomain, kOp, 1, kOpenEnded, Make<DynamicQuantizeLstmKernel>());
}

}  // namespace rnn
}  // namespace onnxflow
