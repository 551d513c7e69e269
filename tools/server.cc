// server: serves a model repository over the Open Inference Protocol (KServe v2), HTTP and gRPC.
//   server --model-repository DIR [--http-port 8000] [--grpc-port 8001] [--host 0.0.0.0]
//          [--http-threads 32] [--max-request-bytes 67108864] [--shutdown-timeout 30]
// Port 0 picks a free port; -1 turns that protocol off. The first line on stdout gives the ports
// ("listening http=PORT grpc=PORT"), a second one says when the repository is loaded ("ready").
// SIGTERM or SIGINT: refuse new requests, answer the ones in flight, exit 0.
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <CLI/CLI.hpp>

#include "server/grpc_frontend.h"
#include "server/http_frontend.h"
#include "server/inference_server.h"

int main(int argc, char** argv) {
  using namespace onnxflow::server;
  CLI::App app{"onnxflow server: the Open Inference Protocol (KServe v2) over HTTP and gRPC"};
  std::string repository, host = "0.0.0.0";
  int http_port = 8000, grpc_port = 8001, http_threads = 32;
  int64_t max_request_bytes = int64_t{64} << 20;
  double shutdown_timeout = 30;
  app.footer(
      "Exit codes: 0 stopped by SIGTERM/SIGINT with every request answered; 1 stopped with requests still in\n"
      "flight after --shutdown-timeout; 2 refused (bad usage, or a port it cannot bind).\n"
      "Example:\n"
      "  server --model-repository models --http-port 8000 --grpc-port 8001");
  app.add_option("--model-repository", repository, "DIR/NAME/model.onnx or DIR/NAME/<version>/model.onnx")->required();
  app.add_option("--host", host, "address to listen on")->capture_default_str();
  app.add_option("--http-port", http_port, "HTTP/REST port (0: any free one, -1: off)")->capture_default_str();
  app.add_option("--grpc-port", grpc_port, "gRPC port (0: any free one, -1: off)")->capture_default_str();
  app.add_option("--http-threads", http_threads, "HTTP connections served at once")->capture_default_str();
  app.add_option("--max-request-bytes", max_request_bytes, "largest request body or message accepted")
      ->capture_default_str();
  app.add_option("--shutdown-timeout", shutdown_timeout, "seconds in-flight requests get after SIGTERM")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (http_threads < 1 || max_request_bytes < 1) {
    std::fprintf(stderr, "server: --http-threads and --max-request-bytes must be positive\n");
    return 2;
  }

  // Blocked before any thread starts, so every thread inherits the mask and only sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up must not end the process

  InferenceServer server(repository, ServerOptions{max_request_bytes});
  // Listening before the models load: liveness answers at once, readiness once they are loaded.
  HttpFrontend http(&server, http_threads);
  GrpcFrontend grpc(&server);
  int http_bound = -1, grpc_bound = -1;
  if (http_port >= 0) {
    auto port = http.Bind(host, http_port);
    if (!port.ok()) {
      std::fprintf(stderr, "server: %s\n", port.status().message().c_str());
      return 2;
    }
    http_bound = *port;
  }
  if (grpc_port >= 0) {
    auto port = grpc.Start(host, grpc_port);
    if (!port.ok()) {
      std::fprintf(stderr, "server: %s\n", port.status().message().c_str());
      return 2;
    }
    grpc_bound = *port;
  }
  std::thread http_thread;
  if (http_bound >= 0) http_thread = std::thread([&] { http.Serve(); });
  std::printf("listening http=%d grpc=%d\n", http_bound, grpc_bound);
  std::fflush(stdout);

  server.repository().LoadAll();
  server.set_ready(true);
  for (const ModelIndexEntry& e : server.repository().Index()) {
    std::fprintf(stderr, "model %s: %s%s%s\n", e.name.c_str(), e.state.c_str(), e.reason.empty() ? "" : ": ",
                 e.reason.c_str());
  }
  std::printf("ready\n");
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::fprintf(stderr, "server: signal %d, draining %lld request(s) in flight\n", signal_number,
               static_cast<long long>(server.in_flight()));
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                             std::chrono::duration<double>(shutdown_timeout));
  server.BeginDrain();
  // Both listeners close at once; each returns when its in-flight calls are answered.
  std::thread grpc_stop([&] {
    grpc.Shutdown(std::chrono::system_clock::now() + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                                         std::chrono::duration<double>(shutdown_timeout)));
  });
  if (http_bound >= 0) {
    http.Stop();
    http_thread.join();
  }
  grpc_stop.join();
  const bool idle = server.WaitIdle(until);
  std::fprintf(stderr, "server: %s\n", idle ? "stopped after answering every request" : "stopped at the shutdown timeout");
  return idle ? 0 : 1;
}
