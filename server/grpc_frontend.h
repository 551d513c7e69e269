// The protocol over gRPC (service inference.GRPCInferenceService), on gRPC's callback API: a
// ModelInfer holds no thread while its run waits for admission or executes.
#pragma once

#include <memory>
#include <string>

#include "include/onnxflow/status.h"
#include "server/inference_server.h"

namespace grpc {
class Server;
}

namespace onnxflow::server {

class GrpcService;

class GrpcFrontend {
 public:
  explicit GrpcFrontend(InferenceServer* server);
  ~GrpcFrontend();

  // Starts serving on host:port (0 picks a free port) and returns the port.
  Result<int> Start(const std::string& host, int port);
  // Refuses new calls, lets the ones in flight finish (cancelling them at `deadline`).
  void Shutdown(std::chrono::system_clock::time_point deadline);

 private:
  InferenceServer* const server_;
  std::unique_ptr<GrpcService> service_;
  std::unique_ptr<grpc::Server> grpc_;
};

}  // namespace onnxflow::server
