// Loads SqueezeNet (real_squeezenet from the ONNX model zoo), runs it on a fixed input and prints
// the five most likely classes: the same as top5.c and top5.py.
#include <onnxflow/session.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s squeezenet.onnx\n", argv[0]);
    return 2;
  }
  auto session = onnxflow::Session::Load(argv[1]);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().ToString().c_str());
    return 1;
  }
  onnxflow::Tensor image(onnxflow::DataType::kFloat, {1, 3, 224, 224});
  float* pixels = image.mutable_data<float>();
  for (int64_t i = 0; i < image.size(); ++i) pixels[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
  auto outputs = session->Run({{"data_0", image}});
  if (!outputs.ok()) {
    std::fprintf(stderr, "%s\n", outputs.status().ToString().c_str());
    return 1;
  }
  const onnxflow::Tensor& probs = (*outputs)[0].value.tensor();  // softmaxout_1 [1,1000,1,1]
  const float* p = probs.data<float>();
  std::vector<int> order(probs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
  for (int k = 0; k < 5; ++k) std::printf("%d %.6f\n", order[k], p[order[k]]);
  return 0;
}
