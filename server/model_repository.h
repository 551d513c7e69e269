// The model repository: one folder per model, loaded at start, and the registry of what is
// loaded (with the repository extension's explicit load and unload).
//
//   DIR/NAME/model.onnx                 one version, "1"
//   DIR/NAME/<n>/model.onnx             numbered versions; a request without one gets the newest
//   DIR/NAME/config.json (optional)     {"threads": 2, "optimize": true,
//                                        "max_tensor_bytes": ..., "max_run_bytes": ...,
//                                        "dynamic_batching": {"max_batch_size": 8, "max_delay_us": 2000}}
//
// A model that fails to load is kept in the index as UNAVAILABLE with the reason; the others serve.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "include/onnxflow/session.h"
#include "server/api_status.h"
#include "server/batcher.h"
#include "server/metrics.h"

namespace onnxflow::server {

struct ModelConfig {
  SessionOptions session;
  BatchingConfig batching;
};
Result<ModelConfig> ParseModelConfig(const std::string& json_text);

// One loaded version of a model. Requests hold it (shared) until they are answered, so an unload
// or reload never pulls a session from under a run.
struct LoadedModel {
  std::string name;
  std::string version;
  std::shared_ptr<const Session> session;
  std::unique_ptr<Batcher> batcher;  // set when the config turns dynamic batching on
  ModelMetrics* metrics = nullptr;
};

struct ModelIndexEntry {
  std::string name;
  std::string version;  // the newest loaded one, or "" when none is
  std::string state;    // "READY", "LOADING", "UNAVAILABLE" (the extension's names)
  std::string reason;   // why it is not ready
};

class ModelRepository {
 public:
  ModelRepository(std::string root, Metrics* metrics) : root_(std::move(root)), metrics_(metrics) {}

  // Loads every model folder of the repository, in name order.
  void LoadAll();
  // Loads (or reloads) one model folder; the old versions serve until the new ones are loaded.
  ApiStatus Load(const std::string& name);
  ApiStatus Unload(const std::string& name);

  // The version to serve ("": the newest), or kNotFound / kUnavailable in `error`.
  std::shared_ptr<const LoadedModel> Find(const std::string& name, const std::string& version, ApiStatus* error) const;
  // Every version that is loaded, oldest first.
  std::vector<std::string> Versions(const std::string& name) const;
  std::vector<ModelIndexEntry> Index() const;
  std::map<std::string, bool> Readiness() const;

 private:
  struct Record {
    std::string state = "UNAVAILABLE";
    std::string reason;
    std::map<int64_t, std::shared_ptr<const LoadedModel>> versions;
  };

  Result<std::map<int64_t, std::shared_ptr<const LoadedModel>>> LoadFolder(const std::string& name);

  const std::string root_;
  Metrics* const metrics_;
  std::mutex load_mutex_;  // one load or unload at a time
  mutable std::mutex mutex_;  // guards records_
  std::map<std::string, Record> records_;
};

}  // namespace onnxflow::server
