#include "tools/large_models.h"

#include "tools/model_builder.h"

namespace onnxflow::tools {
namespace {

const char* const kElementwise[] = {"Relu", "Neg", "Abs", "Sigmoid"};

// Appends `count` elementwise nodes reading `from`; returns the last value's name.
std::string Chain(GraphBuilder& g, const std::string& from, int64_t count, const std::string& prefix) {
  std::string last = from;
  for (int64_t i = 0; i < count; ++i) {
    const std::string out = prefix + std::to_string(i);
    g.Node(kElementwise[i % 4], {last}, {out}, out);
    last = out;
  }
  return last;
}

}  // namespace

std::string ChainOfElementwise(int64_t nodes) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {4});
  const std::string last = Chain(m, "x", nodes, "c");
  m.Node("Identity", {last}, {"y"}, "out");
  m.Output("y", DataType::kFloat, {4});
  return m.Serialize();
}

std::string WideBranches(int64_t nodes) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {4});
  std::vector<std::string> branches;
  for (int64_t i = 0; i + 1 < nodes; ++i) {
    branches.push_back("b" + std::to_string(i));
    m.Node(kElementwise[i % 4], {"x"}, {branches.back()}, branches.back());
  }
  m.Node("Sum", branches, {"y"}, "sum");
  m.Output("y", DataType::kFloat, {4});
  return m.Serialize();
}

std::string NestedSubgraphs(int depth, int64_t nodes_per_level) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {4});
  m.Input("flag", DataType::kBool, {});
  GraphBuilder level = m;
  std::string result = "y";
  for (int d = 0; d < depth; ++d) {
    const std::string tag = "l" + std::to_string(d) + "_";
    auto& node = level.Node("If", {"flag"}, {result}, tag + "if");
    GraphBuilder then_branch = SetGraphAttr(node, "then_branch");
    GraphBuilder else_branch = SetGraphAttr(node, "else_branch");
    else_branch.Node("Identity", {"x"}, {tag + "else_out"}, tag + "else");
    else_branch.Output(tag + "else_out", DataType::kFloat, {4});
    // then: this level's chain over the outer x, plus what the next level returns.
    const std::string last = Chain(then_branch, "x", nodes_per_level, tag + "c");
    const std::string out = tag + "then_out";
    const std::string next = "l" + std::to_string(d + 1) + "_y";
    if (d + 1 == depth) {
      then_branch.Node("Identity", {last}, {out}, tag + "id");
    } else {
      then_branch.Node("Add", {last, next}, {out}, tag + "add");
    }
    then_branch.Output(out, DataType::kFloat, {4});
    level = then_branch;
    result = next;
  }
  m.Output("y", DataType::kFloat, {4});
  return m.Serialize();
}

}  // namespace onnxflow::tools
