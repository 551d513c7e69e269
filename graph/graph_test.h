// GraphTest: build a model in code, load it to the IR without passes, run one rule (or pass), and
// assert what it did: how many patches applied, and the nodes that result. For the rules' tests.
//
//   class FuseSwishTest : public GraphTest {};
//   TEST_F(FuseSwishTest, ...) {
//     model.Input(...); model.Node("Conv", ...); ...
//     EXPECT_EQ(Run("FuseSwish", FuseSwish), 1);
//     EXPECT_EQ(Ops(), (std::vector<std::string>{"com.onnxflow.FusedConv"}));
//   }
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/model.h"
#include "graph/rewrite.h"
#include "include/onnxflow/session.h"
#include "tools/model_builder.h"

namespace onnxflow::graph {

// Loads a model twice through `load`, without and with the passes, runs both on `inputs` and
// expects the same outputs (|a - b| <= atol + rtol * |b|).
void ExpectSameWithAndWithoutPasses(const std::function<Result<Session>(const SessionOptions&)>& load,
                                    const std::vector<NamedValue>& inputs, double rtol, double atol = 1e-6);

// Deterministic float values in [offset - 1, offset + 1), different for each seed.
inline Tensor Floats(const std::vector<int64_t>& shape, int seed, float offset = 0.0f) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    t.mutable_data<float>()[i] = offset + static_cast<float>((i * 37 + seed * 11) % 97) / 48.5f - 1.0f;
  }
  return t;
}

class GraphTest : public ::testing::Test {
 protected:
  explicit GraphTest(int opset = 17) : model(opset) {}

  // The graph of `model`, loaded (validated, types inferred, kernels checked) without passes;
  // built on first use.
  Graph& graph();
  // Runs `rule` over the graph's main scope; the number of patches it applied (-1 when the driver
  // refused one: the test fails with the message).
  int Run(const char* name, const Rule& rule);
  // Starts over with an empty model (a test that builds several in a loop): graph() then loads the
  // new one instead of returning the last one's.
  void NewModel(int opset = 17) {
    model = tools::ModelBuilder(opset);
    loaded_.reset();
  }
  // The nodes in order as "Op", or "domain.Op" outside the default domain.
  std::vector<std::string> Ops();
  // The only node of op `op_type` (the test fails when there is not exactly one).
  const Node& Only(const std::string& op_type);
  // Runs the optimized and the unoptimized model on `inputs` and expects the same outputs.
  void ExpectSameOutputs(const std::vector<NamedValue>& inputs, double rtol = 1e-5, double atol = 1e-6);

  tools::ModelBuilder model;

 private:
  std::unique_ptr<Model> loaded_;
};

}  // namespace onnxflow::graph
