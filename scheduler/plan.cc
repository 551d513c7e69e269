#include "scheduler/plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "graph/passes.h"
#include "ops/framework/shared_weights.h"
#include "scheduler/subgraph.h"

namespace onnxflow {
namespace {

using graph::Unsupported;
using graph::UnsupportedNode;

constexpr size_t kShareableConstantBytes = 4096;

// Marks the inputs each node may write into (NodeSlots::reusable): a value's last reader may take
// its storage over when it reads the value through one input only and every other reader is its
// ancestor, so no reader can run alongside or after it in a dataflow run. Nodes are in topological
// order; the ancestry search goes backwards from the last reader, never before the first, and
// stops at a budget on a huge fan-out (a hostile graph then only loses the reuse).
void MarkReusableInputs(std::vector<PlanNode>& nodes, const std::vector<std::set<int>>& preds,
                        const std::vector<bool>& pinned) {
  const int n = static_cast<int>(nodes.size());
  std::vector<std::vector<int>> readers(pinned.size());
  for (int i = 0; i < n; ++i) {
    for (int s : nodes[i].reads) readers[s].push_back(i);
  }
  // How often each node reads each slot through an input (and where first), and which slots it
  // reads implicitly: counted once, so a node of many inputs (a Sum of 100,000 branches) costs
  // linear time, not a scan of its inputs per slot.
  struct Reading {
    int count = 0;
    int position = -1;
    bool implicit = false;
  };
  std::unordered_map<uint64_t, Reading> reading;
  const auto key = [](int node, int slot) { return (static_cast<uint64_t>(node) << 32) | static_cast<uint32_t>(slot); };
  for (int i = 0; i < n; ++i) {
    const NodeSlots& slots = nodes[i].slots;
    for (size_t k = 0; k < slots.inputs.size(); ++k) {
      if (slots.inputs[k] < 0) continue;
      Reading& r = reading[key(i, slots.inputs[k])];
      if (r.count++ == 0) r.position = static_cast<int>(k);
    }
    for (int s : slots.implicit_inputs) reading[key(i, s)].implicit = true;
  }
  int64_t budget = int64_t{1} << 22;
  std::vector<int> seen(n, -1), stack;
  for (int s = 0; s < static_cast<int>(readers.size()); ++s) {
    if (pinned[s] || readers[s].empty()) continue;
    const int last = readers[s].back(), first = readers[s].front();
    NodeSlots& slots = nodes[last].slots;
    auto read = reading.find(key(last, s));
    if (read == reading.end() || read->second.count != 1 || read->second.implicit) continue;
    const int position = read->second.position;
    size_t found = 1;  // `last` itself
    seen[last] = s;
    stack.assign(1, last);
    while (!stack.empty() && found < readers[s].size() && budget > 0) {
      const int i = stack.back();
      stack.pop_back();
      for (int q : preds[i]) {
        --budget;
        if (q < first || seen[q] == s) continue;
        seen[q] = s;
        stack.push_back(q);
        if (std::binary_search(readers[s].begin(), readers[s].end(), q)) ++found;
      }
    }
    if (found < readers[s].size()) continue;
    if (slots.reusable.empty()) slots.reusable.assign(slots.inputs.size(), 0);
    slots.reusable[position] = 1;
  }
}

// Constants a kernel copies at load (packed weights: OpKernel::ReadsAtRun is false) go as soon as
// the last node reading them has its kernel, not after the whole plan: otherwise every weight is
// held twice at the load's peak, as read and as packed. A constant read through a subgraph, at
// run time, or as a graph output stays.
class ConstantRelease {
 public:
  ConstantRelease(const graph::Graph& g, const std::vector<graph::NodeGraph::Id>& order) {
    for (size_t i = 0; i < order.size(); ++i) {
      const graph::Node& node = g.nodes[order[i]];
      for (const std::string& name : node.proto->input()) {
        if (g.constants.count(name)) last_reader_[name] = i;
      }
      for (const std::string& name : node.implicit_inputs) kept_.insert(name);
    }
    for (const auto& out : g.outputs) kept_.insert(out.name);
  }

  // The constants node i (order[i], whose kernel is `kernel`) was the last to need.
  std::vector<std::string> AfterKernel(size_t i, const graph::Node& node, const OpKernel& kernel) {
    const auto& inputs = node.proto->input();
    for (int k = 0; k < inputs.size(); ++k) {
      if (kernel.ReadsAtRun(k) && last_reader_.count(inputs[k])) kept_.insert(inputs[k]);
    }
    std::vector<std::string> done;
    for (const std::string& name : inputs) {
      auto it = last_reader_.find(name);
      if (it == last_reader_.end() || it->second != i || kept_.count(name)) continue;
      if (std::find(done.begin(), done.end(), name) == done.end()) done.push_back(name);
    }
    return done;
  }

 private:
  std::unordered_map<std::string, size_t> last_reader_;
  std::unordered_set<std::string> kept_;
};

}  // namespace

Result<std::unique_ptr<Plan>> Plan::Build(graph::Graph& g, const std::vector<std::string>& outer_scope,
                                          const KernelRegistry& registry, const SessionOptions& options, int depth) {
  auto plan = std::unique_ptr<Plan>(new Plan());
  Plan& p = *plan;
  std::map<std::string, int> slot_of;
  auto slot = [&](const std::string& name) {
    auto [it, inserted] = slot_of.emplace(name, static_cast<int>(p.slot_names_.size()));
    if (inserted) p.slot_names_.push_back(name);
    return it->second;
  };

  for (size_t j = 0; j < outer_scope.size(); ++j) p.outer_slots_.emplace_back(slot(outer_scope[j]), static_cast<int>(j));
  for (const auto& in : g.inputs) p.input_slots_.push_back(slot(in.name));
  std::unordered_map<std::string, size_t> constant_at;  // name -> index in p.constants_
  for (const auto& [name, tensor] : g.constants) {
    constant_at[name] = p.constants_.size();
    p.constants_.emplace_back(slot(name), Value(tensor));
  }
  p.inputs_ = g.inputs;
  p.outputs_ = g.outputs;

  // Kernels; every unsupported node is collected so the model is refused with one message.
  std::vector<Unsupported> unsupported;
  Status first_error;
  // The IR's order and edges: node i of the plan is order[i].
  const std::vector<graph::NodeGraph::Id>& order = g.nodes.Order();
  std::unordered_map<graph::NodeGraph::Id, int> index_of;
  for (size_t i = 0; i < order.size(); ++i) index_of[order[i]] = static_cast<int>(i);
  p.nodes_.resize(order.size());
  ConstantRelease release(g, order);
  constexpr size_t kReleaseEvery = size_t{1} << 20;
  size_t released_bytes = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const graph::Node& node = g.nodes[order[i]];
    PlanNode& pn = p.nodes_[i];
    pn.description = node.Describe();
    pn.name = node.proto->name().empty() ? node.op_type() : node.proto->name();
    pn.op_type = node.op_type();
    for (const auto& name : node.proto->input()) pn.slots.inputs.push_back(name.empty() ? -1 : slot(name));
    for (const auto& name : node.implicit_inputs) pn.slots.implicit_inputs.push_back(slot(name));
    for (const auto& name : node.proto->output()) pn.slots.outputs.push_back(name.empty() ? -1 : slot(name));

    std::map<std::string, const Subgraph*> subgraphs;
    for (const auto& [attr, child] : node.subgraphs) {
      std::vector<std::string> child_outer(child->outer_names.begin(), child->outer_names.end());
      std::vector<int> carried;  // index of each child outer name in this node's implicit inputs
      for (const auto& name : child_outer) {
        carried.push_back(static_cast<int>(std::find(node.implicit_inputs.begin(), node.implicit_inputs.end(), name) -
                                           node.implicit_inputs.begin()));
      }
      auto sub = PlannedSubgraph::Build(*child, child_outer, carried, registry, options, depth + 1);
      if (!sub.ok()) {
        if (sub.status().code() == StatusCode::kUnimplemented) {
          unsupported.push_back({sub.status().message(), "", ""});
        } else if (first_error.ok()) {
          first_error = sub.status().WithContext(pn.description + ", attribute '" + attr + "'");
        }
        continue;
      }
      subgraphs[attr] = sub->get();
      pn.subgraphs.push_back(std::move(sub).value());
    }

    const KernelDef* def = registry.Find(node.domain, node.op_type(), node.opset);
    if (def == nullptr) {
      unsupported.push_back(UnsupportedNode(node, NotFound("")));
      continue;
    }
    std::vector<const Tensor*> constants;
    for (const auto& name : node.proto->input()) {
      auto it = g.constants.find(name);
      constants.push_back(it == g.constants.end() ? nullptr : &it->second);
    }
    KernelInfo info(*node.proto, node.opset, graph::KnownInputTypes(g, node), constants, subgraphs);
    info.set_output_types(graph::KnownOutputTypes(g, node));
    auto kernel = def->Create(info);
    if (!kernel.ok()) {
      if (kernel.status().code() == StatusCode::kUnimplemented) {
        unsupported.push_back(UnsupportedNode(node, kernel.status()));
      } else if (first_error.ok()) {
        first_error = kernel.status().WithContext(pn.description);
      }
      continue;
    }
    pn.kernel = std::move(kernel).value();
    for (const std::string& name : release.AfterKernel(i, node, *pn.kernel)) {
      released_bytes += g.constants[name].nbytes();
      g.constants[name] = Tensor();
      p.constants_[constant_at.at(name)].second = Value();
    }
    // A released tensor's buffer goes back to the pool (include/onnxflow/tensor.cc), where the
    // packed weights, allocated apart, cannot reuse it: hand it to malloc now and then.
    if (released_bytes >= kReleaseEvery) {
      ReleasePooledStorage();
      released_bytes = 0;
    }
  }
  ONNXFLOW_RETURN_IF_ERROR(graph::RefuseUnsupported(unsupported));
  if (!first_error.ok()) return first_error;
  for (const auto& out : g.outputs) p.output_slots_.push_back(slot(out.name));

  // Constants that no node reads, or only kernels that copied them at load (OpKernel::ReadsAtRun),
  // leave the value table (an initializer listed as a graph input too: a caller's value for it
  // would be read by no kernel either). Outputs, outer values and subgraphs keep theirs.
  std::vector<bool> read_at_run(p.slot_count(), false);
  for (int s : p.output_slots_) read_at_run[s] = true;
  for (const auto& [s, j] : p.outer_slots_) read_at_run[s] = true;
  for (const PlanNode& pn : p.nodes_) {
    for (size_t k = 0; k < pn.slots.inputs.size(); ++k) {
      const int s = pn.slots.inputs[k];
      if (s >= 0 && pn.kernel->ReadsAtRun(static_cast<int>(k))) read_at_run[s] = true;
    }
    for (int s : pn.slots.implicit_inputs) read_at_run[s] = true;
  }
  auto released = std::stable_partition(p.constants_.begin(), p.constants_.end(),
                                        [&](const std::pair<int, Value>& c) { return read_at_run[c.first]; });
  for (auto it = released; it != p.constants_.end(); ++it) p.released_constants_.push_back(p.slot_names_[it->first]);
  p.constants_.erase(released, p.constants_.end());
  // The constants that stay are shared by content with other sessions' (a second session of one
  // model holds no second copy of a Gemm's B). Small ones are not worth a map entry.
  for (auto& [s, value] : p.constants_) {
    if (value.is_tensor() && value.tensor().nbytes() >= kShareableConstantBytes) {
      value = Value(SharedWeights::Intern(value.tensor()));
    }
  }

  // Readers and lifetimes.
  const int slots = p.slot_count();
  p.reader_counts_.assign(slots, 0);
  std::vector<int> producer(slots, -1), last_reader(slots, -1);
  for (size_t i = 0; i < p.nodes_.size(); ++i) {
    PlanNode& pn = p.nodes_[i];
    std::set<int> reads;
    for (int s : pn.slots.inputs) if (s >= 0) reads.insert(s);
    for (int s : pn.slots.implicit_inputs) reads.insert(s);
    for (int s : reads) {
      ++p.reader_counts_[s];
      last_reader[s] = static_cast<int>(i);
    }
    pn.reads.assign(reads.begin(), reads.end());
    for (int s : pn.slots.outputs) if (s >= 0) producer[s] = static_cast<int>(i);
  }
  for (int s : p.output_slots_) p.reader_counts_[s] = kNeverFree;
  for (const auto& [s, v] : p.constants_) p.reader_counts_[s] = kNeverFree;
  for (const auto& [s, j] : p.outer_slots_) p.reader_counts_[s] = kNeverFree;
  p.free_after_.assign(p.nodes_.size(), {});
  for (int s = 0; s < slots; ++s) {
    if (p.reader_counts_[s] == kNeverFree) continue;
    if (last_reader[s] >= 0) {
      p.free_after_[last_reader[s]].push_back(s);
    } else if (producer[s] >= 0) {
      p.free_after_[producer[s]].push_back(s);  // written, never read
    }
  }
  for (auto& pn : p.nodes_) {
    pn.reads.erase(std::remove_if(pn.reads.begin(), pn.reads.end(),
                                  [&](int s) { return p.reader_counts_[s] == kNeverFree; }),
                   pn.reads.end());
  }

  // Dependencies between nodes (the IR's edges, each pair once), then chains grouped into tasks.
  const int n = static_cast<int>(p.nodes_.size());
  std::vector<std::set<int>> preds(n), succs(n);
  const graph::NodeGraph::Dag& dag = g.nodes.dag();
  for (int i = 0; i < n; ++i) {
    for (auto e : boost::make_iterator_range(boost::in_edges(order[i], dag))) {
      preds[i].insert(index_of.at(boost::source(e, dag)));
    }
    for (int q : preds[i]) succs[q].insert(i);
  }
  std::vector<int> task_of(n, -1);
  for (int i = 0; i < n; ++i) {
    if (preds[i].size() == 1) {
      const int q = *preds[i].begin();
      PlanTask& t = p.tasks_[task_of[q]];
      if (succs[q].size() == 1 && t.nodes.back() == q) {
        t.nodes.push_back(i);
        task_of[i] = task_of[q];
        continue;
      }
    }
    task_of[i] = static_cast<int>(p.tasks_.size());
    p.tasks_.emplace_back();
    p.tasks_.back().nodes.push_back(i);
  }
  // Task edges, each once (a set of pairs: a producer read by 100,000 branches must not scan its
  // successor list per branch).
  std::unordered_set<uint64_t> task_edges;
  for (int i = 0; i < n; ++i) {
    for (int q : preds[i]) {
      const int from = task_of[q], to = task_of[i];
      if (from == to || !task_edges.insert((static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to)).second) {
        continue;
      }
      p.tasks_[from].successors.push_back(to);
      ++p.tasks_[to].predecessors;
    }
  }
  for (size_t t = 0; t < p.tasks_.size(); ++t) {
    if (p.tasks_[t].predecessors == 0) p.root_tasks_.push_back(static_cast<int>(t));
  }
  // Outputs, constants and outer values outlive the nodes. The main graph's inputs are the
  // caller's. A subgraph's inputs are what its frame moved in (scheduler/subgraph.cc): a decoding
  // loop's cache, a Loop's carried state, which the last reader may write into (a shared-buffer
  // attention writes its new keys there instead of copying the cache each step). Whether it may is
  // still decided per run (KernelContext::ReusableInput): a value the parent still holds has a
  // second handle, and borrowed memory has no storage to take.
  std::vector<bool> pinned(slots, false);
  for (int s = 0; s < slots; ++s) pinned[s] = p.reader_counts_[s] == kNeverFree;
  if (depth == 0) {
    for (int s : p.input_slots_) pinned[s] = true;
  }
  MarkReusableInputs(p.nodes_, preds, pinned);

  std::vector<int> level(n, 0), per_level(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    for (int q : preds[i]) level[i] = std::max(level[i], level[q] + 1);
    p.width_ = std::max(p.width_, ++per_level[level[i]]);
  }
  return plan;
}

}  // namespace onnxflow
