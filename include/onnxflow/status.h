// Status and Result: how every fallible call in onnxflow reports failure. No exception crosses the
// public API; a message always says what failed and where (node, op, input).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace onnxflow {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller's input (model, tensor, option) is wrong
  kNotFound,            // a named thing does not exist
  kUnimplemented,       // valid ONNX that onnxflow does not support
  kResourceExhausted,   // a limit in SessionOptions was hit
  kCancelled,           // RunOptions' cancel flag was set
  kDeadlineExceeded,    // RunOptions' deadline passed
  kFailedPrecondition,  // the model is valid but a value does not fit at run time
  kOutOfRange,          // an index taken from data is out of range
  kInternal,            // a bug in onnxflow
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: message"
  std::string ToString() const;

  // Returns this status with `context + ": "` before the message (no-op when ok).
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Shorthands; they read as sentences at the call site.
Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status Unimplemented(std::string message);
Status ResourceExhausted(std::string message);
Status FailedPrecondition(std::string message);
Status OutOfRange(std::string message);
Status Internal(std::string message);

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {           // NOLINT: implicit by design
    assert(!std::get<Status>(state_).ok() && "a Result needs a value or an error");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace onnxflow

#define ONNXFLOW_CONCAT_INNER(a, b) a##b
#define ONNXFLOW_CONCAT(a, b) ONNXFLOW_CONCAT_INNER(a, b)

// Variadic so that an expression with template commas (DispatchType<float, double>(...)) passes.
#define ONNXFLOW_RETURN_IF_ERROR(...)                    \
  do {                                                   \
    ::onnxflow::Status onnxflow_status_ = (__VA_ARGS__); \
    if (!onnxflow_status_.ok()) return onnxflow_status_; \
  } while (0)

#define ONNXFLOW_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

// ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, dtype, shape));
#define ONNXFLOW_ASSIGN_OR_RETURN(lhs, ...) \
  ONNXFLOW_ASSIGN_OR_RETURN_IMPL(ONNXFLOW_CONCAT(onnxflow_result_, __LINE__), lhs, (__VA_ARGS__))
