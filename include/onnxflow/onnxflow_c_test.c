/* Drives the C API from C (this file is compiled as C): load from a path and from bytes, run with
 * named inputs and outputs, every error path a caller can reach, deadline and cancel, and four
 * threads running one session at once. Models come from the ONNX test data (the @onnx_tests repository in the runfiles). */
#include "include/onnxflow/onnxflow_c.h"
#include "include/onnxflow/version.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                      \
    }                                                                  \
  } while (0)

/* Expects `status` to carry `code` and a message containing `needle`; frees it. */
static void expect_error(onnxflow_status* status, onnxflow_code code, const char* needle, int line) {
  if (status == NULL) {
    fprintf(stderr, "line %d: expected %s error containing '%s', got OK\n", line, onnxflow_code_name(code), needle);
    ++failures;
    return;
  }
  if (onnxflow_status_code(status) != code || strstr(onnxflow_status_message(status), needle) == NULL) {
    fprintf(stderr, "line %d: expected %s containing '%s', got %s: %s\n", line, onnxflow_code_name(code), needle,
            onnxflow_code_name(onnxflow_status_code(status)), onnxflow_status_message(status));
    ++failures;
  }
  onnxflow_status_free(status);
}
#define EXPECT_ERROR(status, code, needle) expect_error((status), (code), (needle), __LINE__)

static void expect_ok(onnxflow_status* status, int line) {
  if (status != NULL) {
    fprintf(stderr, "line %d: expected OK, got %s: %s\n", line, onnxflow_code_name(onnxflow_status_code(status)),
            onnxflow_status_message(status));
    onnxflow_status_free(status);
    ++failures;
  }
}
#define EXPECT_OK(status) expect_ok((status), __LINE__)

static char path_buf[4096];
static const char* model_path(const char* name) {
  const char* runfiles = getenv("TEST_SRCDIR");
  snprintf(path_buf, sizeof path_buf, "%s/onnx_tests/%s/model.onnx", runfiles ? runfiles : ".", name);
  return path_buf;
}

static const int64_t kAddDims[3] = {3, 4, 5};
enum { kAddCount = 60 };

/* Runs test_add (sum = x + y) with x[i] = i * scale, y[i] = 1 and checks every element. */
static int run_add(const onnxflow_session* session, float scale) {
  float x[kAddCount], y[kAddCount];
  for (int i = 0; i < kAddCount; ++i) {
    x[i] = (float)i * scale;
    y[i] = 1.0f;
  }
  onnxflow_tensor* tx = NULL;
  onnxflow_tensor* ty = NULL;
  onnxflow_status* st = onnxflow_tensor_create_borrowed(ONNXFLOW_FLOAT, kAddDims, 3, x, sizeof x, &tx);
  if (st != NULL) return onnxflow_status_free(st), 0;
  st = onnxflow_tensor_create_borrowed(ONNXFLOW_FLOAT, kAddDims, 3, y, sizeof y, &ty);
  if (st != NULL) return onnxflow_status_free(st), onnxflow_tensor_free(tx), 0;
  const char* names[2] = {"x", "y"};
  const onnxflow_tensor* inputs[2] = {tx, ty};
  const char* out_names[1] = {"sum"};
  onnxflow_tensor* out = NULL;
  st = onnxflow_session_run(session, NULL, names, inputs, 2, out_names, 1, &out);
  onnxflow_tensor_free(tx);
  onnxflow_tensor_free(ty);
  if (st != NULL) return onnxflow_status_free(st), 0;
  int ok = onnxflow_tensor_dtype(out) == ONNXFLOW_FLOAT && onnxflow_tensor_rank(out) == 3 &&
           onnxflow_tensor_element_count(out) == kAddCount && onnxflow_tensor_nbytes(out) == sizeof x;
  const int64_t* dims = onnxflow_tensor_dims(out);
  ok = ok && dims[0] == 3 && dims[1] == 4 && dims[2] == 5;
  const float* sum = (const float*)onnxflow_tensor_const_data(out);
  for (int i = 0; ok && i < kAddCount; ++i) ok = sum[i] == (float)i * scale + 1.0f;
  onnxflow_tensor_free(out);
  return ok;
}

static void* add_thread(void* arg) {
  const onnxflow_session* session = (const onnxflow_session*)arg;
  long good = 0;
  for (int r = 0; r < 50; ++r) good += run_add(session, (float)(r + 1));
  return (void*)good;
}

static void test_load_and_run(void) {
  onnxflow_session* session = NULL;
  EXPECT_OK(onnxflow_session_load(model_path("node/test_add"), NULL, &session));
  if (session == NULL) return;
  EXPECT(onnxflow_session_input_count(session) == 2);
  EXPECT(onnxflow_session_output_count(session) == 1);
  EXPECT(strcmp(onnxflow_session_input_name(session, 1), "y") == 0);
  EXPECT(strcmp(onnxflow_session_output_name(session, 0), "sum") == 0);
  EXPECT(onnxflow_session_input_name(session, 2) == NULL);
  onnxflow_dtype dtype = ONNXFLOW_UNDEFINED;
  size_t rank = 0;
  const int64_t* dims = NULL;
  int has_shape = 0;
  EXPECT_OK(onnxflow_session_input_info(session, 0, &dtype, &rank, &dims, &has_shape));
  EXPECT(dtype == ONNXFLOW_FLOAT && rank == 3 && has_shape == 1 && dims[0] == 3 && dims[1] == 4 && dims[2] == 5);
  EXPECT_ERROR(onnxflow_session_output_info(session, 1, &dtype, &rank, &dims, &has_shape), ONNXFLOW_OUT_OF_RANGE,
               "output index 1 is out of range (the model has 1)");
  EXPECT(run_add(session, 0.5f));

  /* What the model says about itself (the backend test data's ModelProto fields). */
  EXPECT(strcmp(onnxflow_session_producer_name(session), "backend-test") == 0);
  EXPECT(strcmp(onnxflow_session_producer_version(session), "") == 0);
  EXPECT(strcmp(onnxflow_session_graph_name(session), "test_add") == 0);
  EXPECT(onnxflow_session_ir_version(session) == 7);
  EXPECT(onnxflow_session_model_version(session) == 0);
  EXPECT(onnxflow_session_metadata_count(session) == 0);
  EXPECT(onnxflow_session_metadata_key(session, 0) == NULL);
  EXPECT(onnxflow_session_opset_count(session) == 1);
  EXPECT(strcmp(onnxflow_session_opset_domain(session, 0), "") == 0);
  EXPECT(onnxflow_session_opset_version(session, 0) == 14);
  EXPECT(onnxflow_session_opset_version(session, 1) == -1);
  EXPECT(onnxflow_session_producer_name(NULL) == NULL);

  /* Every output in graph order: output_names NULL. */
  onnxflow_tensor* x = NULL;
  onnxflow_tensor* y = NULL;
  EXPECT_OK(onnxflow_tensor_create(ONNXFLOW_FLOAT, kAddDims, 3, &x));
  EXPECT_OK(onnxflow_tensor_create(ONNXFLOW_FLOAT, kAddDims, 3, &y));
  ((float*)onnxflow_tensor_data(x))[7] = 2.5f;
  ((float*)onnxflow_tensor_data(y))[7] = 4.0f;
  const char* names[2] = {"x", "y"};
  const onnxflow_tensor* inputs[2] = {x, y};
  onnxflow_tensor* out = NULL;
  EXPECT_OK(onnxflow_session_run(session, NULL, names, inputs, 2, NULL, 1, &out));
  if (out != NULL) {
    EXPECT(((const float*)onnxflow_tensor_const_data(out))[7] == 6.5f);
    EXPECT(((const float*)onnxflow_tensor_const_data(out))[8] == 0.0f);
  }
  onnxflow_tensor_free(out);

  /* Into the caller's buffers: a borrowed array is written in place; one that does not fit is
   * refused and left as it was. */
  {
    static float sum_buffer[60];
    sum_buffer[7] = -1.0f;
    onnxflow_tensor* bound = NULL;
    EXPECT_OK(onnxflow_tensor_create_borrowed(ONNXFLOW_FLOAT, kAddDims, 3, sum_buffer, sizeof sum_buffer, &bound));
    const char* sum_name[1] = {"sum"};
    onnxflow_tensor* const into[1] = {bound};
    EXPECT_OK(onnxflow_session_run_into(session, NULL, names, inputs, 2, sum_name, into, 1));
    EXPECT(sum_buffer[7] == 6.5f);
    onnxflow_tensor* small_out = NULL;
    const int64_t two[1] = {2};
    EXPECT_OK(onnxflow_tensor_create(ONNXFLOW_FLOAT, two, 1, &small_out));
    ((float*)onnxflow_tensor_data(small_out))[0] = 9.0f;
    onnxflow_tensor* const wrong[1] = {small_out};
    EXPECT_ERROR(onnxflow_session_run_into(session, NULL, names, inputs, 2, sum_name, wrong, 1),
                 ONNXFLOW_INVALID_ARGUMENT, "output 'sum' has shape [3,4,5], the buffer given for it has shape [2]");
    EXPECT(((const float*)onnxflow_tensor_const_data(small_out))[0] == 9.0f);
    const char* no_such[1] = {"total"};
    EXPECT_ERROR(onnxflow_session_run_into(session, NULL, names, inputs, 2, no_such, into, 1), ONNXFLOW_NOT_FOUND,
                 "the model has no output named 'total'");
    onnxflow_tensor_free(small_out);
    onnxflow_tensor_free(bound);
  }

  /* Error paths of run: nothing is written to outputs. */
  out = NULL;
  const char* wrong_out[1] = {"total"};
  EXPECT_ERROR(onnxflow_session_run(session, NULL, names, inputs, 2, wrong_out, 1, &out), ONNXFLOW_NOT_FOUND,
               "the model has no output named 'total'");
  EXPECT_ERROR(onnxflow_session_run(session, NULL, names, inputs, 2, NULL, 2, &out), ONNXFLOW_INVALID_ARGUMENT,
               "output_count must be the model's 1 outputs, got 2");
  EXPECT_ERROR(onnxflow_session_run(session, NULL, names, inputs, 1, NULL, 1, &out), ONNXFLOW_INVALID_ARGUMENT, "'y'");
  const char* unknown[2] = {"x", "z"};
  EXPECT_ERROR(onnxflow_session_run(session, NULL, unknown, inputs, 2, NULL, 1, &out), ONNXFLOW_INVALID_ARGUMENT, "'z'");
  onnxflow_tensor* small = NULL;
  const int64_t small_dims[1] = {2};
  EXPECT_OK(onnxflow_tensor_create(ONNXFLOW_FLOAT, small_dims, 1, &small));
  const onnxflow_tensor* mismatched[2] = {x, small};
  onnxflow_status* st = onnxflow_session_run(session, NULL, names, mismatched, 2, NULL, 1, &out);
  EXPECT(st != NULL);
  if (st != NULL) {
    EXPECT(strstr(onnxflow_status_message(st), "y") != NULL);
    onnxflow_status_free(st);
  }
  EXPECT(out == NULL);
  EXPECT_ERROR(onnxflow_session_run(NULL, NULL, names, inputs, 2, NULL, 1, &out), ONNXFLOW_INVALID_ARGUMENT,
               "session is NULL");

  /* Cancel before the run: it ends Cancelled; after reset_cancel it runs. */
  onnxflow_run_options* run_options = NULL;
  EXPECT_OK(onnxflow_run_options_create(&run_options));
  onnxflow_run_options_cancel(run_options);
  EXPECT_ERROR(onnxflow_session_run(session, run_options, names, inputs, 2, NULL, 1, &out), ONNXFLOW_CANCELLED, "");
  onnxflow_run_options_reset_cancel(run_options);
  EXPECT_OK(onnxflow_session_run(session, run_options, names, inputs, 2, NULL, 1, &out));
  onnxflow_tensor_free(out);
  onnxflow_run_options_free(run_options);

  /* Four threads on one session. */
  pthread_t threads[4];
  for (int t = 0; t < 4; ++t) pthread_create(&threads[t], NULL, add_thread, session);
  for (int t = 0; t < 4; ++t) {
    void* good = NULL;
    pthread_join(threads[t], &good);
    EXPECT((long)good == 50);
  }

  onnxflow_tensor_free(small);
  onnxflow_tensor_free(x);
  onnxflow_tensor_free(y);
  onnxflow_session_free(session);
}

static void test_load_bytes_and_options(void) {
  FILE* f = fopen(model_path("node/test_add"), "rb");
  EXPECT(f != NULL);
  if (f == NULL) return;
  char bytes[1 << 16];
  const size_t size = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  onnxflow_session_options* options = NULL;
  EXPECT_OK(onnxflow_session_options_create(&options));
  EXPECT_OK(onnxflow_session_options_set_threads(options, 1));
  EXPECT_ERROR(onnxflow_session_options_set_threads(options, -1), ONNXFLOW_INVALID_ARGUMENT,
               "threads must be 0 (all cores) or more, got -1");
  onnxflow_session_options_set_sequential(options, 1);
  onnxflow_session_options_set_optimize(options, 0);
  onnxflow_session* session = NULL;
  EXPECT_OK(onnxflow_session_load_bytes(bytes, size, options, NULL, &session));
  if (session != NULL) EXPECT(run_add(session, 3.0f));
  onnxflow_session_free(session);

  /* Truncated bytes and a missing file are refused with a message. */
  session = NULL;
  onnxflow_status* st = onnxflow_session_load_bytes(bytes, size / 2, options, "", &session);
  EXPECT(st != NULL && onnxflow_status_code(st) == ONNXFLOW_INVALID_ARGUMENT && session == NULL);
  onnxflow_status_free(st);
  EXPECT_ERROR(onnxflow_session_load("no/such/model.onnx", options, &session), ONNXFLOW_NOT_FOUND,
               "no/such/model.onnx");
  EXPECT_ERROR(onnxflow_session_load(NULL, options, &session), ONNXFLOW_INVALID_ARGUMENT, "path is NULL");
  EXPECT(session == NULL);
  onnxflow_session_options_free(options);
}

static void test_tensors(void) {
  onnxflow_tensor* t = NULL;
  const int64_t dims[2] = {2, 3};
  float data[6] = {0};
  EXPECT_ERROR(onnxflow_tensor_create_borrowed(ONNXFLOW_FLOAT, dims, 2, data, 5 * sizeof(float), &t),
               ONNXFLOW_INVALID_ARGUMENT, "a float32 tensor of shape [2,3] takes 24 bytes, got 20");
  EXPECT_ERROR(onnxflow_tensor_create(ONNXFLOW_STRING, dims, 2, &t), ONNXFLOW_UNIMPLEMENTED,
               "string tensors do not cross the C API");
  EXPECT_ERROR(onnxflow_tensor_create((onnxflow_dtype)99, dims, 2, &t), ONNXFLOW_INVALID_ARGUMENT,
               "unknown element type 99");
  const int64_t negative[2] = {2, -3};
  EXPECT_ERROR(onnxflow_tensor_create(ONNXFLOW_FLOAT, negative, 2, &t), ONNXFLOW_INVALID_ARGUMENT,
               "dimension 1 is negative (-3)");
  EXPECT_ERROR(onnxflow_tensor_create(ONNXFLOW_FLOAT, NULL, 2, &t), ONNXFLOW_INVALID_ARGUMENT, "dims is NULL");
  EXPECT(t == NULL);
  EXPECT_OK(onnxflow_tensor_create(ONNXFLOW_INT64, NULL, 0, &t));  /* a scalar */
  EXPECT(t != NULL && onnxflow_tensor_rank(t) == 0 && onnxflow_tensor_element_count(t) == 1 &&
         onnxflow_tensor_nbytes(t) == 8 && *(const int64_t*)onnxflow_tensor_const_data(t) == 0);
  onnxflow_tensor_free(t);
  onnxflow_tensor_free(NULL);
  EXPECT(onnxflow_status_code(NULL) == ONNXFLOW_OK && strcmp(onnxflow_status_message(NULL), "") == 0);
  EXPECT(strcmp(onnxflow_code_name(ONNXFLOW_DEADLINE_EXCEEDED), "DeadlineExceeded") == 0);
}

static void test_sequence_output_and_deadline(void) {
  /* A sequence output does not cross the C API: Unimplemented, naming the output. */
  onnxflow_session* session = NULL;
  EXPECT_OK(onnxflow_session_load(model_path("node/test_split_to_sequence_nokeepdims"), NULL, &session));
  if (session == NULL) return;
  const int64_t dims[2] = {3, 6};
  onnxflow_tensor* data = NULL;
  EXPECT_OK(onnxflow_tensor_create(ONNXFLOW_FLOAT, dims, 2, &data));
  const char* names[1] = {"data"};
  const onnxflow_tensor* inputs[1] = {data};
  onnxflow_tensor* out = NULL;
  EXPECT_ERROR(onnxflow_session_run(session, NULL, names, inputs, 1, NULL, 1, &out), ONNXFLOW_UNIMPLEMENTED,
               "output 'seq' is a sequence; the C API returns tensors only");
  EXPECT(out == NULL);
  onnxflow_session_free(session);

  /* A deadline that passes before the first node: DeadlineExceeded. */
  EXPECT_OK(onnxflow_session_load(model_path("models/real_squeezenet"), NULL, &session));
  if (session != NULL) {
    onnxflow_run_options* run_options = NULL;
    EXPECT_OK(onnxflow_run_options_create(&run_options));
    onnxflow_run_options_set_timeout_ms(run_options, 1e-6);
    const int64_t image[4] = {1, 3, 224, 224};
    onnxflow_tensor* x = NULL;
    EXPECT_OK(onnxflow_tensor_create(ONNXFLOW_FLOAT, image, 4, &x));
    const char* in_names[1] = {"data_0"};
    const onnxflow_tensor* in[1] = {x};
    EXPECT_ERROR(onnxflow_session_run(session, run_options, in_names, in, 1, NULL, 1, &out),
                 ONNXFLOW_DEADLINE_EXCEEDED, "");
    onnxflow_tensor_free(x);
    onnxflow_run_options_free(run_options);
    onnxflow_session_free(session);
  }
  onnxflow_tensor_free(data);
}

int main(void) {
  EXPECT(strcmp(onnxflow_version(), ONNXFLOW_VERSION_STRING) == 0);
  test_tensors();
  test_load_and_run();
  test_load_bytes_and_options();
  test_sequence_output_and_deadline();
  if (failures > 0) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
