#include "graph/heads_shapes.h"

#include <utility>

namespace onnxflow::graph {
namespace {

// Head counts, batch entries and factors past this are not a transformer's (and keep the products
// of two of them far from overflowing).
constexpr int64_t kMaxHeadsEntry = int64_t{1} << 16;

bool DimOf(const Graph& g, const std::string& name, Dim* d, int depth = 0) {
  if (const std::vector<int64_t> c = Int64Constant(g, name); c.size() == 1) {
    *d = {"", 0, c[0]};
    return true;
  }
  const Id p = g.nodes.Producer(name);
  if (p == kNone || depth > 4) return false;
  const Node& n = g.nodes[p];
  const auto& pr = *n.proto;
  auto shape_of = [&](const std::string& v) -> const std::string* {
    const Id s = g.nodes.Producer(v);
    if (s == kNone || !IsOp(g.nodes[s], "Shape") || g.nodes[s].proto->input_size() != 1 ||
        Attr(*g.nodes[s].proto, "start") != nullptr || Attr(*g.nodes[s].proto, "end") != nullptr) {
      return nullptr;
    }
    return &g.nodes[s].proto->input(0);
  };
  if ((IsOp(n, "Unsqueeze") || IsOp(n, "Squeeze")) && pr.input_size() >= 1) return DimOf(g, pr.input(0), d, depth + 1);
  if (IsOp(n, "Gather") && pr.input_size() == 2 && (IntAttr(pr, "axis", 0) == 0 || IntAttr(pr, "axis", 0) == -1)) {
    const std::string* of = shape_of(pr.input(0));
    const std::vector<int64_t> i = Int64Constant(g, pr.input(1));
    if (of == nullptr || i.size() != 1) return false;
    *d = {*of, i[0], 1};
    return true;
  }
  if (IsOp(n, "Slice") && pr.input_size() >= 3 && pr.input_size() <= 4) {  // no steps
    const std::string* of = shape_of(pr.input(0));
    const std::vector<int64_t> b = Int64Constant(g, pr.input(1)), e = Int64Constant(g, pr.input(2));
    if (of == nullptr || b.size() != 1 || e.size() != 1 || b[0] < 0 || e[0] != b[0] + 1) return false;
    *d = {*of, b[0], 1};
    return true;
  }
  if (IsOp(n, "Mul") && n.opset >= 7 && pr.input_size() == 2) {
    Dim a, b;
    if (!DimOf(g, pr.input(0), &a, depth + 1) || !DimOf(g, pr.input(1), &b, depth + 1)) return false;
    if (a.of.empty()) std::swap(a, b);  // b the number
    if (a.of.empty() || !b.of.empty() || b.value < 1 || b.value > kMaxHeadsEntry || a.value > kMaxHeadsEntry) {
      return false;
    }
    *d = {a.of, a.axis, a.value * b.value};
    return true;
  }
  return false;
}

}  // namespace

bool ShapeOperandEntries(const Graph& g, const std::string& shape, std::vector<Dim>* entries) {
  entries->clear();
  std::vector<std::string> pieces = {shape};
  if (const Id c = g.nodes.Producer(shape); Int64Constant(g, shape).empty() && c != kNone &&
                                            IsOp(g.nodes[c], "Concat") && IntAttr(*g.nodes[c].proto, "axis", -1) == 0) {
    pieces.assign(g.nodes[c].proto->input().begin(), g.nodes[c].proto->input().end());
  }
  for (const std::string& piece : pieces) {
    const std::vector<int64_t> numbers = Int64Constant(g, piece);
    Dim d;
    if (!numbers.empty()) {
      for (const int64_t v : numbers) entries->push_back({"", 0, v});
    } else if (DimOf(g, piece, &d)) {
      entries->push_back(d);
    } else {
      return false;
    }
  }
  return true;
}

bool ReshapeTo(const Graph& g, const Node& n, std::vector<Dim>* entries) {
  if (!IsOp(n, "Reshape") || n.opset < 5 || n.proto->input_size() != 2 || n.proto->output_size() != 1 ||
      IntAttr(*n.proto, "allowzero", 0) != 0) {
    return false;
  }
  return ShapeOperandEntries(g, n.proto->input(1), entries);
}

namespace {

// The producer of `value` when one node of the pattern reads it and every other reader is a Shape
// (appended to `shape_readers`; none allowed without it); kNone otherwise (a graph output too).
Id ReadByPatternAndShapes(const Graph& g, const std::string& value, std::vector<Id>* shape_readers) {
  if (shape_readers == nullptr) return SoleReaderProducer(g, value);
  const std::vector<Id> readers = g.nodes.Readers(value);
  if (g.nodes.ReadCount(value) != static_cast<int>(readers.size())) return kNone;
  std::vector<Id> shapes;
  for (const Id r : readers) {
    if (IsOp(g.nodes[r], "Shape")) shapes.push_back(r);
  }
  if (readers.size() != shapes.size() + 1) return kNone;
  shape_readers->insert(shape_readers->end(), shapes.begin(), shapes.end());
  return g.nodes.Producer(value);
}

// The value whose dimension 0 is `value`'s: through Mul or Div by a one-element constant, Add of a
// constant of rank <= 1 (a bias), and MatMul(x, W) with a 2-D constant W (its leading dimensions
// are x's for x of rank >= 2; of rank 1 the product is 1-D, which the callers' 4-D Reshapes into
// N * D > 1 values per row refuse at run time, fused or not).
std::string LeadingDimOf(const Graph& g, std::string value) {
  for (int depth = 0; depth < 4; ++depth) {
    const Id p = g.nodes.Producer(value);
    if (p == kNone) break;
    const Node& n = g.nodes[p];
    const auto& pr = *n.proto;
    if (n.opset < 7 || pr.input_size() != 2 || pr.output_size() != 1) break;
    auto constant_of_rank = [&](int i, int64_t rank, bool one) {
      auto c = g.constants.find(pr.input(i));
      return c != g.constants.end() && c->second.rank() <= rank && (!one || c->second.size() == 1);
    };
    if ((IsOp(n, "Mul") || IsOp(n, "Add")) && constant_of_rank(0, 1, IsOp(n, "Mul")) &&
        !g.constants.count(pr.input(1))) {
      value = pr.input(1);
    } else if ((IsOp(n, "Mul") || IsOp(n, "Div") || IsOp(n, "Add")) && constant_of_rank(1, 1, !IsOp(n, "Add")) &&
               !g.constants.count(pr.input(0))) {
      value = pr.input(0);
    } else if (IsOp(n, "MatMul") && constant_of_rank(1, 2, false) && g.constants.at(pr.input(1)).rank() == 2) {
      value = pr.input(0);
    } else {
      break;
    }
  }
  return value;
}

// A dimension 0 read off a shape, as the dimension 0 it is (LeadingDimOf): the entries of one
// batch read off a projection and off its input compare equal.
Dim Canonical(const Graph& g, Dim d) {
  if (!d.of.empty() && d.axis == 0) d.of = LeadingDimOf(g, d.of);
  return d;
}

}  // namespace

bool FlatHeadsOf(const Graph& g, std::string* value, FlatHeads* flat, std::vector<Id>* nodes,
                 std::vector<Id>* shape_readers) {
  std::vector<Id> shapes;
  const Id flatten = ReadByPatternAndShapes(g, *value, shape_readers != nullptr ? &shapes : nullptr);
  std::vector<Dim> f, e;
  if (flatten == kNone || !ReshapeTo(g, g.nodes[flatten], &f) || f.size() != 3) return false;
  const std::string& h = g.nodes[flatten].proto->input(0);
  const Id t = g.nodes.Producer(h);
  if (t == kNone || !IsTranspose(g.nodes[t], {0, 2, 1, 3})) return false;
  const Id split = g.nodes.Producer(g.nodes[t].proto->input(0));
  if (split == kNone || !ReshapeTo(g, g.nodes[split], &e) || e.size() != 4 || !(e[0].Size() || e[0].Is(0)) ||
      e[0].value > kMaxHeadsEntry || !e[2].of.empty() || e[2].value < 1 || e[2].value > kMaxHeadsEntry ||
      !e[3].of.empty() || e[3].value < 1) {
    return false;
  }
  if (e[2].value * e[3].value < 2) return false;  // (LeadingDimOf's condition)
  Dim rows = Canonical(g, {e[0].of, e[0].axis, e[0].value * e[2].value});
  // A batch entry 0 copies the projection's dimension 0 (ONNX Runtime saves q's [bsz, tgt_len, N, D]
  // so, [0, -1, N, D]): the dimension 0 of the input it projects.
  if (e[0].Is(0)) rows = {LeadingDimOf(g, g.nodes[split].proto->input(0)), 0, e[2].value};
  const Dim f0 = Canonical(g, f[0]);
  if (!(f0 == rows) || !f[2].Is(e[3].value) || !f[1].Free()) return false;
  // The sequence: the Reshape's entry, or else the flattened value's own dimension 1 (its src_len).
  const Dim seq = e[1].Size() ? e[1] : Dim{*value, 1, 1};
  *flat = {rows, seq, e[2].value, e[3].value};
  *value = h;
  nodes->push_back(flatten);
  if (shape_readers != nullptr) shape_readers->insert(shape_readers->end(), shapes.begin(), shapes.end());
  return true;
}

bool FlatViewOf(const Graph& g, const std::string& value, FlatHeads* flat, FlatView* view, std::vector<Id>* nodes,
                std::vector<Id>* shape_readers) {
  std::vector<Id> shapes;
  const Id flatten = ReadByPatternAndShapes(g, value, &shapes);
  std::vector<Dim> f;
  if (flatten == kNone || !ReshapeTo(g, g.nodes[flatten], &f) || f.size() != 3 || !f[1].Is(-1) ||
      !f[2].of.empty() || f[2].value < 1 || f[2].value > kMaxHeadsEntry) {
    return false;
  }
  FlatHeads found = *flat;
  if (found.heads == 0) {  // N from bsz * N (a number of rows B * N does not say N)
    if (f[0].of.empty() || f[0].value < 1 || f[0].value > kMaxHeadsEntry) return false;
    found = {Canonical(g, f[0]), Dim{}, f[0].value, f[2].value};
  }
  found.seq = {value, 1, 1};  // the flattened value's own dimension 1 (its src_len)
  if (!(Canonical(g, f[0]) == found.rows) || !f[2].Is(found.head_size) || found.heads * found.head_size < 2) {
    return false;
  }
  // B = rows / N: the run-time dimension itself (rows = dim * N), or a number.
  Dim batch;
  if (!found.rows.of.empty() && found.rows.value == found.heads) {
    batch = {found.rows.of, found.rows.axis, 1};
  } else if (found.rows.of.empty() && found.rows.value > 0 && found.rows.value % found.heads == 0) {
    batch = {"", 0, found.rows.value / found.heads};
  } else {
    return false;
  }
  *flat = found;
  *view = {g.nodes[flatten].proto->input(0), batch};
  nodes->push_back(flatten);
  shape_readers->insert(shape_readers->end(), shapes.begin(), shapes.end());
  return true;
}

bool UnflattensHeads(const Graph& g, const Node& n, const FlatHeads& flat, std::vector<Dim>* tail) {
  std::vector<Dim> e;
  if (!ReshapeTo(g, n, &e) || e.size() != 4 || !e[1].Is(flat.heads) || !e[0].Size() || e[0].value > kMaxHeadsEntry ||
      !(Canonical(g, {e[0].of, e[0].axis, e[0].value * flat.heads}) == flat.rows)) {
    return false;
  }
  *tail = {e[2], e[3]};
  return true;
}

bool ScoresTail(const std::vector<Dim>& tail, const Dim& s, const Dim& t) {
  return tail.size() == 2 &&
         ((s.Size() && tail[0] == s && tail[1].Free()) || (t.Size() && tail[1] == t && tail[0].Free()));
}

}  // namespace onnxflow::graph
