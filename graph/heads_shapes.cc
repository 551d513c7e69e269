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

bool FlatHeadsOf(const Graph& g, std::string* value, FlatHeads* flat, std::vector<Id>* nodes) {
  const Id flatten = SoleReaderProducer(g, *value);
  std::vector<Dim> f, e;
  if (flatten == kNone || !ReshapeTo(g, g.nodes[flatten], &f) || f.size() != 3) return false;
  const std::string& h = g.nodes[flatten].proto->input(0);
  const Id t = g.nodes.Producer(h);
  if (t == kNone || !IsTranspose(g.nodes[t], {0, 2, 1, 3})) return false;
  const Id split = g.nodes.Producer(g.nodes[t].proto->input(0));
  if (split == kNone || !ReshapeTo(g, g.nodes[split], &e) || e.size() != 4 || !e[0].Size() ||
      e[0].value > kMaxHeadsEntry || !e[2].of.empty() || e[2].value < 1 || e[2].value > kMaxHeadsEntry ||
      !e[3].of.empty() || e[3].value < 1) {
    return false;
  }
  const Dim rows = {e[0].of, e[0].axis, e[0].value * e[2].value};
  if (!(f[0] == rows) || !f[2].Is(e[3].value) || !f[1].Free()) return false;
  *flat = {rows, e[1], e[2].value, e[3].value};
  *value = h;
  nodes->push_back(flatten);
  return true;
}

bool UnflattensHeads(const Graph& g, const Node& n, const FlatHeads& flat, std::vector<Dim>* tail) {
  std::vector<Dim> e;
  if (!ReshapeTo(g, n, &e) || e.size() != 4 || !e[1].Is(flat.heads) || !e[0].Size() || e[0].value > kMaxHeadsEntry ||
      !(Dim{e[0].of, e[0].axis, e[0].value * flat.heads} == flat.rows)) {
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
