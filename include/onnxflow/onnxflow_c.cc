// The C API (onnxflow_c.h) over the C++ API: every handle wraps one C++ object, every entry point
// catches what C++ may throw (allocation failures) so that nothing but a status crosses into C.
#include "include/onnxflow/onnxflow_c.h"

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "include/onnxflow/session.h"
#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "include/onnxflow/version.h"

struct onnxflow_status {
  onnxflow_code code;
  std::string message;
};

struct onnxflow_session_options {
  onnxflow::SessionOptions options;
};

struct onnxflow_run_options {
  double timeout_ms = 0;
  std::atomic<bool> cancel{false};
};

struct onnxflow_tensor {
  onnxflow::Tensor tensor;
};

struct onnxflow_session {
  onnxflow::Session session;
};

namespace {

// Returned when even a status cannot be allocated; onnxflow_status_free leaves it alone.
onnxflow_status kOutOfMemory{ONNXFLOW_RESOURCE_EXHAUSTED, "out of memory"};

onnxflow_status* MakeStatus(onnxflow_code code, const std::string& message) {
  auto* status = new (std::nothrow) onnxflow_status;
  if (status == nullptr) return &kOutOfMemory;
  try {
    status->code = code;
    status->message = message;
  } catch (...) {
    delete status;
    return &kOutOfMemory;
  }
  return status;
}

onnxflow_status* FromStatus(const onnxflow::Status& status) {
  if (status.ok()) return nullptr;
  return MakeStatus(static_cast<onnxflow_code>(status.code()), status.message());
}

onnxflow_status* Invalid(const std::string& message) { return MakeStatus(ONNXFLOW_INVALID_ARGUMENT, message); }

// Runs `body` (which returns onnxflow_status*), turning any exception into a status.
template <typename F>
onnxflow_status* Guard(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return &kOutOfMemory;
  } catch (const std::exception& e) {
    return MakeStatus(ONNXFLOW_INTERNAL, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return MakeStatus(ONNXFLOW_INTERNAL, "unexpected exception");
  }
}

// Checks a caller-given type and shape; the C API carries fixed-size element types only.
onnxflow_status* CheckTensorSpec(onnxflow_dtype dtype, const int64_t* dims, size_t rank, onnxflow::Shape* shape) {
  const int32_t value = static_cast<int32_t>(dtype);
  if (!onnxflow::IsValidDataType(value) || dtype == ONNXFLOW_UNDEFINED) {
    return Invalid("unknown element type " + std::to_string(value));
  }
  if (dtype == ONNXFLOW_STRING) return MakeStatus(ONNXFLOW_UNIMPLEMENTED, "string tensors do not cross the C API");
  if (rank > 0 && dims == nullptr) return Invalid("dims is NULL for a tensor of rank " + std::to_string(rank));
  if (rank > 64) return Invalid("rank " + std::to_string(rank) + " is over 64");
  shape->assign(dims, dims + rank);
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) return Invalid("dimension " + std::to_string(i) + " is negative (" + std::to_string(dims[i]) + ")");
    if (dims[i] != 0 && count > (int64_t{1} << 50) / dims[i]) return Invalid("the shape " + onnxflow::ShapeToString(*shape) + " is too large");
    count *= dims[i];
  }
  return nullptr;
}

onnxflow_status* Info(const std::vector<onnxflow::ValueInfo>& infos, const char* what, size_t index,
                      onnxflow_dtype* dtype, size_t* rank, const int64_t** dims, int* has_shape) {
  if (index >= infos.size()) {
    return MakeStatus(ONNXFLOW_OUT_OF_RANGE, std::string(what) + " index " + std::to_string(index) +
                                                 " is out of range (the model has " + std::to_string(infos.size()) + ")");
  }
  const onnxflow::ValueInfo& info = infos[index];
  if (dtype != nullptr) *dtype = static_cast<onnxflow_dtype>(info.dtype);
  if (rank != nullptr) *rank = info.shape.size();
  if (dims != nullptr) *dims = info.shape.empty() ? nullptr : info.shape.data();
  if (has_shape != nullptr) *has_shape = info.has_shape ? 1 : 0;
  return nullptr;
}

// The inputs of a run as the C++ API takes them (a copy of a handle's Tensor shares its storage).
onnxflow_status* NamedInputs(const char* const* input_names, const onnxflow_tensor* const* inputs, size_t input_count,
                             std::vector<onnxflow::NamedValue>* named) {
  named->reserve(input_count);
  for (size_t i = 0; i < input_count; ++i) {
    if (input_names[i] == nullptr || inputs[i] == nullptr) {
      return Invalid("input_names[" + std::to_string(i) + "] or inputs[" + std::to_string(i) + "] is NULL");
    }
    named->push_back({input_names[i], inputs[i]->tensor});
  }
  return nullptr;
}

// Cancel flag and deadline of a run (none when `run_options` is NULL).
onnxflow::RunOptions ToRunOptions(const onnxflow_run_options* run_options) {
  onnxflow::RunOptions options;
  if (run_options != nullptr) {
    options.cancel = &run_options->cancel;
    if (run_options->timeout_ms > 0) {
      options.deadline = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double, std::milli>(run_options->timeout_ms));
    }
  }
  return options;
}

}  // namespace

extern "C" {

const char* onnxflow_version(void) { return ONNXFLOW_VERSION_STRING; }

onnxflow_code onnxflow_status_code(const onnxflow_status* status) {
  return status == nullptr ? ONNXFLOW_OK : status->code;
}

const char* onnxflow_status_message(const onnxflow_status* status) {
  return status == nullptr ? "" : status->message.c_str();
}

const char* onnxflow_code_name(onnxflow_code code) {
  if (code < ONNXFLOW_OK || code > ONNXFLOW_INTERNAL) return "Unknown";
  return onnxflow::StatusCodeName(static_cast<onnxflow::StatusCode>(code));
}

void onnxflow_status_free(onnxflow_status* status) {
  if (status != &kOutOfMemory) delete status;
}

onnxflow_status* onnxflow_session_options_create(onnxflow_session_options** out) {
  if (out == nullptr) return Invalid("out is NULL");
  return Guard([&]() -> onnxflow_status* {
    *out = new onnxflow_session_options;
    return nullptr;
  });
}

void onnxflow_session_options_free(onnxflow_session_options* options) { delete options; }

onnxflow_status* onnxflow_session_options_set_threads(onnxflow_session_options* options, int threads) {
  if (options == nullptr) return Invalid("options is NULL");
  if (threads < 0) return Invalid("threads must be 0 (all cores) or more, got " + std::to_string(threads));
  options->options.threads = threads;
  return nullptr;
}

void onnxflow_session_options_set_sequential(onnxflow_session_options* options, int sequential) {
  if (options != nullptr) {
    options->options.mode = sequential ? onnxflow::ExecutionMode::kSequential : onnxflow::ExecutionMode::kDataflow;
  }
}

void onnxflow_session_options_set_optimize(onnxflow_session_options* options, int optimize) {
  if (options != nullptr) options->options.optimize = optimize != 0;
}

onnxflow_status* onnxflow_run_options_create(onnxflow_run_options** out) {
  if (out == nullptr) return Invalid("out is NULL");
  return Guard([&]() -> onnxflow_status* {
    *out = new onnxflow_run_options;
    return nullptr;
  });
}

void onnxflow_run_options_free(onnxflow_run_options* options) { delete options; }

void onnxflow_run_options_set_timeout_ms(onnxflow_run_options* options, double timeout_ms) {
  if (options != nullptr) options->timeout_ms = timeout_ms;
}

void onnxflow_run_options_cancel(onnxflow_run_options* options) {
  if (options != nullptr) options->cancel.store(true, std::memory_order_release);
}

void onnxflow_run_options_reset_cancel(onnxflow_run_options* options) {
  if (options != nullptr) options->cancel.store(false, std::memory_order_release);
}

onnxflow_status* onnxflow_tensor_create(onnxflow_dtype dtype, const int64_t* dims, size_t rank,
                                        onnxflow_tensor** out) {
  if (out == nullptr) return Invalid("out is NULL");
  return Guard([&]() -> onnxflow_status* {
    onnxflow::Shape shape;
    if (onnxflow_status* bad = CheckTensorSpec(dtype, dims, rank, &shape)) return bad;
    *out = new onnxflow_tensor{onnxflow::Tensor(static_cast<onnxflow::DataType>(dtype), std::move(shape))};
    return nullptr;
  });
}

onnxflow_status* onnxflow_tensor_create_borrowed(onnxflow_dtype dtype, const int64_t* dims, size_t rank, void* data,
                                                 size_t nbytes, onnxflow_tensor** out) {
  if (out == nullptr) return Invalid("out is NULL");
  return Guard([&]() -> onnxflow_status* {
    onnxflow::Shape shape;
    if (onnxflow_status* bad = CheckTensorSpec(dtype, dims, rank, &shape)) return bad;
    const auto type = static_cast<onnxflow::DataType>(dtype);
    const size_t expected = static_cast<size_t>(onnxflow::ElementCount(shape)) * onnxflow::ElementSize(type);
    if (nbytes != expected) {
      return Invalid("a " + std::string(onnxflow::DataTypeName(type)) + " tensor of shape " +
                     onnxflow::ShapeToString(shape) + " takes " + std::to_string(expected) + " bytes, got " +
                     std::to_string(nbytes));
    }
    if (data == nullptr && expected > 0) return Invalid("data is NULL");
    *out = new onnxflow_tensor{onnxflow::Tensor::Borrow(type, std::move(shape), data)};
    return nullptr;
  });
}

void onnxflow_tensor_free(onnxflow_tensor* tensor) { delete tensor; }

onnxflow_dtype onnxflow_tensor_dtype(const onnxflow_tensor* tensor) {
  return tensor == nullptr ? ONNXFLOW_UNDEFINED : static_cast<onnxflow_dtype>(tensor->tensor.dtype());
}

size_t onnxflow_tensor_rank(const onnxflow_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->tensor.shape().size();
}

const int64_t* onnxflow_tensor_dims(const onnxflow_tensor* tensor) {
  return tensor == nullptr || tensor->tensor.shape().empty() ? nullptr : tensor->tensor.shape().data();
}

int64_t onnxflow_tensor_element_count(const onnxflow_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->tensor.size();
}

size_t onnxflow_tensor_nbytes(const onnxflow_tensor* tensor) { return tensor == nullptr ? 0 : tensor->tensor.nbytes(); }

void* onnxflow_tensor_data(onnxflow_tensor* tensor) {
  return tensor == nullptr ? nullptr : tensor->tensor.mutable_raw_data();
}

const void* onnxflow_tensor_const_data(const onnxflow_tensor* tensor) {
  return tensor == nullptr ? nullptr : tensor->tensor.raw_data();
}

onnxflow_status* onnxflow_session_load(const char* path, const onnxflow_session_options* options,
                                       onnxflow_session** out) {
  if (path == nullptr) return Invalid("path is NULL");
  if (out == nullptr) return Invalid("out is NULL");
  return Guard([&]() -> onnxflow_status* {
    auto session = onnxflow::Session::Load(path, options != nullptr ? options->options : onnxflow::SessionOptions{});
    if (!session.ok()) return FromStatus(session.status());
    *out = new onnxflow_session{std::move(*session)};
    return nullptr;
  });
}

onnxflow_status* onnxflow_session_load_bytes(const void* data, size_t size, const onnxflow_session_options* options,
                                             const char* directory, onnxflow_session** out) {
  if (data == nullptr && size > 0) return Invalid("data is NULL");
  if (out == nullptr) return Invalid("out is NULL");
  return Guard([&]() -> onnxflow_status* {
    auto session = onnxflow::Session::LoadFromBytes(
        std::string(static_cast<const char*>(data), size),
        options != nullptr ? options->options : onnxflow::SessionOptions{}, directory != nullptr ? directory : "");
    if (!session.ok()) return FromStatus(session.status());
    *out = new onnxflow_session{std::move(*session)};
    return nullptr;
  });
}

void onnxflow_session_free(onnxflow_session* session) { delete session; }

size_t onnxflow_session_input_count(const onnxflow_session* session) {
  return session == nullptr ? 0 : session->session.inputs().size();
}

size_t onnxflow_session_output_count(const onnxflow_session* session) {
  return session == nullptr ? 0 : session->session.outputs().size();
}

const char* onnxflow_session_input_name(const onnxflow_session* session, size_t index) {
  if (session == nullptr || index >= session->session.inputs().size()) return nullptr;
  return session->session.inputs()[index].name.c_str();
}

const char* onnxflow_session_output_name(const onnxflow_session* session, size_t index) {
  if (session == nullptr || index >= session->session.outputs().size()) return nullptr;
  return session->session.outputs()[index].name.c_str();
}

const char* onnxflow_session_producer_name(const onnxflow_session* session) {
  return session == nullptr ? nullptr : session->session.metadata().producer_name.c_str();
}

const char* onnxflow_session_producer_version(const onnxflow_session* session) {
  return session == nullptr ? nullptr : session->session.metadata().producer_version.c_str();
}

const char* onnxflow_session_domain(const onnxflow_session* session) {
  return session == nullptr ? nullptr : session->session.metadata().domain.c_str();
}

const char* onnxflow_session_doc_string(const onnxflow_session* session) {
  return session == nullptr ? nullptr : session->session.metadata().doc_string.c_str();
}

const char* onnxflow_session_graph_name(const onnxflow_session* session) {
  return session == nullptr ? nullptr : session->session.metadata().graph_name.c_str();
}

int64_t onnxflow_session_model_version(const onnxflow_session* session) {
  return session == nullptr ? 0 : session->session.metadata().model_version;
}

int64_t onnxflow_session_ir_version(const onnxflow_session* session) {
  return session == nullptr ? 0 : session->session.metadata().ir_version;
}

size_t onnxflow_session_metadata_count(const onnxflow_session* session) {
  return session == nullptr ? 0 : session->session.metadata().metadata_props.size();
}

const char* onnxflow_session_metadata_key(const onnxflow_session* session, size_t index) {
  if (session == nullptr || index >= session->session.metadata().metadata_props.size()) return nullptr;
  return session->session.metadata().metadata_props[index].first.c_str();
}

const char* onnxflow_session_metadata_value(const onnxflow_session* session, size_t index) {
  if (session == nullptr || index >= session->session.metadata().metadata_props.size()) return nullptr;
  return session->session.metadata().metadata_props[index].second.c_str();
}

size_t onnxflow_session_opset_count(const onnxflow_session* session) {
  return session == nullptr ? 0 : session->session.metadata().opset_imports.size();
}

const char* onnxflow_session_opset_domain(const onnxflow_session* session, size_t index) {
  if (session == nullptr || index >= session->session.metadata().opset_imports.size()) return nullptr;
  return session->session.metadata().opset_imports[index].first.c_str();
}

int64_t onnxflow_session_opset_version(const onnxflow_session* session, size_t index) {
  if (session == nullptr || index >= session->session.metadata().opset_imports.size()) return -1;
  return session->session.metadata().opset_imports[index].second;
}

onnxflow_status* onnxflow_session_input_info(const onnxflow_session* session, size_t index, onnxflow_dtype* dtype,
                                             size_t* rank, const int64_t** dims, int* has_shape) {
  if (session == nullptr) return Invalid("session is NULL");
  return Info(session->session.inputs(), "input", index, dtype, rank, dims, has_shape);
}

onnxflow_status* onnxflow_session_output_info(const onnxflow_session* session, size_t index, onnxflow_dtype* dtype,
                                              size_t* rank, const int64_t** dims, int* has_shape) {
  if (session == nullptr) return Invalid("session is NULL");
  return Info(session->session.outputs(), "output", index, dtype, rank, dims, has_shape);
}

onnxflow_status* onnxflow_session_run(const onnxflow_session* session, const onnxflow_run_options* run_options,
                                      const char* const* input_names, const onnxflow_tensor* const* inputs,
                                      size_t input_count, const char* const* output_names, size_t output_count,
                                      onnxflow_tensor** outputs) {
  if (session == nullptr) return Invalid("session is NULL");
  if (input_count > 0 && (input_names == nullptr || inputs == nullptr)) return Invalid("input_names or inputs is NULL");
  if (output_count > 0 && outputs == nullptr) return Invalid("outputs is NULL");
  const std::vector<onnxflow::ValueInfo>& declared = session->session.outputs();
  if (output_names == nullptr && output_count != declared.size()) {
    return Invalid("output_names is NULL, so output_count must be the model's " + std::to_string(declared.size()) +
                   " outputs, got " + std::to_string(output_count));
  }
  return Guard([&]() -> onnxflow_status* {
    // Which graph output fills each requested slot; checked before running.
    std::vector<size_t> picks(output_count);
    for (size_t i = 0; i < output_count; ++i) {
      if (output_names == nullptr) {
        picks[i] = i;
        continue;
      }
      if (output_names[i] == nullptr) return Invalid("output_names[" + std::to_string(i) + "] is NULL");
      size_t j = 0;
      while (j < declared.size() && declared[j].name != output_names[i]) ++j;
      if (j == declared.size()) {
        return MakeStatus(ONNXFLOW_NOT_FOUND, std::string("the model has no output named '") + output_names[i] + "'");
      }
      picks[i] = j;
    }
    std::vector<onnxflow::NamedValue> named;
    if (onnxflow_status* st = NamedInputs(input_names, inputs, input_count, &named)) return st;
    const onnxflow::RunOptions options = ToRunOptions(run_options);
    // Named outputs: only the nodes they need run (Session::Run with names), in the caller's order.
    std::vector<std::string> names;
    if (output_names != nullptr) {
      names.reserve(output_count);
      for (size_t i = 0; i < output_count; ++i) names.push_back(declared[picks[i]].name);
    }
    auto result = output_names == nullptr ? session->session.Run(named, options)
                                          : session->session.Run(named, names, options);
    if (!result.ok()) return FromStatus(result.status());
    std::vector<onnxflow_tensor*> made;
    made.reserve(output_count);
    for (size_t i = 0; i < output_count; ++i) {
      const onnxflow::NamedValue& value = (*result)[i];
      onnxflow_status* bad = nullptr;
      if (!value.value.is_tensor()) {
        bad = MakeStatus(ONNXFLOW_UNIMPLEMENTED, "output '" + value.name + "' is " +
                                                     (value.value.is_none()  ? "an optional without a value"
                                                                             : value.value.is_map() ? "a map"
                                                                                                    : "a sequence") +
                                                     "; the C API returns tensors only");
      } else if (value.value.tensor().dtype() == onnxflow::DataType::kString) {
        bad = MakeStatus(ONNXFLOW_UNIMPLEMENTED, "output '" + value.name + "' is a string tensor; strings do not cross the C API");
      }
      if (bad == nullptr) {
        try {
          made.push_back(new onnxflow_tensor{value.value.tensor()});
        } catch (...) {
          bad = &kOutOfMemory;
        }
      }
      if (bad != nullptr) {
        for (onnxflow_tensor* t : made) delete t;
        return bad;
      }
    }
    for (size_t i = 0; i < output_count; ++i) outputs[i] = made[i];
    return nullptr;
  });
}

onnxflow_status* onnxflow_session_run_into(const onnxflow_session* session, const onnxflow_run_options* run_options,
                                           const char* const* input_names, const onnxflow_tensor* const* inputs,
                                           size_t input_count, const char* const* output_names,
                                           onnxflow_tensor* const* outputs, size_t output_count) {
  if (session == nullptr) return Invalid("session is NULL");
  if (input_count > 0 && (input_names == nullptr || inputs == nullptr)) return Invalid("input_names or inputs is NULL");
  if (output_count > 0 && (output_names == nullptr || outputs == nullptr)) return Invalid("output_names or outputs is NULL");
  return Guard([&]() -> onnxflow_status* {
    const std::vector<onnxflow::ValueInfo>& declared = session->session.outputs();
    std::vector<onnxflow::NamedValue> into;
    into.reserve(output_count);
    for (size_t i = 0; i < output_count; ++i) {
      if (output_names[i] == nullptr || outputs[i] == nullptr) {
        return Invalid("output_names[" + std::to_string(i) + "] or outputs[" + std::to_string(i) + "] is NULL");
      }
      if (std::none_of(declared.begin(), declared.end(),
                       [&](const onnxflow::ValueInfo& d) { return d.name == output_names[i]; })) {
        return MakeStatus(ONNXFLOW_NOT_FOUND, std::string("the model has no output named '") + output_names[i] + "'");
      }
      // A copy of the handle's Tensor shares its storage: RunInto writes the caller's bytes.
      into.push_back({output_names[i], outputs[i]->tensor});
    }
    std::vector<onnxflow::NamedValue> named;
    if (onnxflow_status* st = NamedInputs(input_names, inputs, input_count, &named)) return st;
    const onnxflow::RunOptions options = ToRunOptions(run_options);
    onnxflow::Status status = session->session.RunInto(named, into, options);
    return status.ok() ? nullptr : FromStatus(status);
  });
}

}  // extern "C"
