// The outcome of a protocol call, in the terms both front ends answer with: each code maps to one
// HTTP status and one gRPC status (the runtime's Status has no "unavailable" or "too large").
#pragma once

#include <string>

#include "include/onnxflow/status.h"

namespace onnxflow::server {

enum class ApiCode {
  kOk,
  kBadRequest,   // malformed request, wrong datatype/shape, unknown input or output
  kNotFound,     // unknown model or version
  kUnavailable,  // model not ready, server shutting down
  kDeadline,     // the client's timeout passed
  kTooLarge,     // a request or tensor over the configured limits
  kInternal,
};

struct ApiStatus {
  ApiCode code = ApiCode::kOk;
  std::string message;

  bool ok() const { return code == ApiCode::kOk; }
  static ApiStatus Ok() { return {}; }
};

inline ApiStatus BadRequest(std::string m) { return {ApiCode::kBadRequest, std::move(m)}; }
inline ApiStatus ModelNotFound(std::string m) { return {ApiCode::kNotFound, std::move(m)}; }
inline ApiStatus Unavailable(std::string m) { return {ApiCode::kUnavailable, std::move(m)}; }

// A runtime Status as the client sees it: its input was wrong (400), a limit was hit, time ran out.
ApiStatus FromStatus(const Status& status);
int HttpStatusOf(ApiCode code);
const char* ApiCodeName(ApiCode code);  // for metrics labels: "bad_request", ...

}  // namespace onnxflow::server
