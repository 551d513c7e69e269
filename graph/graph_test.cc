#include "graph/graph_test.h"

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "ops/register_all.h"

namespace onnxflow::graph {

Graph& GraphTest::graph() {
  if (loaded_ == nullptr) {
    SessionOptions options;
    options.optimize = false;
    auto model_or = LoadModelBytes(model.Serialize(), "", options, GlobalKernelRegistry());
    EXPECT_TRUE(model_or.ok()) << model_or.status().ToString();
    if (!model_or.ok()) {
      loaded_ = std::make_unique<Model>();
      loaded_->graph = std::make_shared<Graph>();
    } else {
      loaded_ = std::move(model_or).value();
    }
  }
  return *loaded_->graph;
}

int GraphTest::Run(const char* name, const Rule& rule) {
  int applied = 0;
  const Status status = RunRule(&graph(), name, [&](Rewriter& r, NodeGraph::Id id) {
    std::optional<Patch> patch = rule(r, id);
    applied += patch.has_value();
    return patch;
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return status.ok() ? applied : -1;
}

std::vector<std::string> GraphTest::Ops() {
  std::vector<std::string> ops;
  for (const Node& n : graph().nodes) ops.push_back((n.domain.empty() ? "" : n.domain + ".") + n.op_type());
  return ops;
}

const Node& GraphTest::Only(const std::string& op_type) {
  const Node* found = nullptr;
  int count = 0;
  for (const Node& n : graph().nodes) {
    if (n.op_type() == op_type) {
      found = &n;
      ++count;
    }
  }
  EXPECT_EQ(count, 1) << op_type;
  static const Node kNone{std::make_shared<onnx::NodeProto>(), "", 0, {}, {}};
  return found != nullptr ? *found : kNone;
}

void ExpectSameWithAndWithoutPasses(const std::function<Result<Session>(const SessionOptions&)>& load,
                                    const std::vector<NamedValue>& inputs, double rtol, double atol) {
  SessionOptions plain, optimized;
  plain.optimize = false;
  auto a = load(plain);
  auto b = load(optimized);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << " " << b.status().ToString();
  auto out_a = a->Run(inputs);
  auto out_b = b->Run(inputs);
  ASSERT_TRUE(out_a.ok() && out_b.ok()) << out_a.status().ToString() << " " << out_b.status().ToString();
  ASSERT_EQ(out_a->size(), out_b->size());
  for (size_t i = 0; i < out_a->size(); ++i) {
    const Comparison c = CompareValues((*out_a)[i].value, (*out_b)[i].value, rtol, atol);
    EXPECT_TRUE(c.match) << (*out_a)[i].name << ": " << c.mismatch;
  }
}

void GraphTest::ExpectSameOutputs(const std::vector<NamedValue>& inputs, double rtol, double atol) {
  const std::string bytes = model.Serialize();
  ExpectSameWithAndWithoutPasses([&](const SessionOptions& o) { return Session::LoadFromBytes(bytes, o); }, inputs,
                                 rtol, atol);
}

}  // namespace onnxflow::graph
