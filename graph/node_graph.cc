#include "graph/node_graph.h"

#include <algorithm>
#include <queue>

namespace onnxflow::graph {
namespace {

// Explicit inputs, then implicit ones: every value a node waits for.
template <class F>
void ForEachRead(const Node& n, F&& f) {
  for (const auto& v : n.proto->input()) {
    if (!v.empty()) f(v);
  }
  for (const auto& v : n.implicit_inputs) f(v);
}

const std::vector<NodeGraph::Id>& NoReaders() {
  static const std::vector<NodeGraph::Id> kNone;
  return kNone;
}

}  // namespace

NodeGraph::Id NodeGraph::Add(Node node, Key key) {
  const Id id = boost::add_vertex(VertexData{std::move(node), key, true, -1}, dag_);
  next_position_ = std::max(next_position_, key.first + 1);
  ++live_;
  Attach(id);
  return id;
}

void NodeGraph::Attach(Id id) {
  const Node& n = dag_[id].node;
  ForEachRead(n, [&](const std::string& v) {
    readers_[v].push_back(id);
    if (auto p = producer_.find(v); p != producer_.end()) boost::add_edge(p->second, id, EdgeData{v}, dag_);
  });
  for (const auto& out : n.proto->output()) {
    if (out.empty()) continue;
    producer_[out] = id;
    if (auto r = readers_.find(out); r != readers_.end()) {
      for (Id reader : r->second) boost::add_edge(id, reader, EdgeData{out}, dag_);
    }
  }
  Invalidate();
}

void NodeGraph::Detach(Id id) {
  const Node& n = dag_[id].node;
  ForEachRead(n, [&](const std::string& v) {
    auto r = readers_.find(v);
    if (r == readers_.end()) return;
    auto it = std::find(r->second.begin(), r->second.end(), id);
    if (it != r->second.end()) r->second.erase(it);
    if (r->second.empty()) readers_.erase(r);
  });
  for (const auto& out : n.proto->output()) {
    auto p = producer_.find(out);
    if (p != producer_.end() && p->second == id) producer_.erase(p);
  }
  boost::clear_vertex(id, dag_);
  Invalidate();
}

void NodeGraph::Remove(Id id) {
  if (!dag_[id].live) return;
  Detach(id);
  dag_[id].live = false;
  dag_[id].node = Node{};
  --live_;
  dead_.push_back(id);
}

void NodeGraph::SetProto(Id id, std::shared_ptr<const onnx::NodeProto> proto) {
  Detach(id);
  dag_[id].node.proto = std::move(proto);
  Attach(id);
}

void NodeGraph::SetImplicitInputs(Id id, std::vector<std::string> names) {
  Detach(id);
  dag_[id].node.implicit_inputs = std::move(names);
  Attach(id);
}

void NodeGraph::SetOutputs(const std::vector<std::string>& names) { outputs_ = {names.begin(), names.end()}; }

void NodeGraph::Compact() {
  for (Id id : dead_) boost::remove_vertex(id, dag_);
  dead_.clear();
  Invalidate();
}

NodeGraph::Id NodeGraph::Producer(const std::string& value) const {
  auto p = producer_.find(value);
  return p == producer_.end() ? None() : p->second;
}

int NodeGraph::ReadCount(const std::string& value) const {
  auto r = readers_.find(value);
  return (r == readers_.end() ? 0 : static_cast<int>(r->second.size())) + (IsOutput(value) ? 2 : 0);
}

const std::vector<NodeGraph::Id>& NodeGraph::Readers(const std::string& value) const {
  auto r = readers_.find(value);
  return r == readers_.end() ? NoReaders() : r->second;
}

const std::vector<NodeGraph::Id>& NodeGraph::Order() const {
  if (order_valid_) return order_;
  // Kahn's algorithm, releasing the ready node with the smallest key first: the file's order
  // wherever the edges allow it. An edge per read, so a node reading one producer twice waits
  // for two releases.
  auto& dag = const_cast<Dag&>(dag_);  // positions are a cache, written here only
  std::unordered_map<Id, size_t> waiting;
  using Entry = std::pair<Key, Id>;
  auto later = [](const Entry& a, const Entry& b) { return a.first > b.first; };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> ready(later);
  for (Id v : boost::make_iterator_range(boost::vertices(dag_))) {
    if (!dag_[v].live) continue;
    dag[v].position = -1;
    const size_t in = boost::in_degree(v, dag_);
    if (in == 0) {
      ready.push({dag_[v].key, v});
    } else {
      waiting[v] = in;
    }
  }
  order_.clear();
  order_.reserve(live_);
  while (!ready.empty()) {
    const Id v = ready.top().second;
    ready.pop();
    dag[v].position = static_cast<int>(order_.size());
    order_.push_back(v);
    for (auto e : boost::make_iterator_range(boost::out_edges(v, dag_))) {
      const Id t = boost::target(e, dag_);
      if (--waiting[t] == 0) ready.push({dag_[t].key, t});
    }
  }
  acyclic_ = order_.size() == live_;
  order_valid_ = true;
  return order_;
}

std::vector<NodeGraph::Id> NodeGraph::Cycle(size_t limit) const {
  Order();
  std::vector<Id> stuck;
  if (acyclic_) return stuck;
  std::vector<std::pair<Key, Id>> left;
  for (Id v : boost::make_iterator_range(boost::vertices(dag_))) {
    if (dag_[v].live && dag_[v].position < 0) left.push_back({dag_[v].key, v});
  }
  std::sort(left.begin(), left.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t k = 0; k < left.size() && k < limit; ++k) stuck.push_back(left[k].second);
  return stuck;
}

}  // namespace onnxflow::graph
