#include "graph/external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>

namespace onnxflow::graph {
namespace {

Result<int64_t> ParseNonNegative(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument(what + " '" + text + "' is not a non-negative integer");
  }
  return std::stoll(text);
}

std::string RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) != nullptr ? std::string(buffer) : std::string();
}

}  // namespace

ExternalDataFiles::~ExternalDataFiles() {
  for (auto& [name, m] : files_) {
    if (m.address != nullptr) munmap(m.address, m.size);
  }
}

Result<const ExternalDataFiles::Mapping*> ExternalDataFiles::Map(const std::string& location,
                                                                 const std::string& tensor) {
  auto it = files_.find(location);
  if (it != files_.end()) return &it->second;
  const std::string where = "external data of tensor '" + tensor + "'";
  if (directory_.empty()) return InvalidArgument(where + ": the model was loaded from bytes without a folder");
  // A std::string may hold a NUL the file system would stop at: "w.bin\0junk" must not quietly
  // become "w.bin".
  if (location.find('\0') != std::string::npos) {
    return InvalidArgument(where + ": location contains a NUL byte");
  }
  if (location.empty() || location[0] == '/') {
    return InvalidArgument(where + ": location '" + location + "' must be a relative path");
  }
  for (size_t start = 0; start <= location.size();) {
    size_t end = location.find('/', start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0) {
      return InvalidArgument(where + ": location '" + location + "' leaves the model's folder");
    }
    start = end + 1;
  }
  const std::string folder = RealPath(directory_);
  const std::string file = RealPath(directory_ + "/" + location);
  if (file.empty()) return NotFound(where + ": file '" + location + "' does not exist");
  if (folder.empty() || file.compare(0, folder.size() + 1, folder + "/") != 0) {
    return InvalidArgument(where + ": location '" + location + "' resolves outside the model's folder");
  }
  // O_NONBLOCK: opening a FIFO for reading blocks until a writer appears (forever, for a hostile
  // model); with it the open returns at once and the fstat below refuses anything but a regular
  // file. O_NOCTTY keeps a terminal device from becoming ours. Neither affects a regular file.
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return NotFound(where + ": cannot open '" + location + "'");
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return InvalidArgument(where + ": '" + location + "' is not a regular file");
  }
  Mapping m;
  m.size = static_cast<size_t>(st.st_size);
  if (m.size > 0) {
    m.address = mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m.address == MAP_FAILED) {
      close(fd);
      return Internal(where + ": cannot map '" + location + "'");
    }
  }
  close(fd);
  return &files_.emplace(location, m).first->second;
}

Result<std::string_view> ExternalDataFiles::Bytes(const onnx::TensorProto& tensor) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      ONNXFLOW_ASSIGN_OR_RETURN(offset, ParseNonNegative(entry.value(), "offset"));
    } else if (entry.key() == "length") {
      ONNXFLOW_ASSIGN_OR_RETURN(length, ParseNonNegative(entry.value(), "length"));
    }
  }
  ONNXFLOW_ASSIGN_OR_RETURN(const Mapping* m, Map(location, tensor.name()));
  const int64_t size = static_cast<int64_t>(m->size);
  if (offset > size || (length >= 0 && length > size - offset)) {
    return InvalidArgument("external data of tensor '" + tensor.name() + "': offset " + std::to_string(offset) +
                           " and length " + std::to_string(length) + " exceed the size of '" + location +
                           "' (" + std::to_string(size) + " bytes)");
  }
  if (length < 0) length = size - offset;
  return std::string_view(static_cast<const char*>(m->address) + offset, static_cast<size_t>(length));
}

void ExternalDataFiles::Release(std::string_view bytes) const {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(bytes.data()) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size()) / page * page;
  // Pages shared with a neighbour's bytes stay: only pages this tensor's bytes fill.
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace onnxflow::graph
