#include "server/inference_server.h"

#include <set>

#include "server/tensor_codec.h"

namespace onnxflow::server {

using Clock = std::chrono::steady_clock;

InferenceServer::InferenceServer(std::string repository_root, ServerOptions options)
    : options_(options), repository_(std::move(repository_root), &metrics_) {}

std::vector<std::string> InferenceServer::Extensions() { return {"binary_tensor_data", "model_repository", "metrics"}; }

namespace {

TensorMetadata MetadataOf(const ValueInfo& info) {
  TensorMetadata t;
  t.name = info.name;
  t.datatype = DatatypeName(info.dtype);
  if (t.datatype.empty()) t.datatype = info.kind == Value::Kind::kTensor ? DataTypeName(info.dtype)
                       : info.kind == Value::Kind::kMap  ? "MAP"
                                                         : "SEQUENCE";
  t.shape = info.has_shape ? info.shape : std::vector<int64_t>{-1};
  return t;
}

}  // namespace

ApiStatus InferenceServer::GetModelMetadata(const std::string& name, const std::string& version,
                                            ModelMetadata* out) const {
  ApiStatus error;
  auto model = repository_.Find(name, version, &error);
  if (!model) return error;
  out->name = name;
  out->versions = repository_.Versions(name);
  out->platform = kPlatform;
  for (const ValueInfo& info : model->session->inputs()) out->inputs.push_back(MetadataOf(info));
  for (const ValueInfo& info : model->session->outputs()) out->outputs.push_back(MetadataOf(info));
  return ApiStatus::Ok();
}

bool InferenceServer::ModelReady(const std::string& name, const std::string& version) const {
  ApiStatus error;
  return repository_.Find(name, version, &error) != nullptr;
}

ApiStatus InferenceServer::Validate(const LoadedModel& model, const InferRequest& request) const {
  const auto& declared = model.session->inputs();
  std::set<std::string> seen;
  for (const NamedValue& in : request.inputs) {
    if (!seen.insert(in.name).second) return BadRequest("input '" + in.name + "' is given twice");
    auto it = std::find_if(declared.begin(), declared.end(), [&](const ValueInfo& i) { return i.name == in.name; });
    if (it == declared.end()) {
      return BadRequest("unexpected inference input '" + in.name + "' for model '" + model.name + "'");
    }
    if (it->dtype != DataType::kUndefined && in.value.is_tensor() && in.value.tensor().dtype() != it->dtype) {
      return BadRequest("input '" + in.name + "' has datatype " + DatatypeName(in.value.tensor().dtype()) +
                        ", model '" + model.name + "' expects " + MetadataOf(*it).datatype);
    }
  }
  for (const ValueInfo& info : declared) {
    if (!seen.count(info.name) && !info.optional) {
      return BadRequest("input '" + info.name + "' of model '" + model.name + "' is missing");
    }
  }
  const auto& outputs = model.session->outputs();
  for (const RequestedOutput& out : request.outputs) {
    if (std::none_of(outputs.begin(), outputs.end(), [&](const ValueInfo& o) { return o.name == out.name; })) {
      return BadRequest("unexpected inference output '" + out.name + "' for model '" + model.name + "'");
    }
  }
  return ApiStatus::Ok();
}

void InferenceServer::Finished() {
  if (in_flight_.fetch_sub(1) == 1) {
    std::lock_guard<std::mutex> lock(idle_mutex_);
    idle_.notify_all();
  }
}

bool InferenceServer::WaitIdle(Clock::time_point until) {
  std::unique_lock<std::mutex> lock(idle_mutex_);
  return idle_.wait_until(lock, until, [&] { return in_flight_.load() == 0; });
}

void InferenceServer::Infer(InferRequest request, Protocol protocol, InferCallback done) {
  if (draining_) return done(Unavailable("the server is shutting down"), {});
  ApiStatus error;
  std::shared_ptr<const LoadedModel> model = repository_.Find(request.model_name, request.model_version, &error);
  if (!model) return done(error, {});
  ModelMetrics& metrics = *model->metrics;
  const int p = static_cast<int>(protocol);
  metrics.requests[p].fetch_add(1, std::memory_order_relaxed);
  error = Validate(*model, request);
  if (error.ok() && request.deadline <= Clock::now()) error = {ApiCode::kDeadline, "the request's deadline has passed"};
  if (!error.ok()) {
    metrics.failures[p].fetch_add(1, std::memory_order_relaxed);
    return done(error, {});
  }
  in_flight_.fetch_add(1);
  metrics.queue_depth.fetch_add(1, std::memory_order_relaxed);
  const auto accepted = Clock::now();
  RunOptions run_options;
  run_options.deadline = request.deadline;
  auto finish = [this, model, p, accepted, outputs = std::move(request.outputs), id = std::move(request.id),
                 done = std::move(done)](Result<std::vector<NamedValue>> result) mutable {
    ModelMetrics& m = *model->metrics;
    ApiStatus status = FromStatus(result.status());
    InferResponse response;
    if (status.ok()) {
      response.model_name = model->name;
      response.model_version = model->version;
      response.id = std::move(id);
      if (outputs.empty()) {
        response.outputs = std::move(*result);
      } else {
        for (const RequestedOutput& want : outputs) {
          for (NamedValue& got : *result) {
            if (got.name == want.name) response.outputs.push_back(got);
          }
        }
      }
    }
    if (!status.ok()) m.failures[p].fetch_add(1, std::memory_order_relaxed);
    m.latency.Observe(std::chrono::duration<double>(Clock::now() - accepted).count());
    m.queue_depth.fetch_sub(1, std::memory_order_relaxed);
    done(std::move(status), std::move(response));
    // Last: once in_flight_ reaches zero the process may exit, so nothing may follow this.
    Finished();
  };
  if (model->batcher) {
    model->batcher->Submit(std::move(request.inputs), run_options, std::move(finish));
  } else {
    metrics.batch_size.Observe(1);
    model->session->RunAsync(std::move(request.inputs), run_options, std::move(finish));
  }
}

}  // namespace onnxflow::server
