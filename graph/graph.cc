#include "graph/graph.h"

#include <cstring>
#include <optional>
#include <unordered_set>

#include "graph/external_data.h"
#include "graph/schema/schema.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/framework/tensor_proto.h"

namespace onnxflow::graph {

std::string Node::Label() const {
  const std::string& name = proto->name();
  return name.empty() ? op_type() + " node" : "node '" + name + "' (" + op_type() + ")";
}

std::string Node::Describe() const {
  std::string s = Label();
  for (size_t i = 0; i < fused_from.size(); ++i) s += (i == 0 ? ", fused from " : ", ") + fused_from[i];
  if (fused_count > fused_from.size()) s += " and " + std::to_string(fused_count - fused_from.size()) + " more";
  return s;
}

bool IsGraphInput(const Graph& g, const std::string& name) {
  for (const ValueInfo& in : g.inputs) {
    if (in.name == name) return true;
  }
  return false;
}

ValueInfo ToValueInfo(const onnx::ValueInfoProto& info) {
  ValueInfo v;
  v.name = info.name();
  const onnx::TypeProto* type = &info.type();
  if (type->has_optional_type()) {
    v.optional = true;
    type = &type->optional_type().elem_type();
  }
  const onnx::TensorShapeProto* shape = nullptr;
  // A map's key type, and its value type as dtype (ai.onnx.ml's maps hold tensors of one element).
  auto read_map = [&v](const onnx::TypeProto_Map& map) {
    v.map_key = static_cast<DataType>(map.key_type());
    if (!IsValidDataType(map.key_type())) v.map_key = DataType::kUndefined;
    if (map.value_type().has_tensor_type()) v.dtype = static_cast<DataType>(map.value_type().tensor_type().elem_type());
  };
  if (type->has_sequence_type()) {
    v.kind = Value::Kind::kSequence;
    const auto& elem = type->sequence_type().elem_type();
    if (elem.has_tensor_type()) v.dtype = static_cast<DataType>(elem.tensor_type().elem_type());
    if (elem.has_map_type()) read_map(elem.map_type());
  } else if (type->has_map_type()) {
    v.kind = Value::Kind::kMap;
    read_map(type->map_type());
  } else if (type->has_tensor_type()) {
    v.kind = Value::Kind::kTensor;
    v.dtype = static_cast<DataType>(type->tensor_type().elem_type());
    if (type->tensor_type().has_shape()) shape = &type->tensor_type().shape();
  }
  if (!IsValidDataType(static_cast<int32_t>(v.dtype))) v.dtype = DataType::kUndefined;
  if (shape != nullptr) {
    v.has_shape = true;
    for (const auto& d : shape->dim()) {
      const bool fixed = d.has_dim_value() && d.dim_value() >= 0;
      v.shape.push_back(fixed ? d.dim_value() : -1);
      v.dim_names.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
  }
  return v;
}

namespace {

// Frees the bytes a TensorProto holds (clear() would keep the capacity), keeping its name, type and dims.
void ReleaseTensorData(onnx::TensorProto* t) {
  std::string().swap(*t->mutable_raw_data());
  t->clear_raw_data();
  google::protobuf::RepeatedField<float>().Swap(t->mutable_float_data());
  google::protobuf::RepeatedField<double>().Swap(t->mutable_double_data());
  google::protobuf::RepeatedField<int32_t>().Swap(t->mutable_int32_data());
  google::protobuf::RepeatedField<int64_t>().Swap(t->mutable_int64_data());
  google::protobuf::RepeatedField<uint64_t>().Swap(t->mutable_uint64_data());
  google::protobuf::RepeatedPtrField<std::string>().Swap(t->mutable_string_data());
}

// The shape of tensor `t` when `bytes` bytes are exactly its elements in memory order: a
// whole-byte element type (little-endian like the file), not segmented, within `max_bytes`.
std::optional<Shape> BytesAreElements(const onnx::TensorProto& t, size_t bytes, int64_t max_bytes) {
  if (!IsValidDataType(t.data_type()) || t.has_segment()) return std::nullopt;
  const DataType dtype = static_cast<DataType>(t.data_type());
  switch (dtype) {
    case DataType::kString: case DataType::kUint4: case DataType::kInt4: case DataType::kFloat4E2M1:
    case DataType::kUint2: case DataType::kInt2: case DataType::kUndefined:
      return std::nullopt;
    default:
      break;
  }
  Shape shape(t.dims().begin(), t.dims().end());
  const Result<int64_t> count = CheckedElementCount(shape);
  if (!count.ok() || *count > max_bytes / static_cast<int64_t>(ElementSize(dtype)) ||
      static_cast<size_t>(*count) * ElementSize(dtype) != bytes) {
    return std::nullopt;
  }
  return shape;
}

// The initializer's raw bytes become its tensor's storage, with no copy, when they are exactly
// the tensor's bytes in memory order (whole-byte element types, little-endian like the file) and
// the proto is the loader's own (BuildContext::consumable). Otherwise nullopt: TensorFromProto
// copies them, and says what is wrong with a malformed one. The storage is the string's heap
// buffer: 16-byte aligned, as a host's borrowed input may be too; only large tensors are adopted,
// small ones go to the 64-byte aligned pool.
std::optional<Tensor> AdoptRawData(onnx::TensorProto* t, int64_t max_bytes) {
  constexpr size_t kMinAdopted = 4096;
  if (t->data_location() == onnx::TensorProto::EXTERNAL || !t->has_raw_data() || t->raw_data().size() < kMinAdopted) {
    return std::nullopt;
  }
  std::optional<Shape> shape = BytesAreElements(*t, t->raw_data().size(), max_bytes);
  if (!shape) return std::nullopt;
  const DataType dtype = static_cast<DataType>(t->data_type());
  auto bytes = std::make_shared<std::string>();
  bytes->swap(*t->mutable_raw_data());
  t->clear_raw_data();
  void* data = bytes->data();
  return Tensor(dtype, std::move(*shape), std::shared_ptr<void>(bytes, data), data);
}

// An external tensor whose bytes are exactly its elements (BytesAreElements): copied a slice at a
// time, each slice's file pages let go once copied, so a single large tensor (an LLM's embedding
// table) is not resident twice. Nothing for any other tensor: TensorFromProto copies it whole and
// says what is wrong with it.
std::optional<Tensor> CopyExternalBytes(const onnx::TensorProto& t, std::string_view bytes, const BuildContext& ctx) {
  // 8 MiB slices: the file's pages in flight stay small next to the tensor.
  constexpr size_t kSlice = size_t{8} << 20;
  std::optional<Shape> shape = BytesAreElements(t, bytes.size(), ctx.limits->max_tensor_bytes);
  if (!shape) return std::nullopt;
  Tensor tensor = Tensor::Uninitialized(static_cast<DataType>(t.data_type()), std::move(*shape));
  char* out = static_cast<char*>(tensor.mutable_raw_data());
  for (size_t at = 0; at < bytes.size(); at += kSlice) {
    const std::string_view slice = bytes.substr(at, kSlice);
    std::memcpy(out + at, slice.data(), slice.size());
    ctx.external->Release(slice);
  }
  return tensor;
}

Result<Tensor> LoadInitializer(const onnx::TensorProto& t, const BuildContext& ctx) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    if (ctx.external == nullptr) {
      return InvalidArgument("initializer '" + t.name() + "' uses external data, which is not allowed here");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(std::string_view bytes, ctx.external->Bytes(t));
    if (std::optional<Tensor> copied = CopyExternalBytes(t, bytes, ctx)) return std::move(*copied);
    Result<Tensor> tensor = TensorFromProto(t, &bytes, ctx.limits->max_tensor_bytes);
    ctx.external->Release(bytes);
    return tensor;
  }
  return TensorFromProto(t, nullptr, ctx.limits->max_tensor_bytes);
}

// A sparse initializer as a dense tensor (indices: [NNZ] linear or [NNZ, rank] coordinates).
Result<Tensor> DensifySparse(const onnx::SparseTensorProto& sp, const BuildContext& ctx) {
  const std::string name = sp.values().name();
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor values, LoadInitializer(sp.values(), ctx));
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor indices, LoadInitializer(sp.indices(), ctx));
  Shape shape(sp.dims().begin(), sp.dims().end());
  if (indices.dtype() != DataType::kInt64 || values.rank() != 1 || values.dtype() == DataType::kString) {
    return InvalidArgument("sparse initializer '" + name + "' needs int64 indices and 1-D numeric values");
  }
  // The dense size is the file's word, not its bytes: checked as a tensor's would be.
  const Result<int64_t> count = CheckedElementCount(shape);
  if (!count.ok()) {
    return InvalidArgument("sparse initializer '" + name + "' has dims " + ShapeToString(shape) + ": " +
                           count.status().message());
  }
  if (*count > ctx.limits->max_tensor_bytes / static_cast<int64_t>(ElementSize(values.dtype()))) {
    return ResourceExhausted("sparse initializer '" + name + "' of dims " + ShapeToString(shape) +
                             " would pass the limit of " + std::to_string(ctx.limits->max_tensor_bytes) +
                             " bytes per tensor (max_tensor_bytes)");
  }
  Tensor dense(values.dtype(), shape);
  const int64_t nnz = values.size(), total = dense.size();
  const size_t elem = ElementSize(values.dtype());
  const std::vector<int64_t> strides = [&] {
    std::vector<int64_t> s(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
  }();
  const bool linear = indices.rank() == 1;
  if ((linear && indices.size() != nnz) ||
      (!linear && (indices.rank() != 2 || indices.dim(0) != nnz || indices.dim(1) != static_cast<int64_t>(shape.size())))) {
    return InvalidArgument("sparse initializer '" + name + "' has indices of shape " + ShapeToString(indices.shape()));
  }
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t offset = 0;
    if (linear) {
      offset = indices.data<int64_t>()[k];
    } else {
      for (size_t d = 0; d < shape.size(); ++d) {
        const int64_t idx = indices.data<int64_t>()[k * shape.size() + d];
        if (idx < 0 || idx >= shape[d]) offset = -1;
        if (offset >= 0) offset += idx * strides[d];
      }
    }
    if (offset < 0 || offset >= total) {
      return OutOfRange("sparse initializer '" + name + "' has an index outside its shape");
    }
    std::memcpy(static_cast<char*>(dense.mutable_raw_data()) + offset * elem,
                static_cast<const char*>(values.raw_data()) + k * elem, elem);
  }
  return dense;
}

}  // namespace

Result<std::shared_ptr<Graph>> BuildGraph(const onnx::GraphProto& proto, const std::set<std::string>& outer_scope,
                                          const BuildContext& ctx, int depth) {
  if (depth > ctx.limits->max_subgraph_depth) {
    return ResourceExhausted("subgraph '" + proto.name() + "' is nested " + std::to_string(depth) +
                             " levels deep, more than the limit of " + std::to_string(ctx.limits->max_subgraph_depth));
  }
  auto g = std::make_shared<Graph>();
  g->name = proto.name();
  const std::string scope = proto.name().empty() ? "graph" : "graph '" + proto.name() + "'";

  // Everything this scope defines; SSA: each name once.
  std::unordered_set<std::string> local;
  auto define = [&](const std::string& name, const std::string& by) -> Status {
    if (name.empty()) return Status::Ok();
    if (!local.insert(name).second) return InvalidArgument(scope + ": value '" + name + "' is defined twice (again by " + by + ")");
    return Status::Ok();
  };

  for (int i = 0; i < proto.initializer_size(); ++i) {
    const onnx::TensorProto& t = proto.initializer(i);
    if (t.name().empty()) return InvalidArgument(scope + ": an initializer has no name");
    if (g->constants.count(t.name())) return InvalidArgument(scope + ": initializer '" + t.name() + "' is defined twice");
    if (&proto == ctx.consumable) {
      if (std::optional<Tensor> adopted = AdoptRawData(ctx.consumable->mutable_initializer(i), ctx.limits->max_tensor_bytes)) {
        g->known_types[t.name()] = adopted->dtype();
        g->constants.emplace(t.name(), std::move(*adopted));
        continue;
      }
    }
    auto tensor = LoadInitializer(t, ctx);
    if (!tensor.ok()) return tensor.status().WithContext(scope);
    g->known_types[t.name()] = tensor->dtype();
    g->constants.emplace(t.name(), std::move(tensor).value());
    if (&proto == ctx.consumable) ReleaseTensorData(ctx.consumable->mutable_initializer(i));
  }
  for (const auto& sp : proto.sparse_initializer()) {
    const std::string& name = sp.values().name();
    if (name.empty() || g->constants.count(name)) return InvalidArgument(scope + ": a sparse initializer has no or a duplicate name");
    auto tensor = DensifySparse(sp, ctx);
    if (!tensor.ok()) return tensor.status().WithContext(scope);
    g->known_types[name] = tensor->dtype();
    g->constants.emplace(name, std::move(tensor).value());
  }
  for (const auto& in : proto.input()) {
    if (in.name().empty()) return InvalidArgument(scope + ": a graph input has no name");
    if (in.type().has_tensor_type()) {
      const int32_t elem_type = in.type().tensor_type().elem_type();
      if (elem_type != 0 && !IsValidDataType(elem_type)) {
        return InvalidArgument(scope + ": graph input '" + in.name() + "' declares an invalid element type (" +
                               std::to_string(elem_type) + ")");
      }
      for (const auto& d : in.type().tensor_type().shape().dim()) {
        if (d.has_dim_value() && d.dim_value() < 0) {
          return InvalidArgument(scope + ": graph input '" + in.name() + "' declares a negative dimension (" +
                                 std::to_string(d.dim_value()) + ")");
        }
      }
    }
    ValueInfo info = ToValueInfo(in);
    for (const auto& other : g->inputs) {
      if (other.name == info.name) return InvalidArgument(scope + ": graph input '" + info.name + "' is declared twice");
    }
    local.insert(info.name);
    if (info.dtype != DataType::kUndefined && !g->known_types.count(info.name)) g->known_types[info.name] = info.dtype;
    g->inputs.push_back(std::move(info));
  }
  for (const auto& [name, tensor] : g->constants) local.insert(name);
  for (const auto& vi : proto.value_info()) {
    ValueInfo info = ToValueInfo(vi);
    if (info.kind == Value::Kind::kTensor && info.dtype != DataType::kUndefined) g->known_types.emplace(info.name, info.dtype);
  }
  for (int i = 0; i < proto.node_size(); ++i) {
    const auto& n = proto.node(i);
    const std::string who = n.name().empty() ? n.op_type() + " node #" + std::to_string(i) : "node '" + n.name() + "' (" + n.op_type() + ")";
    for (const auto& out : n.output()) ONNXFLOW_RETURN_IF_ERROR(define(out, who));
  }

  // Names visible to subgraphs: everything here plus everything outside.
  std::set<std::string> inner_scope = outer_scope;
  inner_scope.insert(local.begin(), local.end());

  for (int i = 0; i < proto.node_size(); ++i) {
    Node node;
    // The loader's own graph gives its nodes up (moved, not copied): a Constant node's tensor, as
    // big as a weight, was otherwise parsed once and copied once (a ViT-S whose weights are
    // Constant nodes peaked at 188 MB, against 107 MB as initializers).
    node.proto = &proto == ctx.consumable ? std::make_shared<onnx::NodeProto>(std::move(*ctx.consumable->mutable_node(i)))
                                          : std::make_shared<onnx::NodeProto>(proto.node(i));
    node.domain = NormalizeDomain(node.proto->domain());
    const std::string who = node.proto->name().empty()
                                ? node.op_type() + " node #" + std::to_string(i)
                                : "node '" + node.proto->name() + "' (" + node.op_type() + ")";
    auto opset = ctx.opsets->find(node.domain);
    if (opset == ctx.opsets->end()) {
      return InvalidArgument(who + " uses domain '" + node.proto->domain() + "', which the model does not import");
    }
    node.opset = opset->second;
    // The operator's schema, before any kernel sees the node (graph/schema).
    ONNXFLOW_RETURN_IF_ERROR(schema::CheckNode(*node.proto, node.domain, node.opset, who));
    for (const auto& name : node.proto->input()) {
      if (name.empty() || local.count(name)) continue;
      if (!outer_scope.count(name)) return InvalidArgument(who + ": input '" + name + "' is not defined");
      g->outer_names.insert(name);
    }
    std::set<std::string> implicit;
    for (const auto& a : node.proto->attribute()) {
      std::vector<const onnx::GraphProto*> bodies;
      if (a.has_g()) bodies.push_back(&a.g());
      for (const auto& sub : a.graphs()) bodies.push_back(&sub);
      for (size_t b = 0; b < bodies.size(); ++b) {
        auto sub = BuildGraph(*bodies[b], inner_scope, ctx, depth + 1);
        if (!sub.ok()) return sub.status().WithContext(who + ", attribute '" + a.name() + "'");
        for (const auto& name : (*sub)->outer_names) {
          implicit.insert(name);
          if (!local.count(name)) g->outer_names.insert(name);
        }
        const std::string key = bodies.size() == 1 ? a.name() : a.name() + "[" + std::to_string(b) + "]";
        node.subgraphs.emplace(key, std::move(sub).value());
      }
    }
    node.implicit_inputs.assign(implicit.begin(), implicit.end());
    g->nodes.Add(std::move(node), {i, 0});
  }
  for (const auto& out : proto.output()) {
    if (out.name().empty()) return InvalidArgument(scope + ": a graph output has no name");
    if (!local.count(out.name())) {
      if (!outer_scope.count(out.name())) return InvalidArgument(scope + ": output '" + out.name() + "' is not produced by any node");
      g->outer_names.insert(out.name());
    }
    g->outputs.push_back(ToValueInfo(out));
  }

  // The DAG orders the nodes; a cycle is refused.
  std::vector<std::string> output_names;
  for (const ValueInfo& out : g->outputs) output_names.push_back(out.name);
  g->nodes.SetOutputs(output_names);
  if (const auto cycle = g->nodes.Cycle(5); !cycle.empty()) {
    std::string names;
    for (size_t k = 0; k < cycle.size(); ++k) names += (k ? ", " : "") + g->nodes[cycle[k]].Describe();
    return InvalidArgument(scope + " has a cycle through " + names);
  }
  return g;
}

}  // namespace onnxflow::graph
