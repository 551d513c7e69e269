#include "server/grpc_frontend.h"

#include <grpcpp/grpcpp.h>

#include <limits>

#include "server/inference.grpc.pb.h"
#include "server/tensor_codec.h"

namespace onnxflow::server {

using Clock = std::chrono::steady_clock;

namespace {

grpc::Status ToGrpc(const ApiStatus& s) {
  switch (s.code) {
    case ApiCode::kOk: return grpc::Status::OK;
    case ApiCode::kBadRequest: return {grpc::StatusCode::INVALID_ARGUMENT, s.message};
    case ApiCode::kNotFound: return {grpc::StatusCode::NOT_FOUND, s.message};
    case ApiCode::kUnavailable: return {grpc::StatusCode::UNAVAILABLE, s.message};
    case ApiCode::kDeadline: return {grpc::StatusCode::DEADLINE_EXCEEDED, s.message};
    case ApiCode::kTooLarge: return {grpc::StatusCode::RESOURCE_EXHAUSTED, s.message};
    case ApiCode::kInternal: return {grpc::StatusCode::INTERNAL, s.message};
  }
  return {grpc::StatusCode::INTERNAL, s.message};
}

template <typename Repeated, typename T>
Status CopyContents(const std::string& name, const Repeated& items, Tensor* t) {
  T* out = t->mutable_data<T>();
  for (int i = 0; i < items.size(); ++i) {
    const auto v = items.Get(i);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        return InvalidArgument("input '" + name + "': element " + std::to_string(i) + " is out of range for its datatype");
      }
    }
    out[i] = static_cast<T>(v);
  }
  return Status::Ok();
}

Result<Tensor> TensorFromContents(const std::string& name, DataType dtype, const Shape& shape,
                                  const inference::InferTensorContents& c, int64_t max_bytes) {
  ONNXFLOW_ASSIGN_OR_RETURN(const int64_t count, CheckedElementCount(name, dtype, shape, max_bytes));
  int64_t given = 0;
  switch (dtype) {
    case DataType::kBool: given = c.bool_contents_size(); break;
    case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: given = c.int_contents_size(); break;
    case DataType::kInt64: given = c.int64_contents_size(); break;
    case DataType::kUint8: case DataType::kUint16: case DataType::kUint32: given = c.uint_contents_size(); break;
    case DataType::kUint64: given = c.uint64_contents_size(); break;
    case DataType::kFloat: given = c.fp32_contents_size(); break;
    case DataType::kDouble: given = c.fp64_contents_size(); break;
    case DataType::kString: given = c.bytes_contents_size(); break;
    default:
      return InvalidArgument("input '" + name + "': datatype " + DatatypeName(dtype) + " must come in raw_input_contents");
  }
  if (given != count) {
    return InvalidArgument("input '" + name + "' has " + std::to_string(given) + " elements in its contents, shape " +
                           ShapeToString(shape) + " needs " + std::to_string(count));
  }
  Tensor t = Tensor::Uninitialized(dtype, shape);
  switch (dtype) {
    case DataType::kBool: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.bool_contents()), bool>(name, c.bool_contents(), &t))); break;
    case DataType::kInt8: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.int_contents()), int8_t>(name, c.int_contents(), &t))); break;
    case DataType::kInt16: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.int_contents()), int16_t>(name, c.int_contents(), &t))); break;
    case DataType::kInt32: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.int_contents()), int32_t>(name, c.int_contents(), &t))); break;
    case DataType::kInt64: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.int64_contents()), int64_t>(name, c.int64_contents(), &t))); break;
    case DataType::kUint8: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.uint_contents()), uint8_t>(name, c.uint_contents(), &t))); break;
    case DataType::kUint16: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.uint_contents()), uint16_t>(name, c.uint_contents(), &t))); break;
    case DataType::kUint32: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.uint_contents()), uint32_t>(name, c.uint_contents(), &t))); break;
    case DataType::kUint64: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.uint64_contents()), uint64_t>(name, c.uint64_contents(), &t))); break;
    case DataType::kFloat: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.fp32_contents()), float>(name, c.fp32_contents(), &t))); break;
    case DataType::kDouble: ONNXFLOW_RETURN_IF_ERROR((CopyContents<decltype(c.fp64_contents()), double>(name, c.fp64_contents(), &t))); break;
    case DataType::kString:
      for (int i = 0; i < c.bytes_contents_size(); ++i) t.mutable_data<std::string>()[i] = c.bytes_contents(i);
      break;
    default: break;
  }
  return t;
}

ApiStatus DecodeRequest(const inference::ModelInferRequest& in, int64_t max_bytes, InferRequest* r) {
  r->model_name = in.model_name();
  r->model_version = in.model_version();
  r->id = in.id();
  if (in.inputs_size() == 0) return BadRequest("the request has no inputs");
  const bool raw = in.raw_input_contents_size() > 0;
  if (raw && in.raw_input_contents_size() != in.inputs_size()) {
    return BadRequest("raw_input_contents has " + std::to_string(in.raw_input_contents_size()) + " entries for " +
                      std::to_string(in.inputs_size()) + " inputs");
  }
  for (int i = 0; i < in.inputs_size(); ++i) {
    const auto& input = in.inputs(i);
    const DataType dtype = ParseDatatype(input.datatype());
    if (dtype == DataType::kUndefined) {
      return BadRequest("input '" + input.name() + "' has an unknown datatype '" + input.datatype() + "'");
    }
    const Shape shape(input.shape().begin(), input.shape().end());
    Result<Tensor> t = raw ? TensorFromRaw(input.name(), dtype, shape, in.raw_input_contents(i), max_bytes)
                           : TensorFromContents(input.name(), dtype, shape, input.contents(), max_bytes);
    if (!t.ok()) return FromStatus(t.status());
    r->inputs.push_back({input.name(), std::move(*t)});
  }
  for (const auto& out : in.outputs()) r->outputs.push_back({out.name(), true});
  auto timeout = in.parameters().find("timeout");
  if (timeout != in.parameters().end() && timeout->second.has_int64_param() && timeout->second.int64_param() >= 0) {
    r->deadline = std::min(r->deadline, Clock::now() + std::chrono::microseconds(timeout->second.int64_param()));
  }
  return ApiStatus::Ok();
}

ApiStatus EncodeResponse(const InferResponse& r, inference::ModelInferResponse* out) {
  out->set_model_name(r.model_name);
  out->set_model_version(r.model_version);
  out->set_id(r.id);
  for (const NamedValue& o : r.outputs) {
    if (!o.value.is_tensor()) return BadRequest("output '" + o.name + "' is not a tensor");
    const Tensor& t = o.value.tensor();
    const char* datatype = DatatypeName(t.dtype());
    if (!*datatype) return BadRequest("output '" + o.name + "' has a datatype the protocol lacks");
    auto* tensor = out->add_outputs();
    tensor->set_name(o.name);
    tensor->set_datatype(datatype);
    for (int64_t d : t.shape()) tensor->add_shape(d);
    std::string* raw = out->add_raw_output_contents();
    raw->reserve(RawSize(t));
    AppendRaw(t, raw);
  }
  return ApiStatus::Ok();
}

}  // namespace

class GrpcService final : public inference::GRPCInferenceService::CallbackService {
 public:
  explicit GrpcService(InferenceServer* server) : server_(server) {}

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* ctx, const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* response) override {
    response->set_live(true);
    return Done(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* ctx, const inference::ServerReadyRequest*,
                                        inference::ServerReadyResponse* response) override {
    response->set_ready(server_->ready());
    return Done(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* ctx, const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override {
    response->set_ready(server_->ModelReady(request->name(), request->version()));
    return Done(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* ctx, const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* response) override {
    response->set_name(kServerName);
    response->set_version(kServerVersion);
    for (const auto& e : InferenceServer::Extensions()) response->add_extensions(e);
    return Done(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* ctx, const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override {
    server::ModelMetadata m;
    ApiStatus s = server_->GetModelMetadata(request->name(), request->version(), &m);
    if (!s.ok()) return Done(ctx, ToGrpc(s));
    response->set_name(m.name);
    for (const auto& v : m.versions) response->add_versions(v);
    response->set_platform(m.platform);
    auto fill = [](const TensorMetadata& t, inference::ModelMetadataResponse::TensorMetadata* out) {
      out->set_name(t.name);
      out->set_datatype(t.datatype);
      for (int64_t d : t.shape) out->add_shape(d);
    };
    for (const auto& t : m.inputs) fill(t, response->add_inputs());
    for (const auto& t : m.outputs) fill(t, response->add_outputs());
    return Done(ctx, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* ctx, const inference::ModelInferRequest* request,
                                       inference::ModelInferResponse* response) override {
    auto* reactor = ctx->DefaultReactor();
    InferRequest r;
    ApiStatus s = DecodeRequest(*request, server_->options().max_request_bytes, &r);
    if (!s.ok()) {
      reactor->Finish(ToGrpc(s));
      return reactor;
    }
    // The client's deadline (grpc-timeout) on the system clock; runs measure the steady one.
    const auto deadline = ctx->deadline();
    const auto now = std::chrono::system_clock::now();
    if (deadline < now + std::chrono::hours(24 * 365)) {
      r.deadline = std::min(r.deadline, Clock::now() + std::chrono::duration_cast<Clock::duration>(deadline - now));
    }
    server_->Infer(std::move(r), Protocol::kGrpc, [reactor, response](ApiStatus status, InferResponse out) {
      if (status.ok()) status = EncodeResponse(out, response);
      reactor->Finish(ToGrpc(status));
    });
    return reactor;
  }

 private:
  static grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* ctx, const grpc::Status& status) {
    auto* reactor = ctx->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }

  InferenceServer* const server_;
};

GrpcFrontend::GrpcFrontend(InferenceServer* server) : server_(server), service_(std::make_unique<GrpcService>(server)) {}
GrpcFrontend::~GrpcFrontend() = default;

Result<int> GrpcFrontend::Start(const std::string& host, int port) {
  grpc::ServerBuilder builder;
  int selected = 0;
  const std::string address = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &selected);
  builder.RegisterService(service_.get());
  const int64_t limit = server_->options().max_request_bytes;
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<int64_t>(limit, std::numeric_limits<int>::max())));
  builder.SetMaxSendMessageSize(std::numeric_limits<int>::max());
  grpc_ = builder.BuildAndStart();
  if (!grpc_ || selected == 0) return InvalidArgument("cannot serve gRPC on " + address);
  return selected;
}

void GrpcFrontend::Shutdown(std::chrono::system_clock::time_point deadline) {
  if (!grpc_) return;
  grpc_->Shutdown(deadline);
  grpc_->Wait();
}

}  // namespace onnxflow::server
