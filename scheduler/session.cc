// Session: the public API over the graph loader, the plan and the executor.
#include "include/onnxflow/session.h"

#include <malloc.h>

#include <atomic>
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "graph/model.h"
#include "ops/math/gemm.h"  // ReleaseAlignedFloats
#include "ops/framework/tsan_annotations.h"
#include "ops/register_all.h"
#include "scheduler/arena.h"
#include "scheduler/custom_op.h"
#include "scheduler/executor.h"
#include "scheduler/idle_release.h"
#include "scheduler/plan.h"

namespace onnxflow {

class SessionImpl {
 public:
  static Result<std::shared_ptr<const SessionImpl>> Create(std::unique_ptr<graph::Model> model,
                                                           const SessionOptions& options,
                                                           const KernelRegistry& registry) {
    auto impl = std::shared_ptr<SessionImpl>(new SessionImpl());
    impl->options_ = options;
    impl->threads_ = options.threads > 0 ? std::min(options.threads, DefaultThreadCount()) : DefaultThreadCount();
    impl->pool_ = SharedThreadPool(impl->threads_);
    ONNXFLOW_ASSIGN_OR_RETURN(impl->plan_, Plan::Build(*model->graph, {}, registry, options, 0));
    impl->executor_ = std::make_unique<Executor>(*impl->plan_, options.mode);
    // Inputs with an initializer are optional; list the required ones first, as users expect.
    for (size_t i = 0; i < impl->plan_->inputs().size(); ++i) {
      const auto& in = impl->plan_->inputs()[i];
      const bool initialized = model->graph->constants.count(in.name) > 0;
      impl->has_initializer_.push_back(initialized);
      if (!initialized) impl->inputs_.push_back(in);
    }
    for (size_t i = 0; i < impl->plan_->input_slots().size(); ++i) {
      impl->input_slot_[impl->plan_->inputs()[i].name] = {impl->plan_->input_slots()[i], static_cast<int>(i)};
    }
    impl->metadata_ = ReadMetadata(model->proto);
    // The session keeps the plan (kernels, packed weights, the constants shared by content), not
    // the graph: its copies of the weights, unfolded and unpacked, go now with the IR, and then
    // the buffers the load freed.
    model.reset();
    ReleasePooledStorage();
    malloc_trim(0);
    for (size_t n = 0; n < impl->plan_->nodes().size(); ++n) {
      for (int slot : impl->plan_->nodes()[n].slots.outputs) {
        if (slot >= 0) impl->producer_[slot] = static_cast<int>(n);
      }
    }
    for (size_t i = 0; i < impl->plan_->outputs().size(); ++i) impl->output_index_[impl->plan_->outputs()[i].name] = i;
    return std::shared_ptr<const SessionImpl>(impl);
  }

  // A run from a host thread: waits for a place in the pool (admission.h), then runs.
  Result<std::vector<NamedValue>> Run(const std::vector<NamedValue>& inputs, const RunOptions& options) const {
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> values, BindInputs(inputs));
    ONNXFLOW_ASSIGN_OR_RETURN(const int executing, pool_->gate.Enter(options));
    PlaceInPool place{pool_->gate};
    ONNXFLOW_RETURN_IF_ERROR(Execute(values, options, executing));
    return CollectOutputs(values);
  }

  // A run of some outputs only: the nodes none of them depends on are skipped.
  Result<std::vector<NamedValue>> Run(const std::vector<NamedValue>& inputs, const std::vector<std::string>& names,
                                      const RunOptions& options) const {
    ONNXFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const Selection> selection, Select(names));
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> values, BindInputs(inputs));
    ONNXFLOW_ASSIGN_OR_RETURN(const int executing, pool_->gate.Enter(options));
    PlaceInPool place{pool_->gate};
    ONNXFLOW_RETURN_IF_ERROR(Execute(values, options, executing, &selection->skip));
    std::vector<NamedValue> outputs;
    outputs.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      outputs.push_back(NamedValue{names[i], values[plan_->output_slots()[selection->outputs[i]]]});
    }
    return outputs;
  }

  // A run that already has its place (RunAsync, on a pool thread); gives it back when done.
  Result<std::vector<NamedValue>> RunAdmitted(const std::vector<NamedValue>& inputs, const RunOptions& options,
                                              int executing) const {
    PlaceInPool place{pool_->gate};
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> values, BindInputs(inputs));
    ONNXFLOW_RETURN_IF_ERROR(Execute(values, options, executing));
    return CollectOutputs(values);
  }

  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return plan_->outputs(); }
  const ModelMetadata& metadata() const { return metadata_; }
  ThreadPool& pool() const { return *pool_; }

 private:
  struct PlaceInPool {
    RunGate& gate;
    ~PlaceInPool() { gate.Leave(); }
  };

  // The value table of one run: constants, and the inputs checked against the model.
  Result<std::vector<Value>> BindInputs(const std::vector<NamedValue>& inputs) const {
    const Plan& plan = *plan_;
    std::vector<Value> values(plan.slot_count());
    for (const auto& [slot, value] : plan.constants()) values[slot] = value;
    std::vector<bool> given(plan.inputs().size(), false);
    for (const NamedValue& in : inputs) {
      auto it = input_slot_.find(in.name);
      if (it == input_slot_.end()) return InvalidArgument("the model has no input named '" + in.name + "'");
      const auto [slot, index] = it->second;
      const ValueInfo& info = plan.inputs()[index];
      values[slot] = AsDeclaredScalar(info, in.value) ? Value(in.value.tensor().Reshaped({})) : in.value;
      ONNXFLOW_RETURN_IF_ERROR(CheckInput(info, values[slot]));
      given[index] = true;
    }
    for (size_t i = 0; i < given.size(); ++i) {
      const auto& info = plan.inputs()[i];
      if (!given[i] && !has_initializer_[i] && !info.optional && !info.unread) {
        return InvalidArgument("input '" + info.name + "' is required but was not given");
      }
    }
    return values;
  }

  // Cost rule for intra-op threads: a run alone gets every core; with others executing, each gets
  // its share. A run left with one core runs on the thread that holds its place (the caller's, or
  // a pool thread for RunAsync), in topological order: the pool's threads stay with the runs that
  // split their work, and the run's tensors stay in one core's caches.
  Status Execute(std::vector<Value>& values, const RunOptions& options, int executing,
                 const std::vector<char>* skip = nullptr) const {
    IdleRelease::Scope active;
    RunState run(options_.limits, options, std::max(1, threads_ / executing));
    if (run.threads() == 1) return executor_->Run(values, run, skip);
    Status status;
    char done = 0;  // the run's writes happen before this thread reads them (tsan_annotations.h)
    pool_->arena.execute(MakeTsanVisible([&] {
      status = executor_->Run(values, run, skip);
      HappensBefore(&done);
    }));
    HappensAfter(&done);
    return status;
  }

  std::vector<NamedValue> CollectOutputs(const std::vector<Value>& values) const {
    const Plan& plan = *plan_;
    std::vector<NamedValue> outputs;
    outputs.reserve(plan.output_slots().size());
    for (size_t i = 0; i < plan.output_slots().size(); ++i) {
      outputs.push_back(NamedValue{plan.outputs()[i].name, values[plan.output_slots()[i]]});
    }
    return outputs;
  }

  // Which plan nodes a set of outputs needs: the producers of the outputs, and theirs, back to
  // the inputs and constants. Cached per list of names (hosts ask for the same few again).
  struct Selection {
    std::vector<int> outputs;  // index in plan outputs, per requested name
    std::vector<char> skip;    // per plan node
  };
  Result<std::shared_ptr<const Selection>> Select(const std::vector<std::string>& names) const {
    std::string key;
    for (const auto& n : names) key += n + '\0';
    {
      std::shared_lock<std::shared_mutex> lock(selections_mutex_);
      auto it = selections_.find(key);
      if (it != selections_.end()) return it->second;
    }
    auto selection = std::make_shared<Selection>();
    std::vector<int> pending;
    for (const auto& name : names) {
      auto it = output_index_.find(name);
      if (it == output_index_.end()) return InvalidArgument("the model has no output named '" + name + "'");
      selection->outputs.push_back(static_cast<int>(it->second));
      pending.push_back(plan_->output_slots()[it->second]);
    }
    const auto& nodes = plan_->nodes();
    selection->skip.assign(nodes.size(), 1);
    while (!pending.empty()) {
      const int slot = pending.back();
      pending.pop_back();
      auto producer = producer_.find(slot);
      if (producer == producer_.end() || !selection->skip[producer->second]) continue;
      selection->skip[producer->second] = 0;
      const NodeSlots& slots = nodes[producer->second].slots;
      for (int s : slots.inputs) if (s >= 0) pending.push_back(s);
      for (int s : slots.implicit_inputs) if (s >= 0) pending.push_back(s);
    }
    std::unique_lock<std::shared_mutex> lock(selections_mutex_);
    if (selections_.size() >= 64) return std::shared_ptr<const Selection>(std::move(selection));  // a bounded cache
    return std::shared_ptr<const Selection>(selections_.emplace(key, std::move(selection)).first->second);
  }

  static ModelMetadata ReadMetadata(const onnx::ModelProto& proto) {
    ModelMetadata m;
    m.producer_name = proto.producer_name();
    m.producer_version = proto.producer_version();
    m.domain = proto.domain();
    m.model_version = proto.model_version();
    m.ir_version = proto.ir_version();
    m.doc_string = proto.doc_string();
    m.graph_name = proto.graph().name();
    m.graph_doc_string = proto.graph().doc_string();
    for (const auto& p : proto.metadata_props()) m.metadata_props.emplace_back(p.key(), p.value());
    for (const auto& o : proto.opset_import()) m.opset_imports.emplace_back(o.domain(), o.version());
    return m;
  }

  // A map given as an input: keys and values side by side, of the declared types.
  static Status CheckMap(const std::string& where, const ValueInfo& info, const Map& map) {
    if (!map.well_formed()) {
      return InvalidArgument(where + ": a map's keys and values must be 1-D tensors of one length");
    }
    if (info.map_key != DataType::kUndefined && map.keys.dtype() != info.map_key) {
      return InvalidArgument(where + " has " + DataTypeName(map.keys.dtype()) + " keys, the model expects " +
                             DataTypeName(info.map_key));
    }
    if (info.dtype != DataType::kUndefined && map.values.dtype() != info.dtype) {
      return InvalidArgument(where + " has " + DataTypeName(map.values.dtype()) + " values, the model expects " +
                             DataTypeName(info.dtype));
    }
    return Status::Ok();
  }

  // A scalar input given as one value of rank 1 or more ([1], [1, 1]): what onnxruntime-web and
  // -node callers write for a model's scalar (Silero VAD's sample rate, `new Tensor("int64",
  // [16000n])`), and what ONNX Runtime accepts. It runs, and is checked, as the scalar the model
  // declares.
  static bool AsDeclaredScalar(const ValueInfo& info, const Value& value) {
    return info.has_shape && info.shape.empty() && value.is_tensor() && value.tensor().defined() &&
           value.tensor().rank() > 0 && value.tensor().size() == 1;
  }

  static Status CheckInput(const ValueInfo& info, const Value& value) {
    const std::string where = "input '" + info.name + "'";
    if (value.is_none()) {
      if (info.optional) return Status::Ok();
      return InvalidArgument(where + " has no value");
    }
    if (value.kind() != info.kind) {
      const char* want = info.kind == Value::Kind::kSequence ? " must be a sequence"
                         : info.kind == Value::Kind::kMap    ? " must be a map"
                                                             : " must be a tensor";
      return InvalidArgument(where + want);
    }
    if (value.is_sequence()) {
      // Sequence ops index tensors, ZipMap's readers maps: one kind must not stand for the other.
      const bool of_maps = !value.sequence().maps.empty();
      if (of_maps && info.map_key == DataType::kUndefined) return InvalidArgument(where + " must be a sequence of tensors");
      if (!of_maps && info.map_key != DataType::kUndefined && !value.sequence().tensors.empty()) {
        return InvalidArgument(where + " must be a sequence of maps");
      }
      if (of_maps && !value.sequence().tensors.empty()) {
        return InvalidArgument(where + " holds both tensors and maps: a sequence holds one kind");
      }
      for (const Map& map : value.sequence().maps) ONNXFLOW_RETURN_IF_ERROR(CheckMap(where, info, map));
      // The sequence ops read each element as the sequence's type: an undefined tensor or one of
      // another type from a C++ caller would be read as what it is not.
      const DataType elem = value.sequence().elem_type;
      if (!of_maps && elem != DataType::kUndefined && info.dtype != DataType::kUndefined && elem != info.dtype) {
        return InvalidArgument(where + " is a sequence of " + DataTypeName(elem) + ", the model expects " +
                               DataTypeName(info.dtype));
      }
      for (const Tensor& t : value.sequence().tensors) {
        if (!t.defined()) return InvalidArgument(where + " holds an undefined tensor");
        if (t.dtype() != elem) {
          return InvalidArgument(where + " holds a " + DataTypeName(t.dtype()) + " tensor in a sequence of " +
                                 DataTypeName(elem) + " (Sequence::elem_type)");
        }
      }
      return Status::Ok();
    }
    if (value.is_map()) return CheckMap(where, info, value.map());
    const Tensor& t = value.tensor();
    if (!t.defined()) {
      return InvalidArgument(where + " is an undefined tensor (Tensor::FromVector refuses values whose count does "
                                     "not match the shape)");
    }
    if (info.dtype != DataType::kUndefined && t.dtype() != info.dtype) {
      return InvalidArgument(where + " has type " + DataTypeName(t.dtype()) + ", the model expects " +
                             DataTypeName(info.dtype));
    }
    if (!info.has_shape) return Status::Ok();
    bool fits = t.rank() == static_cast<int64_t>(info.shape.size());
    for (size_t d = 0; fits && d < info.shape.size(); ++d) fits = info.shape[d] < 0 || info.shape[d] == t.dim(d);
    if (!fits) {
      std::string expected = "[";
      for (size_t d = 0; d < info.shape.size(); ++d) {
        expected += (d ? "," : "") + (info.shape[d] < 0 ? (info.dim_names[d].empty() ? "?" : info.dim_names[d])
                                                        : std::to_string(info.shape[d]));
      }
      return InvalidArgument(where + " has shape " + ShapeToString(t.shape()) + ", the model expects " + expected + "]");
    }
    return Status::Ok();
  }

  SessionOptions options_;
  int threads_ = 1;
  std::shared_ptr<ThreadPool> pool_;
  std::unique_ptr<Plan> plan_;
  std::unique_ptr<Executor> executor_;
  std::vector<ValueInfo> inputs_;
  std::vector<bool> has_initializer_;  // per plan input: an initializer gives its default
  std::map<std::string, std::pair<int, int>> input_slot_;  // name -> (slot, index in plan inputs)
  std::map<std::string, size_t> output_index_;             // name -> index in plan outputs
  std::map<int, int> producer_;                            // slot -> the plan node writing it
  ModelMetadata metadata_;
  mutable std::shared_mutex selections_mutex_;
  mutable std::map<std::string, std::shared_ptr<const Selection>> selections_;
};

Session::Session(std::shared_ptr<const SessionImpl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

namespace {

// Nothing may escape the public API: a bug that throws becomes an Internal status.
template <typename F>
auto Guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory");
  } catch (const std::exception& e) {
    return Internal(std::string("unexpected exception: ") + e.what());
  }
}

}  // namespace

// Before a load parses the model, the free buffers the pools keep for runs (tensor.cc, the GEMM's
// free list) go back to the system, so the load's transient copy of the weights takes their place
// instead of adding to them: a second session of Inception v1 peaked 28 MB above the first one's
// resident set with the pools kept, 1.27x one session's peak (shared_weights_test). The first runs
// afterwards refill the pools, as after an idle second (idle_release.h).
void MakeRoomForLoad() {
  ReleasePooledStorage();
  ReleaseAlignedFloats();
  malloc_trim(0);
}

// The built-in kernels, or those and the host's (custom_op.h).
Result<const KernelRegistry*> RegistryFor(const SessionOptions& options) {
  if (options.custom_ops == nullptr) return &GlobalKernelRegistry();
  return CustomOpSetAccess::Registry(*options.custom_ops);
}

Result<Session> Session::Load(const std::string& path, const SessionOptions& options) {
  return Guarded([&]() -> Result<Session> {
    ONNXFLOW_ASSIGN_OR_RETURN(const KernelRegistry* registry, RegistryFor(options));
    MakeRoomForLoad();
    ONNXFLOW_ASSIGN_OR_RETURN(auto model, graph::LoadModelFile(path, options, *registry));
    ONNXFLOW_ASSIGN_OR_RETURN(auto impl, SessionImpl::Create(std::move(model), options, *registry));
    return Session(std::move(impl));
  });
}

Result<Session> Session::LoadFromBytes(const std::string& bytes, const SessionOptions& options,
                                       const std::string& directory) {
  return Guarded([&]() -> Result<Session> {
    ONNXFLOW_ASSIGN_OR_RETURN(const KernelRegistry* registry, RegistryFor(options));
    MakeRoomForLoad();
    ONNXFLOW_ASSIGN_OR_RETURN(auto model, graph::LoadModelBytes(bytes, directory, options, *registry));
    ONNXFLOW_ASSIGN_OR_RETURN(auto impl, SessionImpl::Create(std::move(model), options, *registry));
    return Session(std::move(impl));
  });
}

Result<std::vector<NamedValue>> Session::Run(const std::vector<NamedValue>& inputs, const RunOptions& options) const {
  return Guarded([&] { return impl_->Run(inputs, options); });
}

Result<std::vector<NamedValue>> Session::Run(const std::vector<NamedValue>& inputs,
                                             const std::vector<std::string>& output_names,
                                             const RunOptions& options) const {
  return Guarded([&] { return impl_->Run(inputs, output_names, options); });
}

const Value* FindValue(const std::vector<NamedValue>& values, const std::string& name) {
  for (const NamedValue& v : values) {
    if (v.name == name) return &v.value;
  }
  return nullptr;
}

// The run waits for its place without holding a thread; once admitted it goes to the pool.
void Session::RunAsync(std::vector<NamedValue> inputs, RunOptions options, RunCallback done) const {
  auto impl = impl_;
  impl->pool().gate.EnterAsync([impl, inputs = std::move(inputs), options, done = std::move(done)](int executing) {
    impl->pool().arena.enqueue(MakeTsanVisible([impl, inputs, options, done, executing] {
      done(Guarded([&] { return impl->RunAdmitted(inputs, options, executing); }));
    }));
  });
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->inputs(); }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->outputs(); }
const ModelMetadata& Session::metadata() const { return impl_->metadata(); }

namespace {

// Checks that `result` fits the caller's buffer `into` and, with `write`, copies it there.
Status WriteInto(const std::string& name, const Value& result, Value& into, bool write) {
  if (into.is_none()) {
    if (write) into = result;
    return Status::Ok();
  }
  const std::string where = "output '" + name + "'";
  if (!result.is_tensor()) return InvalidArgument(where + " is not a tensor, so it cannot be written into a buffer");
  if (!into.is_tensor()) return InvalidArgument("the buffer given for " + where + " is not a tensor");
  const Tensor& r = result.tensor();
  Tensor& t = into.mutable_tensor();
  if (t.dtype() != r.dtype()) {
    return InvalidArgument(where + " has type " + DataTypeName(r.dtype()) + ", the buffer given for it has type " +
                           DataTypeName(t.dtype()));
  }
  if (t.shape() != r.shape()) {
    return InvalidArgument(where + " has shape " + ShapeToString(r.shape()) + ", the buffer given for it has shape " +
                           ShapeToString(t.shape()));
  }
  if (!write || t.raw_data() == r.raw_data()) return Status::Ok();
  if (r.dtype() == DataType::kString) {
    for (int64_t i = 0; i < r.size(); ++i) t.mutable_data<std::string>()[i] = r.data<std::string>()[i];
  } else if (r.nbytes() > 0) {
    std::memcpy(t.mutable_raw_data(), r.raw_data(), r.nbytes());
  }
  return Status::Ok();
}

}  // namespace

Status Session::RunInto(const std::vector<NamedValue>& inputs, std::vector<NamedValue>& outputs,
                        const RunOptions& options) const {
  return Guarded([&]() -> Status {
    std::vector<std::string> names;
    names.reserve(outputs.size());
    for (const NamedValue& o : outputs) names.push_back(o.name);
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<NamedValue> results, impl_->Run(inputs, names, options));
    // Every buffer is checked before any is written: a refused call leaves all of them as they were.
    for (size_t i = 0; i < outputs.size(); ++i) {
      ONNXFLOW_RETURN_IF_ERROR(WriteInto(outputs[i].name, results[i].value, outputs[i].value, /*write=*/false));
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      ONNXFLOW_RETURN_IF_ERROR(WriteInto(outputs[i].name, results[i].value, outputs[i].value, /*write=*/true));
    }
    return Status::Ok();
  });
}

}  // namespace onnxflow
