#include "server/api_status.h"

namespace onnxflow::server {

ApiStatus FromStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return ApiStatus::Ok();
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kOutOfRange:
    case StatusCode::kUnimplemented:
    case StatusCode::kNotFound:  // inside a run: a name in the request, not the model
      return {ApiCode::kBadRequest, status.message()};
    case StatusCode::kResourceExhausted:
      return {ApiCode::kTooLarge, status.message()};
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kCancelled:
      return {ApiCode::kDeadline, status.message()};
    case StatusCode::kInternal:
      return {ApiCode::kInternal, status.message()};
  }
  return {ApiCode::kInternal, status.ToString()};
}

int HttpStatusOf(ApiCode code) {
  switch (code) {
    case ApiCode::kOk: return 200;
    case ApiCode::kBadRequest: return 400;
    case ApiCode::kNotFound: return 404;
    case ApiCode::kUnavailable: return 503;
    case ApiCode::kDeadline: return 504;
    case ApiCode::kTooLarge: return 413;
    case ApiCode::kInternal: return 500;
  }
  return 500;
}

const char* ApiCodeName(ApiCode code) {
  switch (code) {
    case ApiCode::kOk: return "ok";
    case ApiCode::kBadRequest: return "bad_request";
    case ApiCode::kNotFound: return "not_found";
    case ApiCode::kUnavailable: return "unavailable";
    case ApiCode::kDeadline: return "deadline";
    case ApiCode::kTooLarge: return "too_large";
    case ApiCode::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace onnxflow::server
