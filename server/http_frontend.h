// The protocol over HTTP/REST (cpp-httplib): health, metadata, inference with JSON tensors and the
// binary tensor data extension, the repository extension, and Prometheus /metrics.
#pragma once

#include <memory>
#include <string>

#include "include/onnxflow/status.h"
#include "server/inference_server.h"

namespace httplib {
class Server;
}

namespace onnxflow::server {

// How a client sets a request's deadline over HTTP (milliseconds from receipt); the request
// parameter "timeout" (microseconds, as Triton's) does the same.
inline constexpr const char* kTimeoutHeader = "Inference-Timeout-Ms";
inline constexpr const char* kHeaderLengthHeader = "Inference-Header-Content-Length";

class HttpFrontend {
 public:
  // `threads` connections are served at once (each keeps one while it is open).
  HttpFrontend(InferenceServer* server, int threads);
  ~HttpFrontend();

  // Binds host:port (0 picks a free port) and returns the port.
  Result<int> Bind(const std::string& host, int port);
  // Serves until Stop; returns once in-flight requests are answered.
  void Serve();
  // Closes the listening socket; connections end after their current request.
  void Stop();

 private:
  void Routes();
  InferenceServer* const server_;
  std::unique_ptr<httplib::Server> http_;
};

}  // namespace onnxflow::server
