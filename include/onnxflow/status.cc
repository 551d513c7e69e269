#include "include/onnxflow/status.h"

namespace onnxflow {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "Ok";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kUnimplemented: return "Unimplemented";
    case StatusCode::kResourceExhausted: return "ResourceExhausted";
    case StatusCode::kCancelled: return "Cancelled";
    case StatusCode::kDeadlineExceeded: return "DeadlineExceeded";
    case StatusCode::kFailedPrecondition: return "FailedPrecondition";
    case StatusCode::kOutOfRange: return "OutOfRange";
    case StatusCode::kInternal: return "Internal";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "Ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

Status InvalidArgument(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
Status Unimplemented(std::string m) { return Status(StatusCode::kUnimplemented, std::move(m)); }
Status ResourceExhausted(std::string m) { return Status(StatusCode::kResourceExhausted, std::move(m)); }
Status FailedPrecondition(std::string m) { return Status(StatusCode::kFailedPrecondition, std::move(m)); }
Status OutOfRange(std::string m) { return Status(StatusCode::kOutOfRange, std::move(m)); }
Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }

}  // namespace onnxflow
