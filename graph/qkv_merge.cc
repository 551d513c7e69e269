#include "graph/qkv_merge.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/fusion.h"
#include "ops/contrib/fused_attention.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"

namespace onnxflow::graph {
namespace {

// One of the three: Reshape(P, shape) into heads, P the product of x and the weights.
struct Projection {
  Id reshape = kNone, product = kNone;
  std::string x, p;
  const Tensor* w = nullptr;     // [K, heads * head_size]: float, or a half model's 16-bit weights
  const Tensor* bias = nullptr;  // [heads * head_size]; null for a MatMul
  int64_t heads = 0, head_size = 0;
  int64_t batch = 0, seq = 0;    // the reshape's leading entries (0 copies, -1 infers)
  std::vector<Id> shapes_of_p;   // Shape(P) nodes the reshape's shape operand reads
  // ONNX Runtime's saved form of a 3-D projection with a bias: P = Reshape(Gemm(x2, W, bias)) with
  // x2 = Reshape(x, [-1 or M, K]); `x` is then x2, the Gemm's rows, `unflatten` the Reshape of
  // them (kNone when the heads Reshape reads the Gemm itself).
  Id unflatten = kNone;
  std::string x3;  // x before any flattening: what the three must share
};

// P = [Reshape of] Gemm(x2, W, C), read by the heads Reshape alone, the Gemm plain (alpha and
// beta 1, neither transposed) with a 1-D C, x2 = Reshape(x, [-1 or M, K]): fills `pr`'s product, x
// (x2), x3 (x) and unflatten. Reshape(Reshape(G, s2), s3) is Reshape(G, s3) for an s3 without
// zeros, so the heads read the Gemm's rows as they would read MatMul(x, W) + C's.
bool SavedGemmProjection(const Graph& g, const std::string& p, const std::string& heads_shape, Projection* pr) {
  Id unflatten = g.nodes.Producer(p);
  const std::vector<int64_t> s3 = Int64Constant(g, heads_shape);
  if (unflatten == kNone || g.nodes.ReadCount(p) != 1 || s3.empty() ||
      std::find(s3.begin(), s3.end(), 0) != s3.end()) {
    return false;
  }
  Id gemm = unflatten;  // or the heads Reshape reads the Gemm itself (ONNX Runtime joined the two)
  if (!IsOp(g.nodes[gemm], "Gemm")) {
    const Node& u = g.nodes[unflatten];
    if (!IsOp(u, "Reshape") || u.proto->input_size() != 2 || IntAttr(*u.proto, "allowzero", 0) != 0 ||
        Int64Constant(g, u.proto->input(1)).empty()) {
      return false;
    }
    gemm = SoleReaderProducer(g, u.proto->input(0));
  } else {
    unflatten = kNone;
  }
  if (gemm == kNone || !IsOp(g.nodes[gemm], "Gemm") || g.nodes[gemm].opset < 7) return false;
  const auto& gp = *g.nodes[gemm].proto;
  const auto* alpha = Attr(gp, "alpha");
  const auto* beta = Attr(gp, "beta");
  if (gp.input_size() != 3 || gp.output_size() != 1 || IntAttr(gp, "transA", 0) != 0 || IntAttr(gp, "transB", 0) != 0 ||
      (alpha != nullptr && alpha->f() != 1.0f) || (beta != nullptr && beta->f() != 1.0f)) {
    return false;
  }
  const Id flatten = g.nodes.Producer(gp.input(0));
  const Tensor* w = WeightConstant(g, gp, 1);
  const Tensor* bias = WeightConstant(g, gp, 2);
  if (flatten == kNone || w == nullptr || w->rank() != 2 || bias == nullptr || bias->rank() != 1 ||
      bias->size() != w->dim(1)) {
    return false;
  }
  const Node& f = g.nodes[flatten];
  const std::vector<int64_t> rows = Int64Constant(g, f.proto->input(1));  // [-1 or M, K]
  if (!IsOp(f, "Reshape") || f.proto->input_size() != 2 || IntAttr(*f.proto, "allowzero", 0) != 0 ||
      rows.size() != 2 || rows[1] != w->dim(0) || (rows[0] != -1 && rows[0] < 1)) {
    return false;
  }
  pr->product = gemm;
  pr->unflatten = unflatten;
  pr->x = gp.input(0);
  pr->x3 = f.proto->input(0);
  pr->w = w;
  pr->bias = bias;
  return true;
}

// The reshape's target is [d0, d1, N, D], its shape operand a constant or made of dimensions
// of x or P read at run time (ShapeWithLeadingDims). d0 and d1 become the packed attention's (B, S)
// entries, which it applies as Reshape would.
bool HeadsShape(const Graph& g, const std::string& shape, Projection* pr) {
  std::vector<Id> shapes;
  const std::vector<int64_t> entries = ShapeWithLeadingDims(g, shape, {pr->x, pr->p}, &shapes);
  for (const Id s : shapes) {
    if (g.nodes[s].proto->input(0) == pr->p) pr->shapes_of_p.push_back(s);
  }
  // (Head counts and sizes past the kernel's 2^16 stay unmerged: FusedAttentionSpec refuses them.)
  constexpr int64_t kMax = int64_t{1} << 16;
  if (entries.size() != 4 || entries[0] < -1 || entries[1] < -1 || (entries[0] == -1 && entries[1] == -1) ||
      entries[2] < 1 || entries[3] < 1 || entries[2] > kMax || entries[3] > kMax) {
    return false;
  }
  pr->batch = entries[0];
  pr->seq = entries[1];
  pr->heads = entries[2];
  pr->head_size = entries[3];
  return pr->w->dim(1) == pr->heads * pr->head_size;
}

bool ProjectionOf(const Graph& g, const std::string& value, Projection* pr) {
  pr->reshape = SoleReaderProducer(g, value);
  if (pr->reshape == kNone) return false;
  const Node& reshape = g.nodes[pr->reshape];
  const auto& rs = *reshape.proto;
  if (!IsOp(reshape, "Reshape") || reshape.opset < 5 || rs.input_size() != 2 || rs.output_size() != 1) return false;
  if (const auto* allowzero = Attr(rs, "allowzero"); allowzero != nullptr && allowzero->i() != 0) return false;
  pr->p = rs.input(0);
  pr->shapes_of_p.clear();
  pr->unflatten = kNone;
  if (SavedGemmProjection(g, pr->p, rs.input(1), pr)) return HeadsShape(g, rs.input(1), pr);
  // P read by the reshape and by Shapes of it only (not a graph output: outputs count as reads).
  pr->product = g.nodes.Producer(pr->p);
  if (pr->product == kNone || g.nodes.ReadCount(pr->p) != static_cast<int>(g.nodes.Readers(pr->p).size())) {
    return false;
  }
  for (const Id reader : g.nodes.Readers(pr->p)) {
    if (reader != pr->reshape && !IsOp(g.nodes[reader], "Shape")) return false;
  }
  const Node& product = g.nodes[pr->product];
  const auto& pp = *product.proto;
  const bool matmul = IsOp(product, "MatMul") && pp.input_size() == 2;
  const bool fused = product.domain == kFusedDomain && product.op_type() == internal_ops::kFusedMatMul &&
                     pp.input_size() == 3 && !HasEpilogue(product);
  if ((!matmul && !fused) || pp.output_size() != 1) return false;
  pr->x = pr->x3 = pp.input(0);
  pr->w = WeightConstant(g, pp, 1);
  if (pr->w == nullptr || pr->w->rank() != 2) return false;
  if (fused) {
    pr->bias = WeightConstant(g, pp, 2);
    if (pr->bias == nullptr || pr->bias->rank() != 1 || pr->bias->size() != pr->w->dim(1)) return false;
  }
  pr->shapes_of_p.clear();
  if (!HeadsShape(g, rs.input(1), pr)) return false;
  // Every Shape reading P must be one the reshape's shape reads (no other use of P's shape).
  for (const Id reader : g.nodes.Readers(pr->p)) {
    if (reader == pr->reshape) continue;
    bool known = false;
    for (const Id s : pr->shapes_of_p) known |= s == reader;
    if (!known) return false;
  }
  return true;
}

// Columns side by side: [K, Hq], [K, Hk], [K, Hv] -> [K, Hq + Hk + Hv] (or rank-1 biases), in
// the parts' own element type (a half model's weights stay 16-bit for the kernel to widen).
Tensor Concatenate(const std::vector<const Tensor*>& parts) {
  const bool matrix = parts[0]->rank() == 2;
  const int64_t rows = matrix ? parts[0]->dim(0) : 1;
  int64_t cols = 0;
  for (const Tensor* t : parts) cols += t->dim(t->rank() - 1);
  Tensor out(parts[0]->dtype(), matrix ? Shape{rows, cols} : Shape{cols});
  const size_t element = ElementSize(out.dtype());
  auto* o = static_cast<unsigned char*>(out.mutable_raw_data());
  for (int64_t r = 0; r < rows; ++r) {
    for (const Tensor* t : parts) {
      const size_t bytes = static_cast<size_t>(t->dim(t->rank() - 1)) * element;
      std::memcpy(o, static_cast<const unsigned char*>(t->raw_data()) + r * bytes, bytes);
      o += bytes;
    }
  }
  return out;
}

}  // namespace

std::optional<Patch> MergeQkvProjections(Rewriter& r, Id id) {
  const Graph& g = r.graph();
  const Node& attention = r[id];
  const auto& at = *attention.proto;
  if (attention.domain != kFusedDomain || attention.op_type() != internal_ops::kFusedAttention) return std::nullopt;
  if (at.input_size() < 3 || at.output_size() != 1) return std::nullopt;
  Result<FusedAttentionSpec> spec = FusedAttentionSpec::Parse(KernelInfo(at, attention.opset, {}, {}, {}));
  if (!spec.ok() || spec->packed_heads != 0 || spec->q_bnsd || spec->kv_bnsd || spec->kv_repeat != 1) return std::nullopt;
  if (at.input(0) == at.input(1) || at.input(0) == at.input(2) || at.input(1) == at.input(2)) return std::nullopt;
  Projection q, k, v;
  if (!ProjectionOf(g, at.input(0), &q) || !ProjectionOf(g, at.input(1), &k) || !ProjectionOf(g, at.input(2), &v)) {
    return std::nullopt;
  }
  // One input, one K; q and k of one head size, all of one head count. Biases on some of the three
  // only (Whisper's k projection has none) are merged with zeros for the others: the packed
  // product's epilogue adds them for free, where unmerged the three products ran apart.
  const Projection* biased = q.bias != nullptr ? &q : k.bias != nullptr ? &k : v.bias != nullptr ? &v : nullptr;
  // The sequence entry may be 0 in one and -1 in another (transformers' _shape(x, tgt_len, bsz) for
  // q, _shape(x, -1, bsz) for k and v): with the batch entry the same, both Reshapes of one x's
  // products take the same rows.
  // So may a number and -1 with one number of batch rows (a static export's q [1, S, N, D], k and v
  // [1, -1, N, D]): of one x's rows, -1 infers S wherever the number fits; the number is kept.
  auto same_seq = [&](int64_t a, int64_t b) {
    return a == b || (a == 0 && b == -1) || (a == -1 && b == 0) ||
           (q.batch > 0 && ((a == -1 && b > 0) || (a > 0 && b == -1)));
  };
  int64_t seq = q.seq;
  for (const Projection* p : {&k, &v}) {
    if (p->x3 != q.x3 || p->w->dim(0) != q.w->dim(0) || p->heads != q.heads || p->w->dtype() != q.w->dtype() ||
        p->batch != q.batch || !same_seq(p->seq, q.seq)) {
      return std::nullopt;
    }
    if (seq == -1 && p->seq > 0) seq = p->seq;
  }
  // ONNX Runtime's saved Gemms read x's rows, x2 = Reshape(x, [-1, K]): the merged product reads
  // them too. A plain MatMul(x, W) of the three ran only for x of K columns, whose rows x2 are, so
  // the rows are the same; the Shapes of P would not be, and stop the merge.
  std::string input = q.x;
  for (const Projection* p : {&q, &k, &v}) {
    if (p->x != p->x3) input = p->x;
  }
  for (const Projection* p : {&q, &k, &v}) {
    if (input != q.x3 && !p->shapes_of_p.empty()) return std::nullopt;
  }
  for (const Projection* p : {&q, &k, &v}) {
    if (biased != nullptr && p->bias != nullptr && p->bias->dtype() != biased->bias->dtype()) return std::nullopt;
  }
  if (k.head_size != q.head_size) return std::nullopt;
  // A Shape of P is rewritten as Concat(Slice(Shape(x), 0, -1), [width]) in the Shape's opset:
  // Slice takes its bounds as inputs from opset 10 (Concat's axis is required from 4).
  for (const Projection* p : {&q, &k, &v}) {
    for (const Id s : p->shapes_of_p) {
      if (r[s].opset < 10) return std::nullopt;
    }
  }

  const std::string packed = r.FreshName(at.output(0) + "_qkv");
  const std::string weights = r.FreshName(packed + "_weights");
  Patch patch{{q.product, k.product, v.product, q.reshape, k.reshape, v.reshape}, {}, {}};
  for (const Projection* p : {&q, &k, &v}) {
    if (p->unflatten != kNone) patch.replaced.push_back(p->unflatten);
  }
  patch.constants.push_back({weights, Concatenate({q.w, k.w, v.w})});
  const Id base = biased != nullptr ? biased->product : q.product;  // a FusedMatMul when any has a bias
  auto product = std::make_shared<onnx::NodeProto>(*r[base].proto);
  product->set_input(0, input);
  product->set_input(1, weights);
  if (biased != nullptr) {
    std::vector<Tensor> zeros;
    zeros.reserve(3);
    std::vector<const Tensor*> parts;
    for (const Projection* p : {&q, &k, &v}) {
      if (p->bias == nullptr) {
        zeros.emplace_back(biased->bias->dtype(), Shape{p->w->dim(1)});
        std::memset(zeros.back().mutable_raw_data(), 0, zeros.back().size() * ElementSize(zeros.back().dtype()));
      }
      parts.push_back(p->bias != nullptr ? p->bias : &zeros.back());
    }
    const std::string bias = r.FreshName(packed + "_bias");
    patch.constants.push_back({bias, Concatenate(parts)});
    product->set_input(2, bias);
  }
  product->set_output(0, packed);
  patch.AddAt(WithProto(r[base], std::move(product)), q.product);
  patch.types.push_back({packed, DataType::kFloat});

  // A Shape of P now reads x: Concat(Slice(Shape(x), 0, -1), [width of P]), the same dimensions.
  for (const Projection* p : {&q, &k, &v}) {
    for (const Id s : p->shapes_of_p) {
      bool seen = false;
      for (const Id done : patch.replaced) seen |= done == s;
      if (seen) continue;
      patch.replaced.push_back(s);
      const Node& old = r[s];
      const std::string base = old.proto->output(0);
      const std::string of_x = r.FreshName(base + "_x"), leading = r.FreshName(base + "_leading");
      const std::string begin = r.FreshName(base + "_begin"), end = r.FreshName(base + "_end");
      const std::string width = r.FreshName(base + "_width");
      patch.constants.push_back({begin, Tensor::FromVector<int64_t>({1}, {0})});
      patch.constants.push_back({end, Tensor::FromVector<int64_t>({1}, {-1})});
      patch.constants.push_back({width, Tensor::FromVector<int64_t>({1}, {p->w->dim(1)})});
      auto shape = std::make_shared<onnx::NodeProto>(*old.proto);
      shape->set_input(0, q.x);
      shape->set_output(0, of_x);
      auto slice = std::make_shared<onnx::NodeProto>();
      slice->set_op_type("Slice");
      slice->set_name(old.proto->name() + "_leading");
      for (const std::string* in : {&of_x, &begin, &end}) slice->add_input(*in);
      slice->add_output(leading);
      auto concat = std::make_shared<onnx::NodeProto>();
      concat->set_op_type("Concat");
      concat->set_name(old.proto->name() + "_of_p");
      concat->add_input(leading);
      concat->add_input(width);
      concat->add_output(base);
      SetAttribute(*concat, "axis", int64_t{0});
      patch.AddAt(WithProto(old, std::move(shape)), s);
      patch.AddAt(WithProto(old, std::move(slice)), s);
      patch.AddAt(WithProto(old, std::move(concat)), s);
      for (const std::string* t : {&of_x, &leading, &base}) patch.types.push_back({*t, DataType::kInt64});
    }
  }

  auto fused = std::make_shared<onnx::NodeProto>(at);
  fused->set_input(0, packed);
  fused->set_input(1, "");
  fused->set_input(2, "");
  spec->packed_heads = q.heads;
  spec->packed_head_size = q.head_size;
  spec->packed_v_head_size = v.head_size;
  spec->packed_batch = q.batch;
  spec->packed_seq = seq;
  spec->WriteTo(*fused);
  patch.replaced.push_back(id);
  patch.AddAt(WithProto(attention, std::move(fused)), id);
  return patch;
}

}  // namespace onnxflow::graph
