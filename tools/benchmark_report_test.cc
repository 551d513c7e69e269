// The profile table run_model --profile prints: columns as wide as the names they list, and a
// scope-path name too long for its column told apart by its tail.
#include "tools/benchmark_report.h"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace onnxflow::tools {
namespace {

NodeTiming Timing(const std::string& node, const std::string& op, int64_t ms) {
  NodeTiming t;
  t.node = node;
  t.op_type = op;
  t.end_ns = ms * 1000000;
  t.output_shape = {1, 72, 7, 7, 16};
  return t;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ProfileTable, LongScopeNamesKeepTheirDistinctTails) {
  // Two nodes of one PyTorch block: the first 48 characters of their names are the same.
  const std::string prefix = "/layers/layers.12/layers.12.1/layers/layers.12.1.long_scope_name/";
  RunProfile run;
  run.nodes = {Timing(prefix + "conv_a", "BlockedDepthwiseConv", 3), Timing(prefix + "conv_b", "BlockedConv", 2),
               Timing("short", "Add", 1)};
  const std::string table = ProfileTable({run}, 10);
  const std::vector<std::string> lines = Lines(table);
  ASSERT_GE(lines.size(), 5u) << table;
  EXPECT_EQ(lines[0], "node time per run (sum over nodes): 6.000 ms") << table;
  // Node column: the widest listed name, capped; op column: the widest op type, never cut.
  const std::string op_column = "BlockedDepthwiseConv";
  EXPECT_EQ(lines[1].substr(0, kProfileNameWidth + 1 + op_column.size() + 1),
            std::string("node") + std::string(kProfileNameWidth - 4, ' ') + " op" + std::string(op_column.size() - 2, ' ') + " ")
      << table;
  const std::string tail_a = (prefix + "conv_a").substr(prefix.size() + 6 - (kProfileNameWidth - 3));
  EXPECT_EQ(lines[2].substr(0, kProfileNameWidth), "..." + tail_a) << table;
  EXPECT_NE(lines[2].find(" BlockedDepthwiseConv "), std::string::npos) << table;
  EXPECT_NE(lines[2].find("     3.000   50.0  [1,72,7,7,16]"), std::string::npos) << table;
  EXPECT_NE(lines[3].find("conv_b BlockedConv "), std::string::npos) << table;
  EXPECT_EQ(lines[4].substr(0, 6), "short ") << table;
  // The op summary lists every op type whole, the slowest first.
  EXPECT_NE(table.find("\nBlockedDepthwiseConv      1      3.000   50.0\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\nAdd                       1      1.000   16.7\n"), std::string::npos) << table;
}

TEST(ProfileTable, ShortNamesMakeANarrowTable) {
  RunProfile run;
  run.nodes = {Timing("mm", "MatMul", 4), Timing("relu", "Relu", 4)};
  const std::vector<std::string> lines = Lines(ProfileTable({run, run}, 1));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1], "node op             ms      %  output shape");
  EXPECT_EQ(lines[2].rfind("mm   MatMul      4.000   50.0  [1,72,7,7,16]", 0), 0u) << lines[2];
  EXPECT_EQ(lines.size(), 7u);  // one node listed, a blank line, the op header and two op types
}

}  // namespace
}  // namespace onnxflow::tools
