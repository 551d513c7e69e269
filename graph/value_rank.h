// The rank of a value as far as the load can prove it, for the passes that change a value's layout
// or rank (the attention fusion's heads, the 1-D lift, the channels-last quantized region) and
// must know the rank of an operand that enters from outside what they rewrite.
//
// A rank is proven by a declaration (a constant, a graph input or an enclosing scope's input
// declared with a shape) or by the producers above the value: ops whose output keeps their first
// input's rank (activations, Cast, Slice, Pad, convolutions and pools, normalizations, per-tensor
// QuantizeLinear / DequantizeLinear, the QLinear ops), broadcasting ops (the highest rank of their
// operands, each of them proven), Transpose (its perm), Reshape to a constant shape or to another
// value's Shape, Unsqueeze / Squeeze by known axes, Concat (any one input: they share their rank),
// and a few ops of fixed rank (Shape, Flatten, Gemm). Anything else is unknown (-1).
//
// The walk up the producers is bounded (`depth` levels): a hostile chain of 100 k nodes costs
// `depth` steps and no deep recursion. Answers are kept per value, so a pass asking about values
// in graph order pays for each node about once; an unknown that the bound caused is kept only
// for the rest of its query (reached again there with no more levels to go), and walked again by
// a later one, which may find the values above it proven since.
#pragma once

#include <string>
#include <unordered_map>

#include "graph/graph.h"

namespace onnxflow::graph {

class ValueRanks {
 public:
  // 16 levels: the 1-D lift's reach (a wav2vec2 GroupNorm's Reshape(Shape(x)) over a few
  // elementwise ops); passes asking in graph order reach further through the kept answers.
  static constexpr int kDefaultDepth = 16;

  explicit ValueRanks(const Graph& g, int depth = kDefaultDepth) : g_(g), depth_(depth) {}

  // The proven rank of `value`; -1 when nothing proves it.
  int64_t Of(const std::string& value);

  // What the caller knows of `value` beyond the graph (a value its own rewrite gives that rank),
  // taken as proven from now on.
  void Assume(const std::string& value, int64_t rank) { known_[value] = {rank, -1, 0}; }

 private:
  struct Answer {
    int64_t rank;
    int levels;  // -1: final; else the levels the walk had left when the bound cut it short
    int query;   // the query that found it cut short
  };
  int64_t Walk(const std::string& value, int levels, bool* cut);
  int64_t Declared(const std::string& value) const;
  int64_t ByProducer(const std::string& value, int levels, bool* cut);

  const Graph& g_;
  const int depth_;
  std::unordered_map<std::string, Answer> known_;
  int query_ = 0;
};

// One query on a graph that is being edited (a rule between patches): no kept answers.
inline int64_t ProvenRank(const Graph& g, const std::string& value, int depth = ValueRanks::kDefaultDepth) {
  return ValueRanks(g, depth).Of(value);
}

}  // namespace onnxflow::graph
