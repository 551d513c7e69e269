// The shape operands of attention's Reshapes as the fusions read them: entries that are numbers
// or dimensions read off a shape at run time (an export with dynamic axes), and the bmm form of
// transformers before 4.48 (BART, Marian, HF Whisper), whose heads are flattened to (B * N, S, D)
// for torch.bmm, also as decoders write it (a cache Concat or past input flattened as it is) and with
// src_len read off the flattened keys' shape. Internal to graph/ (graph/attention_fusion.cc).
#pragma once

#include <string>
#include <vector>

#include "graph/fusion_util.h"

namespace onnxflow::graph {

// One shape entry: a number, or `value` times dimension `axis` of the shape of `of` read at run
// time (Gather(Shape(of), axis) or Slice(Shape(of), axis, axis + 1), through Unsqueeze and Squeeze,
// times constants: bsz * num_heads).
struct Dim {
  std::string of;  // empty: the number `value`
  int64_t axis = 0, value = 0;
  bool operator==(const Dim& o) const { return of == o.of && axis == o.axis && value == o.value; }
  bool Is(int64_t v) const { return of.empty() && value == v; }
  // A size: a positive number, or a run-time dimension.
  bool Size() const { return !of.empty() || value > 0; }
  // What a Reshape entry may be where the element count fixes it: a size or -1.
  bool Free() const { return Size() || value == -1; }
};

// The entries of a shape operand (Expand's, Reshape's): an int64 constant, or Concat(axis 0) of
// int64 constants and Dims. False when it is neither.
bool ShapeOperandEntries(const Graph& g, const std::string& shape, std::vector<Dim>* entries);

// The entries of Reshape `n` (allowzero 0, opset 5 on); false for any other node.
bool ReshapeTo(const Graph& g, const Node& n, std::vector<Dim>* entries);

// In the bmm form every Reshape must merge or split exactly the batch and head axes, which their
// entries prove: B * N rows of D, with B and N the entries of the Reshape into heads (numbers in a
// static export; with dynamic axes B is bsz read off a shape at run time and the rows bsz * N), so
// a Reshape that moved sequence rows between heads is never taken for one; the element count then
// fixes the rest, given one of S and T (the query's or keys' sequence entry of their Reshape into
// heads).
struct FlatHeads {
  Dim rows, seq;                     // B * N; S as the Reshape into heads says it
  int64_t heads = 0, head_size = 0;  // N, D; N > 0 once found
};

// `*value` is Reshape(h, [B * N, S or -1, D]) read by the pattern alone, h = Transpose(Reshape(p,
// [B, S, N, D]), [0, 2, 1, 3]) with N, D numbers (N * D > 1) and B a size, or 0 (ONNX Runtime
// saves q's heads shape as [0, -1, N, D]: the dimension 0 of the input p projects, through a scale,
// a bias and a product with 2-D weights): *value becomes h, the Reshape goes to `nodes`. S is the
// entry, or when not a size the flattened value's own dimension 1. With `shape_readers`, *value may also be read by Shape nodes (an export's
// src_len = key_states.size(1)), appended there: the caller removes them or refuses.
bool FlatHeadsOf(const Graph& g, std::string* value, FlatHeads* flat, std::vector<Id>* nodes,
                 std::vector<Id>* shape_readers = nullptr);

// The bmm form's keys or values flattened from a tensor of unknown layout: `value` is Reshape(x,
// [rows, -1, D]) (read by the pattern and by Shape nodes, appended to `shape_readers`), x a
// decoder's cache Concat(past, new) or a past input used as it is (cross-attention's encoder keys).
// Its rows must be B * N with B a size: numbers, or bsz * N with bsz read off a shape at run time
// (`flat->rows` when flat->heads > 0; else they set it, N from the entry's factor). The flattened
// rows b * N + n of length T * D are then exactly Reshape(x, [B, N, -1, D])'s (b, n): `batch`, the
// B entry of that view, which the caller adds (the Reshape goes to `nodes`).
struct FlatView {
  std::string x;
  Dim batch;
};
bool FlatViewOf(const Graph& g, const std::string& value, FlatHeads* flat, FlatView* view, std::vector<Id>* nodes,
                std::vector<Id>* shape_readers);

// `n` Reshapes (B * N, X, Y) to (B, N, X', Y'): four entries, the first two B and N; `*tail` X', Y'.
bool UnflattensHeads(const Graph& g, const Node& n, const FlatHeads& flat, std::vector<Dim>* tail);

// Trailing Reshape entries (X, Y) of (B * N) S T scores that are (S, T): X is the query's S, or Y
// the keys' T, each a size (the element count fixes the other), the other free.
bool ScoresTail(const std::vector<Dim>& tail, const Dim& s, const Dim& t);

}  // namespace onnxflow::graph
