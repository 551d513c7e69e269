#include "server/http_frontend.h"

#include <httplib.h>

#include <future>
#include <nlohmann/json.hpp>

#include "server/tensor_codec.h"

namespace onnxflow::server {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Names and BYTES elements come from clients and may not be UTF-8; JSON output must not throw.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void Reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(Dump(body), "application/json");
}

void ReplyError(httplib::Response& res, const ApiStatus& error) {
  Reply(res, HttpStatusOf(error.code), json{{"error", error.message}});
}

// The model name and version captured by a route "/v2/models/NAME[/versions/V]...".
std::string Match(const httplib::Request& req, size_t i) {
  return i < req.matches.size() ? req.matches[i].str() : std::string();
}

ApiStatus ParseShape(const json& in, const std::string& name, Shape* shape) {
  if (!in.contains("shape") || !in["shape"].is_array()) return BadRequest("input '" + name + "' has no 'shape' array");
  for (const auto& d : in["shape"]) {
    if (!d.is_number_integer()) return BadRequest("input '" + name + "': 'shape' must hold integers");
    shape->push_back(d.get<int64_t>());
  }
  return ApiStatus::Ok();
}

// The "parameters" object of a request, input or output, or an empty one.
const json& Parameters(const json& j) {
  static const json kEmpty = json::object();
  auto it = j.find("parameters");
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

struct ParsedRequest {
  InferRequest request;
  bool binary_output = false;  // request parameter binary_data_output
};

ApiStatus ParseInferRequest(const httplib::Request& req, int64_t max_bytes, ParsedRequest* out) {
  std::string_view body = req.body;
  size_t header_length = body.size();
  if (req.has_header(kHeaderLengthHeader)) {
    const std::string value = req.get_header_value(kHeaderLengthHeader);
    char* end = nullptr;
    const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n > body.size()) {
      return BadRequest(std::string(kHeaderLengthHeader) + " '" + value + "' does not fit a body of " +
                        std::to_string(body.size()) + " bytes");
    }
    header_length = n;
  }
  json j;
  try {
    j = json::parse(body.substr(0, header_length));
  } catch (const json::exception& e) {
    return BadRequest(std::string("malformed JSON request: ") + e.what());
  }
  if (!j.is_object()) return BadRequest("the request must be a JSON object");
  InferRequest& r = out->request;
  if (j.contains("id")) {
    if (!j["id"].is_string()) return BadRequest("'id' must be a string");
    r.id = j["id"].get<std::string>();
  }
  const json& params = Parameters(j);
  if (params.contains("binary_data_output")) {
    if (!params["binary_data_output"].is_boolean()) return BadRequest("'binary_data_output' must be true or false");
    out->binary_output = params["binary_data_output"].get<bool>();
  }
  if (params.contains("timeout")) {
    if (!params["timeout"].is_number_integer() || params["timeout"].get<int64_t>() < 0) {
      return BadRequest("the 'timeout' parameter must be a non-negative integer (microseconds)");
    }
    r.deadline = std::min(r.deadline, Clock::now() + std::chrono::microseconds(params["timeout"].get<int64_t>()));
  }
  if (!j.contains("inputs") || !j["inputs"].is_array() || j["inputs"].empty()) {
    return BadRequest("the request has no 'inputs' array");
  }
  std::string_view binary = body.substr(header_length);
  size_t offset = 0;
  for (const json& in : j["inputs"]) {
    if (!in.is_object() || !in.contains("name") || !in["name"].is_string()) return BadRequest("an input has no 'name'");
    const std::string name = in["name"].get<std::string>();
    if (!in.contains("datatype") || !in["datatype"].is_string()) return BadRequest("input '" + name + "' has no 'datatype'");
    const std::string datatype = in["datatype"].get<std::string>();
    const DataType dtype = ParseDatatype(datatype);
    if (dtype == DataType::kUndefined) return BadRequest("input '" + name + "' has an unknown datatype '" + datatype + "'");
    Shape shape;
    ApiStatus s = ParseShape(in, name, &shape);
    if (!s.ok()) return s;
    const json& p = Parameters(in);
    Result<Tensor> tensor = Tensor();
    if (p.contains("binary_data_size")) {
      if (!p["binary_data_size"].is_number_unsigned()) return BadRequest("input '" + name + "': 'binary_data_size' must be a non-negative integer");
      const uint64_t size = p["binary_data_size"].get<uint64_t>();
      if (size > binary.size() - offset) {
        return BadRequest("input '" + name + "' wants " + std::to_string(size) + " bytes of binary data, " +
                          std::to_string(binary.size() - offset) + " are left");
      }
      tensor = TensorFromRaw(name, dtype, shape, binary.substr(offset, size), max_bytes);
      offset += size;
    } else {
      if (!in.contains("data")) return BadRequest("input '" + name + "' has neither 'data' nor 'binary_data_size'");
      tensor = TensorFromJson(name, dtype, shape, in["data"], max_bytes);
    }
    if (!tensor.ok()) return FromStatus(tensor.status());
    r.inputs.push_back({name, std::move(*tensor)});
  }
  if (offset != binary.size()) {
    return BadRequest(std::to_string(binary.size() - offset) + " bytes of binary data after the inputs' data");
  }
  if (j.contains("outputs")) {
    if (!j["outputs"].is_array()) return BadRequest("'outputs' must be an array");
    for (const json& o : j["outputs"]) {
      if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) return BadRequest("a requested output has no 'name'");
      RequestedOutput want{o["name"].get<std::string>(), out->binary_output};
      const json& p = Parameters(o);
      if (p.contains("binary_data")) {
        if (!p["binary_data"].is_boolean()) return BadRequest("output '" + want.name + "': 'binary_data' must be true or false");
        want.binary = p["binary_data"].get<bool>();
      }
      r.outputs.push_back(std::move(want));
    }
  }
  if (req.has_header(kTimeoutHeader)) {
    const std::string value = req.get_header_value(kTimeoutHeader);
    char* end = nullptr;
    const long long ms = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || ms < 0) return BadRequest(std::string(kTimeoutHeader) + " must be milliseconds");
    r.deadline = std::min(r.deadline, Clock::now() + std::chrono::milliseconds(ms));
  }
  return ApiStatus::Ok();
}

void WriteInferResponse(const ParsedRequest& parsed, const InferResponse& response, httplib::Response& res) {
  json out = {{"model_name", response.model_name}, {"model_version", response.model_version}};
  if (!response.id.empty()) out["id"] = response.id;
  json outputs = json::array();
  std::string binary;
  bool any_binary = false;
  for (size_t i = 0; i < response.outputs.size(); ++i) {
    const NamedValue& o = response.outputs[i];
    if (!o.value.is_tensor()) return ReplyError(res, BadRequest("output '" + o.name + "' is not a tensor"));
    const Tensor& t = o.value.tensor();
    const std::string datatype = DatatypeName(t.dtype());
    if (datatype.empty()) return ReplyError(res, BadRequest("output '" + o.name + "' has a datatype the protocol lacks"));
    json entry = {{"name", o.name}, {"datatype", datatype}, {"shape", t.shape()}};
    const bool as_binary = parsed.request.outputs.empty() ? parsed.binary_output : parsed.request.outputs[i].binary;
    if (as_binary) {
      const size_t before = binary.size();
      AppendRaw(t, &binary);
      entry["parameters"] = {{"binary_data_size", binary.size() - before}};
      any_binary = true;
    } else {
      auto data = TensorToJson(o.name, t);
      if (!data.ok()) return ReplyError(res, FromStatus(data.status()));
      entry["data"] = std::move(*data);
    }
    outputs.push_back(std::move(entry));
  }
  out["outputs"] = std::move(outputs);
  std::string header = Dump(out);
  res.status = 200;
  if (any_binary) {
    res.set_header(kHeaderLengthHeader, std::to_string(header.size()));
    header += binary;
    res.set_content(std::move(header), "application/octet-stream");
  } else {
    res.set_content(std::move(header), "application/json");
  }
}

}  // namespace

HttpFrontend::HttpFrontend(InferenceServer* server, int threads)
    : server_(server), http_(std::make_unique<httplib::Server>()) {
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http_->set_payload_max_length(static_cast<size_t>(server->options().max_request_bytes));
  http_->set_keep_alive_max_count(100000);
  http_->set_keep_alive_timeout(2);  // an idle keep-alive connection holds a thread, and delays shutdown
  http_->set_tcp_nodelay(true);
  Routes();
}

HttpFrontend::~HttpFrontend() = default;

Result<int> HttpFrontend::Bind(const std::string& host, int port) {
  if (port == 0) {
    const int bound = http_->bind_to_any_port(host);
    if (bound <= 0) return InvalidArgument("cannot bind HTTP to " + host);
    return bound;
  }
  if (!http_->bind_to_port(host, port)) return InvalidArgument("cannot bind HTTP to " + host + ":" + std::to_string(port));
  return port;
}

void HttpFrontend::Serve() { http_->listen_after_bind(); }
void HttpFrontend::Stop() { http_->stop(); }

void HttpFrontend::Routes() {
  InferenceServer* server = server_;
  httplib::Server& h = *http_;
  h.set_error_handler([server](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string message = "HTTP " + std::to_string(res.status);
    if (res.status == 404) message = "no endpoint " + req.method + " " + req.path;
    if (res.status == 413) message = "the request body is over the limit of " + std::to_string(server->options().max_request_bytes) + " bytes";
    if (res.status == 400) message = "malformed HTTP request";
    res.set_content(Dump(json{{"error", message}}), "application/json");
  });
  h.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unexpected error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    Reply(res, 500, json{{"error", what}});
  });

  h.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) { Reply(res, 200, json{{"live", true}}); });
  h.Get("/v2/health/ready", [server](const httplib::Request&, httplib::Response& res) {
    const bool ready = server->ready();
    Reply(res, ready ? 200 : 400, json{{"ready", ready}});
  });
  h.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, json{{"name", kServerName}, {"version", kServerVersion}, {"extensions", InferenceServer::Extensions()}});
  });
  h.Get(R"(/v2/models/([^/]+)(?:/versions/([^/]+))?/ready)", [server](const httplib::Request& req, httplib::Response& res) {
    const bool ready = server->ModelReady(Match(req, 1), Match(req, 2));
    Reply(res, ready ? 200 : 400, json{{"name", Match(req, 1)}, {"ready", ready}});
  });
  h.Get(R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)", [server](const httplib::Request& req, httplib::Response& res) {
    ModelMetadata m;
    ApiStatus s = server->GetModelMetadata(Match(req, 1), Match(req, 2), &m);
    if (!s.ok()) return ReplyError(res, s);
    auto tensors = [](const std::vector<TensorMetadata>& list) {
      json a = json::array();
      for (const auto& t : list) a.push_back({{"name", t.name}, {"datatype", t.datatype}, {"shape", t.shape}});
      return a;
    };
    Reply(res, 200, json{{"name", m.name}, {"versions", m.versions}, {"platform", m.platform},
                         {"inputs", tensors(m.inputs)}, {"outputs", tensors(m.outputs)}});
  });
  h.Post(R"(/v2/models/([^/]+)(?:/versions/([^/]+))?/infer)", [server](const httplib::Request& req, httplib::Response& res) {
    ParsedRequest parsed;
    parsed.request.model_name = Match(req, 1);
    parsed.request.model_version = Match(req, 2);
    ApiStatus s = ParseInferRequest(req, server->options().max_request_bytes, &parsed);
    if (!s.ok()) return ReplyError(res, s);
    std::promise<std::pair<ApiStatus, InferResponse>> answered;
    auto future = answered.get_future();
    // Keep what the response needs (requested outputs, binary flags) before the request moves.
    ParsedRequest shape_of_reply;
    shape_of_reply.binary_output = parsed.binary_output;
    shape_of_reply.request.outputs = parsed.request.outputs;
    server->Infer(std::move(parsed.request), Protocol::kHttp, [&answered](ApiStatus status, InferResponse response) {
      answered.set_value({std::move(status), std::move(response)});
    });
    auto [status, response] = future.get();
    if (!status.ok()) return ReplyError(res, status);
    WriteInferResponse(shape_of_reply, response, res);
  });
  h.Post("/v2/repository/index", [server](const httplib::Request& req, httplib::Response& res) {
    bool only_ready = false;
    if (!req.body.empty()) {
      const json j = json::parse(req.body, nullptr, false);
      if (j.is_discarded() || !j.is_object()) return ReplyError(res, BadRequest("malformed JSON request"));
      if (j.contains("ready") && j["ready"].is_boolean()) only_ready = j["ready"].get<bool>();
    }
    json list = json::array();
    for (const ModelIndexEntry& e : server->repository().Index()) {
      if (only_ready && e.state != "READY") continue;
      json entry = {{"name", e.name}, {"state", e.state}};
      if (!e.version.empty()) entry["version"] = e.version;
      if (!e.reason.empty()) entry["reason"] = e.reason;
      list.push_back(std::move(entry));
    }
    Reply(res, 200, list);
  });
  h.Post(R"(/v2/repository/models/([^/]+)/(load|unload))", [server](const httplib::Request& req, httplib::Response& res) {
    const std::string name = Match(req, 1);
    ApiStatus s = Match(req, 2) == "load" ? server->repository().Load(name) : server->repository().Unload(name);
    if (!s.ok()) return ReplyError(res, s);
    res.status = 200;
  });
  h.Get("/metrics", [server](const httplib::Request&, httplib::Response& res) {
    res.set_content(server->metrics().Render(server->repository().Readiness()), "text/plain; version=0.0.4");
  });
}

}  // namespace onnxflow::server
