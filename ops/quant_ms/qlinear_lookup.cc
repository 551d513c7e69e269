// com.onnxflow ByteLookup(X, Table): Y[i] = Table[X[i] as an unsigned byte], X int8 or uint8,
// Table 256 values of Y's type (int8 or uint8), a constant. graph/qdq_lookup.cc writes it for a
// DequantizeLinear -> QuantizeLinear pair on 8-bit values (a requantization to other parameters,
// what ResNet's Add -> Relu -> Q leaves): the table holds the pair's own float arithmetic for each
// of the 256 inputs, so the result is the pair's, in one pass over bytes instead of two over floats.
//
// Per channel: Table [C, 256] and attribute `axis` (default 1) of X, of C channels: an element of
// channel c reads row c (DenseNet's DQ -> BatchNormalization -> Relu -> Q, one row per channel).
// graph/quant_layout.cc sets axis 3 when X is channels-last. An optional third input, Affine
// [8, C] (rows xz, xs, s, b, lo, hi, ys, yz: the chain the table was made of when it is
// DQ -> x * s + b -> clamp -> Q, channel_affine.h), lets a channels-last X be computed instead
// of read, where those operations give every byte of a constant table (checked at load).
#include <algorithm>
#include <vector>

#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/quant_ms/channel_affine.h"
#include "ops/quant_ms/qlinear_simd.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace quant_ms {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

// A channel's run of elements shorter than this is read element by element, its row chosen per
// element (channels-last: a run of 1); a longer one goes through ApplyByteTable with its row.
constexpr int64_t kShortRun = 16;

// Channels-last, the pixels go through a block of channels at a time, so that the block's rows
// stay in L1 (64 rows: 16 KB of 48): all C rows at once (DenseNet's 256 channels, 64 KB) missed
// L1 on most elements, 1.9 ns an element at 56x56x256 (1.5 ms, slower than the float ops it
// replaced); in blocks of 64, 0.66 ns (0.53 ms). Computed (Affine) it is 0.28 ns (0.23 ms).
constexpr int64_t kChannelBlock = 64;

// The rows of ChannelAffineLastAxis for Affine [8, C] and an output of type `y`; empty when the
// shape is not that.
std::vector<float> AffineParams(const Tensor& affine, DataType y) {
  if (affine.dtype() != DataType::kFloat || affine.rank() != 2 || affine.dim(0) != 8) return {};
  const int64_t channels = affine.dim(1);
  const float* a = affine.data<float>();
  std::vector<float> p(kChannelAffineRows * channels);
  std::copy(a, a + 7 * channels, p.begin());  // xz, xs, s, b, lo, hi, ys
  const float lo = y == DataType::kInt8 ? -128.0f : 0.0f, hi = y == DataType::kInt8 ? 127.0f : 255.0f;
  for (int64_t c = 0; c < channels; ++c) {
    const float yz = a[7 * channels + c];
    p[kBelow * channels + c] = lo - yz;
    p[kAbove * channels + c] = hi - yz;
    p[kYz * channels + c] = yz;
  }
  return p;
}

// Whether ChannelAffineLastAxis with `params` gives table [C, 256] byte for byte: the 256 codes
// as 256 pixels of C channels each, through the function the kernel would call.
bool GivesTheTable(const std::vector<float>& params, const Tensor& table, DataType x) {
  const int64_t channels = table.dim(0);
  std::vector<uint8_t> codes(256 * channels), out(256 * channels);
  for (int64_t i = 0; i < 256 * channels; ++i) codes[i] = static_cast<uint8_t>(i / channels);
  ChannelAffineLastAxis(codes.data(), x == DataType::kInt8, params.data(), channels, 256,
                        table.dtype() == DataType::kInt8, out.data());
  const uint8_t* t = static_cast<const uint8_t*>(table.raw_data());
  for (int64_t i = 0; i < 256 * channels; ++i) {
    if (out[i] != t[(i % channels) * 256 + i / channels]) return false;
  }
  return true;
}

class ByteLookupKernel : public OpKernel {
 public:
  explicit ByteLookupKernel(const KernelInfo& info) : axis_(info.GetInt("axis", 1)) {
    const Tensor* table = info.constant_input(1);
    const Tensor* affine = info.constant_input(2);
    if (table == nullptr || affine == nullptr || !Is8Bit(table->dtype()) || table->rank() != 2 ||
        table->dim(1) != 256 || affine->rank() != 2 || affine->dim(1) != table->dim(0)) {
      return;
    }
    affine_ = AffineParams(*affine, table->dtype());
    if (affine_.empty()) return;
    // X's type where the load knows it, else both (a com.microsoft producer's output is not inferred).
    const DataType x = info.input_type(0);
    for (DataType t : {DataType::kUint8, DataType::kInt8}) {
      if ((x == t || !Is8Bit(x)) && GivesTheTable(affine_, *table, t)) computes_[t == DataType::kInt8] = true;
    }
  }
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* table, ctx.RequireTensor(1));
    if (!Is8Bit(x->dtype())) return InvalidArgument("ByteLookup: X must be int8 or uint8");
    const bool per_channel = table->rank() == 2;
    if (!Is8Bit(table->dtype()) || (per_channel ? table->dim(1) != 256 : table->size() != 256)) {
      return InvalidArgument("ByteLookup: Table must hold 256 int8 or uint8 values (or [C, 256]), got " +
                             ShapeToString(table->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, table->dtype(), x->shape()));
    const uint8_t* t = static_cast<const uint8_t*>(table->raw_data());
    const uint8_t* px = static_cast<const uint8_t*>(x->raw_data());
    uint8_t* py = static_cast<uint8_t*>(y->mutable_raw_data());
    if (!per_channel) {
      ParallelFor(ctx, x->size(), 1, [&](int64_t b, int64_t e) { ApplyByteTable(t, px + b, py + b, e - b); });
      return Status::Ok();
    }
    const int64_t axis = axis_ < 0 ? axis_ + x->rank() : axis_;
    if (axis < 0 || axis >= x->rank() || x->dim(axis) != table->dim(0)) {
      return InvalidArgument("ByteLookup: a per-channel Table " + ShapeToString(table->shape()) +
                             " needs X's axis " + std::to_string(axis_) + " of as many channels, X is " +
                             ShapeToString(x->shape()));
    }
    const int64_t channels = table->dim(0);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x->dim(d);
    for (int64_t d = axis + 1; d < x->rank(); ++d) inner *= x->dim(d);
    if (inner >= kShortRun) {
      ParallelFor(ctx, outer * channels, inner, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) ApplyByteTable(t + (r % channels) * 256, px + r * inner, py + r * inner, inner);
      });
      return Status::Ok();
    }
    if (inner == 1 && computes_[x->dtype() == DataType::kInt8]) {  // channels-last, computed
      ParallelFor(ctx, outer, channels, [&](int64_t b, int64_t e) {
        ChannelAffineLastAxis(px + b * channels, x->dtype() == DataType::kInt8, affine_.data(), channels, e - b,
                              table->dtype() == DataType::kInt8, py + b * channels);
      });
      return Status::Ok();
    }
    if (inner == 1) {  // channels-last
      ParallelFor(ctx, outer, channels, [&](int64_t b, int64_t e) {
        for (int64_t c0 = 0; c0 < channels; c0 += kChannelBlock) {
          const int64_t n = std::min(kChannelBlock, channels - c0);
          const uint8_t* rows = t + c0 * 256;
          for (int64_t o = b; o < e; ++o) {
            const uint8_t* xo = px + o * channels + c0;
            uint8_t* yo = py + o * channels + c0;
            for (int64_t c = 0; c < n; ++c) yo[c] = rows[c * 256 + xo[c]];
          }
        }
      });
      return Status::Ok();
    }
    ParallelFor(ctx, outer, channels * inner, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const uint8_t* xo = px + o * channels * inner;
        uint8_t* yo = py + o * channels * inner;
        for (int64_t c = 0; c < channels; ++c) {
          const uint8_t* row = t + c * 256;
          for (int64_t k = 0; k < inner; ++k) yo[c * inner + k] = row[xo[c * inner + k]];
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t axis_;
  std::vector<float> affine_;         // ChannelAffineLastAxis's rows
  bool computes_[2] = {false, false};  // whether they give the table for uint8 / int8 X
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterByteLookup(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kByteLookup, internal_ops::kVersion, internal_ops::kVersion,
                           Make<ByteLookupKernel>());
}

}  // namespace quant_ms
}  // namespace onnxflow
