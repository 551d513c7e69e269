#include "graph/model.h"

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "graph/blocked_half.h"
#include "graph/blocked_layout.h"
#include "graph/conv1d_as_2d.h"
#include "graph/functions.h"
#include "graph/fusion_util.h"
#include "graph/fusion.h"
#include "graph/half_compute.h"
#include "graph/outer_scope.h"
#include "graph/passes.h"
#include "graph/qdq_fusion.h"
#include "graph/quant_layout.h"
#include "graph/scope_names.h"
#include "graph/type_inference.h"

namespace onnxflow::graph {
namespace {

// Protobuf's own recursion limit (100) would refuse legitimately nested subgraphs; ours is set
// from the subgraph depth limit (each level of nesting costs a few message levels).
Status Parse(google::protobuf::io::CodedInputStream& input, const SessionLimits& limits, onnx::ModelProto* model) {
  input.SetRecursionLimit(std::max(100, 6 * limits.max_subgraph_depth + 16));
  if (!model->ParseFromCodedStream(&input) || !input.ConsumedEntireMessage()) {
    return InvalidArgument("the file is not a valid ONNX model (protobuf parse failed)");
  }
  return Status::Ok();
}

Status Parse(const std::string& bytes, const SessionLimits& limits, onnx::ModelProto* model) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    return InvalidArgument("the model is larger than 2 GiB; keep its weights in external data");
  }
  google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  return Parse(input, limits, model);
}

Status CheckVersions(const onnx::ModelProto& model, OpsetMap* opsets) {
  if (!model.has_ir_version()) return InvalidArgument("the model has no ir_version");
  const int64_t ir = model.ir_version();
  if (ir < kMinIrVersion || ir > kMaxIrVersion) {
    return InvalidArgument("IR version " + std::to_string(ir) + " is not supported (supported: " +
                           std::to_string(kMinIrVersion) + " to " + std::to_string(kMaxIrVersion) + ")");
  }
  for (const auto& imp : model.opset_import()) {
    const std::string domain = NormalizeDomain(imp.domain());
    if (imp.version() < 1 || imp.version() > 10000) {
      return InvalidArgument("opset import of domain '" + imp.domain() + "' has invalid version " + std::to_string(imp.version()));
    }
    if (!opsets->emplace(domain, static_cast<int>(imp.version())).second) {
      return InvalidArgument("domain '" + imp.domain() + "' is imported twice");
    }
  }
  if (model.opset_import_size() == 0) {
    if (ir >= 3) return InvalidArgument("the model imports no opset (IR version 3 and later must)");
    opsets->emplace("", 1);
  }
  auto onnx = opsets->find("");
  if (onnx != opsets->end() && onnx->second > kMaxOnnxOpset) {
    return Unimplemented("the model imports opset " + std::to_string(onnx->second) +
                         " of the default domain; onnxflow supports up to " + std::to_string(kMaxOnnxOpset));
  }
  return Status::Ok();
}

// The ModelProto fields that describe the model (producer, versions, doc strings, metadata_props,
// opset imports, the graph's name and doc string) without its nodes, weights or functions.
onnx::ModelProto ModelHeader(const onnx::ModelProto& model) {
  onnx::ModelProto header;
  header.set_ir_version(model.ir_version());
  header.set_producer_name(model.producer_name());
  header.set_producer_version(model.producer_version());
  header.set_domain(model.domain());
  header.set_model_version(model.model_version());
  header.set_doc_string(model.doc_string());
  *header.mutable_metadata_props() = model.metadata_props();
  *header.mutable_opset_import() = model.opset_import();
  header.mutable_graph()->set_name(model.graph().name());
  header.mutable_graph()->set_doc_string(model.graph().doc_string());
  return header;
}

Result<std::unique_ptr<Model>> Load(std::unique_ptr<Model> model, const SessionOptions& options,
                                    const KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(CheckVersions(model->proto, &model->opsets));
  if (!model->proto.has_graph()) return InvalidArgument("the model has no graph");
  onnx::ModelProto header = ModelHeader(model->proto);  // as the file says, before functions are inlined
  ONNXFLOW_RETURN_IF_ERROR(InlineFunctions(&model->proto, &model->opsets, registry));
  // A subgraph's reuse of an enclosing name, as ONNX Runtime writes and reads it (scope_names.h).
  RenameShadowedNames(model->proto.mutable_graph());
  // The main graph's parsed weights go as the graph takes its copies (the proto is swapped for its
  // header below anyway).
  BuildContext ctx{&model->opsets, &options.limits, model->external.get(), model->proto.mutable_graph()};
  ONNXFLOW_ASSIGN_OR_RETURN(model->graph, BuildGraph(model->proto.graph(), {}, ctx, 0));
  // Types through the graph, subgraphs included, before any kernel is created or any pass runs.
  ONNXFLOW_RETURN_IF_ERROR(InferTypes(model->graph.get()));
  // The graph holds its own copies of the nodes and initializers: the parsed model, as big as the
  // weights, would otherwise stay resident beside them for the session's life.
  // What stays is the model's description (Session::metadata): a few strings.
  header.Swap(&model->proto);
  // Every node has a kernel, or the model is refused now, on the nodes as written and before any
  // pass (the plan still refuses what a kernel's factory finds unsupported).
  ONNXFLOW_RETURN_IF_ERROR(CheckKernelsExist(*model->graph, registry));
  if (options.optimize) {
    // Subgraphs' reads of enclosing constants become constants of their own, before any pass
    // looks for constants there (a merged decoder's weights, read inside an If's branches).
    InheritOuterScope(model->graph.get());
    // First, so that every pass after it sees a 16-bit float model as the float model it runs as.
    ONNXFLOW_RETURN_IF_ERROR(
        ComputeHalfInFloat(model->graph.get(), model->opsets.count("") ? model->opsets.at("") : 0));
    // Before folding, which would turn the int8 weights behind DequantizeLinear into float ones;
    // after the Constant nodes became constants, as an exporter may write weights or a Clip's
    // bounds: int8 weights in a Constant node were folded to float and ran as a float Conv, and a
    // QDQ MobileNetV2's ReLU6, bounds Constant -> Q -> DQ, stayed DQ -> Clip -> Q, three float
    // passes over each expanded map (5.4 -> 2.5 ms a run on one core).
    ONNXFLOW_RETURN_IF_ERROR(FoldConstantNodes(model->graph.get(), registry, options.limits));
    ONNXFLOW_RETURN_IF_ERROR(FuseQdq(model->graph.get()));
    // Hands what it folds down to the subgraphs that read it, and folds there again.
    ONNXFLOW_RETURN_IF_ERROR(FoldConstants(model->graph.get(), registry, options.limits));
    ONNXFLOW_RETURN_IF_ERROR(FuseForInference(model->graph.get()));
    ONNXFLOW_RETURN_IF_ERROR(LiftConv1dTo2d(model->graph.get()));  // 1-D convolutions join the layouts below
    ONNXFLOW_RETURN_IF_ERROR(UseBlockedLayout(model->graph.get()));
    ONNXFLOW_RETURN_IF_ERROR(
        StoreBlockedValuesInHalf(model->graph.get(), model->opsets.count("") ? model->opsets.at("") : 0));
    ONNXFLOW_RETURN_IF_ERROR(UseChannelsLastQuant(model->graph.get()));
    RemoveDeadNodes(model->graph.get());
    // Initializers the passes replaced (a Conv's weights before BatchNormalization was folded
    // into them) are read by nothing now; their storage goes before the kernels pack theirs, and
    // with it the buffers the passes freed. The names stay: an initializer is an optional input.
    for (auto& [name, tensor] : model->graph->constants) {
      if (model->graph->nodes.ReadCount(name) == 0) tensor = Tensor();
    }
    ReleasePooledStorage();
  }
  // A graph input that nothing reads need not be given (ONNX Runtime saves models whose folded
  // initializers leave such inputs behind, without their initializers).
  for (ValueInfo& input : model->graph->inputs) input.unread = model->graph->nodes.ReadCount(input.name) == 0;
  return model;
}

// The parsed model, its external data resolved against `directory`; Load takes it from there.
Result<std::unique_ptr<Model>> ParseModel(const std::string& bytes, const std::string& directory,
                                          const SessionLimits& limits) {
  auto model = std::make_unique<Model>();
  ONNXFLOW_RETURN_IF_ERROR(Parse(bytes, limits, &model->proto));
  model->external = std::make_unique<ExternalDataFiles>(directory);
  return model;
}

}  // namespace

Result<std::unique_ptr<Model>> LoadModelBytes(const std::string& bytes, const std::string& directory,
                                              const SessionOptions& options, const KernelRegistry& registry) {
  ONNXFLOW_ASSIGN_OR_RETURN(auto model, ParseModel(bytes, directory, options.limits));
  return Load(std::move(model), options, registry);
}

Result<std::unique_ptr<Model>> LoadModelFile(const std::string& path, const SessionOptions& options,
                                             const KernelRegistry& registry) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return InvalidArgument("'" + path + "' is a directory, not a model file");
  // Parsed straight from the file, a block at a time: the whole file in memory beside the parsed
  // model would double the load's peak (a second session of a 28 MB model peaked 28 MB higher).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound("cannot open model file '" + path + "'");
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > static_cast<off_t>(INT32_MAX)) {
    ::close(fd);
    return InvalidArgument("the model is larger than 2 GiB; keep its weights in external data").WithContext(path);
  }
  auto model = std::make_unique<Model>();
  Status parsed;
  {
    google::protobuf::io::FileInputStream stream(fd);
    stream.SetCloseOnDelete(true);
    google::protobuf::io::CodedInputStream input(&stream);
    parsed = Parse(input, options.limits, &model->proto);
    if (stream.GetErrno() != 0) parsed = InvalidArgument("cannot read model file '" + path + "'");
  }
  if (!parsed.ok()) return parsed.WithContext(path);
  const size_t slash = path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  model->external = std::make_unique<ExternalDataFiles>(directory);
  auto loaded = Load(std::move(model), options, registry);
  if (!loaded.ok()) return loaded.status().WithContext(path);
  return loaded;
}

}  // namespace onnxflow::graph
