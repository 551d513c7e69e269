/* onnxflow's C API: load an ONNX model once, run it from any number of threads.
 *
 * Plain C (C99), so that any language or C++ standard library can call it; no C++ type crosses it.
 * Every object is an opaque handle created by an onnxflow_*_create/load function and released by
 * the matching onnxflow_*_free (free functions accept NULL).
 *
 * Errors: a fallible function returns an onnxflow_status*; NULL means success. A non-NULL status
 * carries a code and a message naming what failed (for a run: the node, op and input); the caller
 * frees it with onnxflow_status_free. Output parameters are written only on success.
 *
 * Threads: a session is immutable once loaded; any number of threads may call onnxflow_session_run
 * (and the other const queries) on one session at once. Tensors, options and statuses are plain
 * values: one thread at a time writes one, any number read it. onnxflow_run_options_cancel may be
 * called from any thread while a run uses those options.
 *
 *   onnxflow_session* session = NULL;
 *   onnxflow_status* st = onnxflow_session_load("model.onnx", NULL, &session);
 *   if (st) { fprintf(stderr, "%s\n", onnxflow_status_message(st)); onnxflow_status_free(st); }
 */
#ifndef ONNXFLOW_ONNXFLOW_C_H_
#define ONNXFLOW_ONNXFLOW_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ONNXFLOW_C_EXPORT __attribute__((visibility("default")))
#else
#define ONNXFLOW_C_EXPORT
#endif

/* The same values as onnxflow::StatusCode. */
typedef enum onnxflow_code {
  ONNXFLOW_OK = 0,
  ONNXFLOW_INVALID_ARGUMENT = 1,
  ONNXFLOW_NOT_FOUND = 2,
  ONNXFLOW_UNIMPLEMENTED = 3,
  ONNXFLOW_RESOURCE_EXHAUSTED = 4,
  ONNXFLOW_CANCELLED = 5,
  ONNXFLOW_DEADLINE_EXCEEDED = 6,
  ONNXFLOW_FAILED_PRECONDITION = 7,
  ONNXFLOW_OUT_OF_RANGE = 8,
  ONNXFLOW_INTERNAL = 9
} onnxflow_code;

/* Element types: the values of TensorProto.DataType in the ONNX spec (as onnxflow::DataType).
 * Tensors of every fixed-size type cross the C API; strings do not (ONNXFLOW_UNIMPLEMENTED). */
typedef enum onnxflow_dtype {
  ONNXFLOW_UNDEFINED = 0,
  ONNXFLOW_FLOAT = 1,
  ONNXFLOW_UINT8 = 2,
  ONNXFLOW_INT8 = 3,
  ONNXFLOW_UINT16 = 4,
  ONNXFLOW_INT16 = 5,
  ONNXFLOW_INT32 = 6,
  ONNXFLOW_INT64 = 7,
  ONNXFLOW_STRING = 8,
  ONNXFLOW_BOOL = 9,
  ONNXFLOW_FLOAT16 = 10,
  ONNXFLOW_DOUBLE = 11,
  ONNXFLOW_UINT32 = 12,
  ONNXFLOW_UINT64 = 13,
  ONNXFLOW_COMPLEX64 = 14,
  ONNXFLOW_COMPLEX128 = 15,
  ONNXFLOW_BFLOAT16 = 16
} onnxflow_dtype;

typedef struct onnxflow_status onnxflow_status;
typedef struct onnxflow_session_options onnxflow_session_options;
typedef struct onnxflow_run_options onnxflow_run_options;
typedef struct onnxflow_session onnxflow_session;
typedef struct onnxflow_tensor onnxflow_tensor;

/* "0.1.0": the library's version (ONNXFLOW_VERSION_STRING of the build). */
ONNXFLOW_C_EXPORT const char* onnxflow_version(void);

/* ---- status ---- */
ONNXFLOW_C_EXPORT onnxflow_code onnxflow_status_code(const onnxflow_status* status);  /* NULL: OK */
/* The message ("" for NULL); valid until the status is freed. */
ONNXFLOW_C_EXPORT const char* onnxflow_status_message(const onnxflow_status* status);
/* "InvalidArgument", "NotFound", ... */
ONNXFLOW_C_EXPORT const char* onnxflow_code_name(onnxflow_code code);
ONNXFLOW_C_EXPORT void onnxflow_status_free(onnxflow_status* status);

/* ---- session options (how a model is loaded) ---- */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_session_options_create(onnxflow_session_options** out);
ONNXFLOW_C_EXPORT void onnxflow_session_options_free(onnxflow_session_options* options);
/* Cores the session may use; 0 = all (the default). */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_session_options_set_threads(onnxflow_session_options* options,
                                                                       int threads);
/* Nonzero: run nodes one after another on the calling thread instead of as a dataflow graph. */
ONNXFLOW_C_EXPORT void onnxflow_session_options_set_sequential(onnxflow_session_options* options, int sequential);
/* Zero: run the graph as written (no constant folding or fusions at load). */
ONNXFLOW_C_EXPORT void onnxflow_session_options_set_optimize(onnxflow_session_options* options, int optimize);

/* ---- run options (one run or several: deadline and cancellation) ---- */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_run_options_create(onnxflow_run_options** out);
ONNXFLOW_C_EXPORT void onnxflow_run_options_free(onnxflow_run_options* options);
/* A run with these options ends with ONNXFLOW_DEADLINE_EXCEEDED when it takes longer than
 * `timeout_ms` from its start (checked between nodes and loop iterations). <= 0: no deadline. */
ONNXFLOW_C_EXPORT void onnxflow_run_options_set_timeout_ms(onnxflow_run_options* options, double timeout_ms);
/* Runs using these options end with ONNXFLOW_CANCELLED soon after (those still to start at once).
 * Safe from any thread while runs use the options. */
ONNXFLOW_C_EXPORT void onnxflow_run_options_cancel(onnxflow_run_options* options);
/* Clears the cancel flag so the options can serve new runs. */
ONNXFLOW_C_EXPORT void onnxflow_run_options_reset_cancel(onnxflow_run_options* options);

/* ---- tensors ---- */
/* A tensor owning fresh zero-filled storage. `dims` may be NULL when `rank` is 0 (a scalar). */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_tensor_create(onnxflow_dtype dtype, const int64_t* dims, size_t rank,
                                                         onnxflow_tensor** out);
/* A tensor that reads the caller's `data` (`nbytes` must equal the element count times the element
 * size) without copying it. The caller keeps it alive and unchanged until the tensor is freed and
 * every run that received it has returned. */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_tensor_create_borrowed(onnxflow_dtype dtype, const int64_t* dims,
                                                                  size_t rank, void* data, size_t nbytes,
                                                                  onnxflow_tensor** out);
ONNXFLOW_C_EXPORT void onnxflow_tensor_free(onnxflow_tensor* tensor);
ONNXFLOW_C_EXPORT onnxflow_dtype onnxflow_tensor_dtype(const onnxflow_tensor* tensor);
ONNXFLOW_C_EXPORT size_t onnxflow_tensor_rank(const onnxflow_tensor* tensor);
/* The dimensions (rank of them); valid while the tensor lives. */
ONNXFLOW_C_EXPORT const int64_t* onnxflow_tensor_dims(const onnxflow_tensor* tensor);
ONNXFLOW_C_EXPORT int64_t onnxflow_tensor_element_count(const onnxflow_tensor* tensor);
ONNXFLOW_C_EXPORT size_t onnxflow_tensor_nbytes(const onnxflow_tensor* tensor);
/* The elements, row-major, packed; valid while the tensor lives. */
ONNXFLOW_C_EXPORT void* onnxflow_tensor_data(onnxflow_tensor* tensor);
ONNXFLOW_C_EXPORT const void* onnxflow_tensor_const_data(const onnxflow_tensor* tensor);

/* ---- sessions ---- */
/* `options` may be NULL (the defaults). */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_session_load(const char* path, const onnxflow_session_options* options,
                                                        onnxflow_session** out);
/* A serialized ModelProto in memory (copied; the caller may free it on return). `directory`
 * resolves external data; NULL or "" refuses models that need it. */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_session_load_bytes(const void* data, size_t size,
                                                              const onnxflow_session_options* options,
                                                              const char* directory, onnxflow_session** out);
/* Runs still going keep what they need alive; free when no call on this session is in progress. */
ONNXFLOW_C_EXPORT void onnxflow_session_free(onnxflow_session* session);

/* The graph inputs the caller supplies (or, with an initializer, may) and the outputs. Names and
 * dims stay valid while the session lives. An index out of range gives NULL / 0. */
ONNXFLOW_C_EXPORT size_t onnxflow_session_input_count(const onnxflow_session* session);
ONNXFLOW_C_EXPORT size_t onnxflow_session_output_count(const onnxflow_session* session);
ONNXFLOW_C_EXPORT const char* onnxflow_session_input_name(const onnxflow_session* session, size_t index);
ONNXFLOW_C_EXPORT const char* onnxflow_session_output_name(const onnxflow_session* session, size_t index);
/* Declared element type, rank and dims (-1 for a dynamic dimension). `*dims` may be NULL when the
 * rank is 0 or unknown; `*has_shape` is 0 when the model declares no rank. Any out pointer may be NULL. */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_session_input_info(const onnxflow_session* session, size_t index,
                                                              onnxflow_dtype* dtype, size_t* rank,
                                                              const int64_t** dims, int* has_shape);
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_session_output_info(const onnxflow_session* session, size_t index,
                                                               onnxflow_dtype* dtype, size_t* rank,
                                                               const int64_t** dims, int* has_shape);

/* What the model file says about itself (ModelProto fields, issue 25). Strings stay valid while
 * the session lives; "" when the model gives none (NULL for a NULL session or an index out of range). */
ONNXFLOW_C_EXPORT const char* onnxflow_session_producer_name(const onnxflow_session* session);
ONNXFLOW_C_EXPORT const char* onnxflow_session_producer_version(const onnxflow_session* session);
ONNXFLOW_C_EXPORT const char* onnxflow_session_domain(const onnxflow_session* session);
ONNXFLOW_C_EXPORT const char* onnxflow_session_doc_string(const onnxflow_session* session);
ONNXFLOW_C_EXPORT const char* onnxflow_session_graph_name(const onnxflow_session* session);
ONNXFLOW_C_EXPORT int64_t onnxflow_session_model_version(const onnxflow_session* session);
ONNXFLOW_C_EXPORT int64_t onnxflow_session_ir_version(const onnxflow_session* session);
/* metadata_props in file order. */
ONNXFLOW_C_EXPORT size_t onnxflow_session_metadata_count(const onnxflow_session* session);
ONNXFLOW_C_EXPORT const char* onnxflow_session_metadata_key(const onnxflow_session* session, size_t index);
ONNXFLOW_C_EXPORT const char* onnxflow_session_metadata_value(const onnxflow_session* session, size_t index);
/* Opset imports: domain ("" for ai.onnx) and version; the version is -1 for an index out of range. */
ONNXFLOW_C_EXPORT size_t onnxflow_session_opset_count(const onnxflow_session* session);
ONNXFLOW_C_EXPORT const char* onnxflow_session_opset_domain(const onnxflow_session* session, size_t index);
ONNXFLOW_C_EXPORT int64_t onnxflow_session_opset_version(const onnxflow_session* session, size_t index);

/* Runs the model. Inputs are matched by name (`input_names[i]` is `inputs[i]`). The outputs named
 * in `output_names` are written to `outputs[0..output_count)` as new tensors the caller frees; with
 * `output_names` NULL every graph output is returned in graph order (`output_count` must then equal
 * onnxflow_session_output_count). `run_options` may be NULL. On failure nothing is written to
 * `outputs`. Callable from any number of threads on one session at once. With `output_names`,
 * only the nodes those outputs depend on run. */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_session_run(const onnxflow_session* session,
                                                       const onnxflow_run_options* run_options,
                                                       const char* const* input_names,
                                                       const onnxflow_tensor* const* inputs, size_t input_count,
                                                       const char* const* output_names, size_t output_count,
                                                       onnxflow_tensor** outputs);

/* Runs the model into caller-provided tensors (ONNX Runtime's IO binding): `outputs[i]` (made with
 * onnxflow_tensor_create or _create_borrowed, so a host may reuse one buffer run after run) receives
 * the output named `output_names[i]`, written into its bytes. Only the nodes those outputs need run.
 * A tensor of another type or shape than its output is INVALID_ARGUMENT naming the output and both
 * shapes, and then no tensor is written. An unknown name is NOT_FOUND. */
ONNXFLOW_C_EXPORT onnxflow_status* onnxflow_session_run_into(const onnxflow_session* session,
                                                            const onnxflow_run_options* run_options,
                                                            const char* const* input_names,
                                                            const onnxflow_tensor* const* inputs, size_t input_count,
                                                            const char* const* output_names,
                                                            onnxflow_tensor* const* outputs, size_t output_count);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* ONNXFLOW_ONNXFLOW_C_H_ */
