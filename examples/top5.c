/* Loads SqueezeNet through the C API, runs it on a fixed input and prints the five most likely
 * classes: the same as top5.cc and top5.py. */
#include <onnxflow/onnxflow_c.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(onnxflow_status* status) {
  fprintf(stderr, "%s: %s\n", onnxflow_code_name(onnxflow_status_code(status)), onnxflow_status_message(status));
  onnxflow_status_free(status);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s squeezenet.onnx\n", argv[0]);
    return 2;
  }
  onnxflow_session* session = NULL;
  onnxflow_status* status = onnxflow_session_load(argv[1], NULL, &session);
  if (status) return fail(status);
  const int64_t dims[4] = {1, 3, 224, 224};
  onnxflow_tensor* image = NULL;
  if ((status = onnxflow_tensor_create(ONNXFLOW_FLOAT, dims, 4, &image))) return fail(status);
  float* pixels = (float*)onnxflow_tensor_data(image);
  for (int64_t i = 0; i < onnxflow_tensor_element_count(image); ++i) pixels[i] = (float)(i % 97) / 97.0f - 0.5f;

  const char* input_names[1] = {"data_0"};
  const onnxflow_tensor* inputs[1] = {image};
  const char* output_names[1] = {"softmaxout_1"};
  onnxflow_tensor* probs = NULL;
  status = onnxflow_session_run(session, NULL, input_names, inputs, 1, output_names, 1, &probs);
  if (status) return fail(status);
  const float* p = (const float*)onnxflow_tensor_const_data(probs);
  const int64_t n = onnxflow_tensor_element_count(probs);
  int taken[5];
  for (int k = 0; k < 5; ++k) {  /* the k-th largest; the lower index first among equals */
    int best = -1;
    for (int64_t i = 0; i < n; ++i) {
      int used = 0;
      for (int j = 0; j < k; ++j) used |= taken[j] == i;
      if (!used && (best < 0 || p[i] > p[best])) best = (int)i;
    }
    taken[k] = best;
    printf("%d %.6f\n", best, p[best]);
  }
  onnxflow_tensor_free(probs);
  onnxflow_tensor_free(image);
  onnxflow_session_free(session);
  return 0;
}
