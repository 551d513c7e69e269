#include "ops/text/node_cases.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/run_state.h"
#include "ops/framework/tensor_proto.h"
#include "ops/framework/testing.h"
#include "proto/onnx.pb.h"

namespace onnxflow {
namespace {

bool ReadFile(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *bytes = s.str();
  return true;
}

bool ReadTensor(const std::string& path, Tensor* t) {
  std::string bytes;
  onnx::TensorProto proto;
  if (!ReadFile(path, &bytes) || !proto.ParseFromString(bytes)) return false;
  auto r = TensorFromProto(proto);
  if (!r.ok()) return false;
  *t = std::move(r).value();
  return true;
}

}  // namespace

::testing::AssertionResult RunNodeCase(const std::string& name,
                                       const std::function<Status(KernelRegistry&)>& register_kernels,
                                       bool* skipped) {
  *skipped = false;
  const char* root = std::getenv("ONNXFLOW_TEST_DATA");
  const std::string dir = std::string(root != nullptr ? root : "/work/shared/onnx-tests") + "/node/" + name;
  std::string bytes;
  onnx::ModelProto model;
  if (!ReadFile(dir + "/model.onnx", &bytes)) {
    *skipped = true;
    return ::testing::AssertionSuccess();
  }
  if (!model.ParseFromString(bytes) || model.graph().node_size() != 1) {
    return ::testing::AssertionFailure() << name << ": not a single-node model";
  }
  const onnx::NodeProto& node = model.graph().node(0);
  const std::string domain = NormalizeDomain(node.domain());
  int opset = 0;
  for (const auto& o : model.opset_import()) {
    if (NormalizeDomain(o.domain()) == domain) opset = static_cast<int>(o.version());
  }
  KernelRegistry registry;
  Status s = register_kernels(registry);
  if (!s.ok()) return ::testing::AssertionFailure() << s.ToString();
  const KernelDef* def = registry.Find(domain, node.op_type(), opset);
  if (def == nullptr) return ::testing::AssertionFailure() << name << ": no kernel for " << node.op_type() << "-" << opset;

  for (int set = 0;; ++set) {
    const std::string data = dir + "/test_data_set_" + std::to_string(set);
    std::vector<Value> values;
    NodeSlots slots;
    std::vector<DataType> types;
    std::vector<const Tensor*> constants;
    for (int i = 0; i < node.input_size(); ++i) {
      Tensor t;
      if (node.input(i).empty() || !ReadTensor(data + "/input_" + std::to_string(i) + ".pb", &t)) {
        slots.inputs.push_back(-1);
        types.push_back(DataType::kUndefined);
      } else {
        slots.inputs.push_back(static_cast<int>(values.size()));
        types.push_back(t.dtype());
        values.emplace_back(std::move(t));
      }
      constants.push_back(nullptr);
    }
    if (set > 0 && values.empty()) break;
    std::vector<Tensor> expected;
    for (int i = 0; i < node.output_size(); ++i) {
      Tensor t;
      if (!ReadTensor(data + "/output_" + std::to_string(i) + ".pb", &t)) break;
      expected.push_back(std::move(t));
    }
    if (expected.empty()) {
      if (set == 0) return ::testing::AssertionFailure() << name << ": no test data";
      break;
    }
    KernelInfo info(node, opset, types, constants, {});
    auto kernel = def->factory(info);
    if (!kernel.ok()) return ::testing::AssertionFailure() << name << ": load: " << kernel.status().ToString();
    for (int i = 0; i < node.output_size(); ++i) {
      slots.outputs.push_back(static_cast<int>(values.size()));
      values.emplace_back();
    }
    RunState run(SessionLimits{}, RunOptions{}, 1);
    KernelContext ctx(slots, values.data(), &run, node.name());
    s = kernel.value()->Compute(ctx);
    if (!s.ok()) return ::testing::AssertionFailure() << name << ": run: " << s.ToString();
    for (size_t i = 0; i < expected.size(); ++i) {
      const Value& got = values[slots.outputs[i]];
      if (!got.is_tensor()) return ::testing::AssertionFailure() << name << ": output " << i << " is not a tensor";
      auto ok = TensorsNear(expected[i], got.tensor(), 1e-3, 1e-6);
      if (!ok) return ::testing::AssertionFailure() << name << " set " << set << " output " << i << ": " << ok.message();
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace onnxflow
