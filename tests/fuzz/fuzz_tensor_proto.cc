// Fuzz target: value files. The bytes are read as a TensorProto, a SequenceProto and an
// OptionalProto (TensorFromProto and friends, as the loader and run_model --input do), and, when
// they start with the NumPy magic, as a .npy file through ReadValueFile.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "include/onnxflow/io.h"
#include "ops/framework/tensor_proto.h"
#include "proto/onnx.pb.h"

namespace {

std::string NpyPath() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/onnxflow_fuzz_" + std::to_string(getpid()) + ".npy";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnxflow;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  constexpr int64_t kMaxBytes = int64_t{64} << 20;
  {
    onnx::TensorProto p;
    if (p.ParseFromString(bytes)) {
      auto t = TensorFromProto(p, nullptr, kMaxBytes);
      if (t.ok()) {  // what was accepted must convert back
        onnx::TensorProto back;
        TensorToProto(*t, &back);
      }
      const std::string_view external(bytes);
      auto e = TensorFromProto(p, &external, kMaxBytes);  // as if the model's own bytes were the file
      (void)e;
    }
  }
  {
    onnx::SequenceProto p;
    if (p.ParseFromString(bytes)) (void)ValueFromSequenceProto(p);
  }
  {
    onnx::OptionalProto p;
    if (p.ParseFromString(bytes)) (void)ValueFromOptionalProto(p);
  }
  if (size >= 6 && bytes.compare(0, 6, "\x93NUMPY") == 0) {
    static const std::string path = NpyPath();
    if (FILE* f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
      (void)ReadValueFile(path);
    }
  }
  return 0;
}
