// Tensors stored outside the model file (TensorProto.data_location = EXTERNAL).
//
// The location is a path relative to the model's folder. A model is untrusted input, so the path
// may not be absolute, may not contain "..", and may not resolve (through symlinks) outside the
// folder; offset and length must lie within the file. Files are memory-mapped once and shared by
// every tensor that points into them.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "include/onnxflow/status.h"
#include "proto/onnx.pb.h"

namespace onnxflow::graph {

class ExternalDataFiles {
 public:
  explicit ExternalDataFiles(std::string directory) : directory_(std::move(directory)) {}
  ~ExternalDataFiles();

  // The bytes `tensor` refers to, valid while this object lives.
  Result<std::string_view> Bytes(const onnx::TensorProto& tensor);
  // Lets the whole pages inside `bytes` (from Bytes) leave the resident set once they are copied:
  // the file's pages and the tensors' copies then never stay resident side by side, and the load
  // peaks at the weights' size, not twice it (ViT-S with external data: 190 -> 108 MB). Read again,
  // the pages come back from the file.
  void Release(std::string_view bytes) const;

 private:
  struct Mapping {
    void* address = nullptr;
    size_t size = 0;
  };
  Result<const Mapping*> Map(const std::string& location, const std::string& tensor_name);

  std::string directory_;
  std::map<std::string, Mapping> files_;
};

}  // namespace onnxflow::graph
