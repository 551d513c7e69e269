#include "server/model_repository.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace onnxflow::server {

namespace fs = std::filesystem;

Result<ModelConfig> ParseModelConfig(const std::string& json_text) {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("config.json is not a JSON object");
  ModelConfig config;
  auto integer = [&](const nlohmann::json& obj, const char* key, int64_t* out) -> Status {
    if (!obj.contains(key)) return Status::Ok();
    if (!obj[key].is_number_integer() || obj[key].get<int64_t>() < 0) {
      return InvalidArgument(std::string("config.json: '") + key + "' must be a non-negative integer");
    }
    *out = obj[key].get<int64_t>();
    return Status::Ok();
  };
  static const char* kKnown[] = {"threads", "optimize", "max_tensor_bytes", "max_run_bytes", "dynamic_batching"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      return InvalidArgument("config.json: unknown key '" + key + "'");
    }
  }
  int64_t threads = 0;
  ONNXFLOW_RETURN_IF_ERROR(integer(j, "threads", &threads));
  config.session.threads = static_cast<int>(threads);
  ONNXFLOW_RETURN_IF_ERROR(integer(j, "max_tensor_bytes", &config.session.limits.max_tensor_bytes));
  ONNXFLOW_RETURN_IF_ERROR(integer(j, "max_run_bytes", &config.session.limits.max_run_bytes));
  if (j.contains("optimize")) {
    if (!j["optimize"].is_boolean()) return InvalidArgument("config.json: 'optimize' must be true or false");
    config.session.optimize = j["optimize"].get<bool>();
  }
  if (j.contains("dynamic_batching")) {
    const auto& b = j["dynamic_batching"];
    if (!b.is_object()) return InvalidArgument("config.json: 'dynamic_batching' must be an object");
    int64_t size = 0, delay = config.batching.max_delay.count();
    ONNXFLOW_RETURN_IF_ERROR(integer(b, "max_batch_size", &size));
    ONNXFLOW_RETURN_IF_ERROR(integer(b, "max_delay_us", &delay));
    if (size < 2 || size > 4096) return InvalidArgument("config.json: dynamic_batching.max_batch_size must be 2..4096");
    config.batching.max_batch_size = static_cast<int>(size);
    config.batching.max_delay = std::chrono::microseconds(delay);
  }
  return config;
}

namespace {

bool ValidName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

bool IsVersionName(const std::string& s) {
  return !s.empty() && s.size() < 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<std::map<int64_t, std::shared_ptr<const LoadedModel>>> ModelRepository::LoadFolder(const std::string& name) {
  const fs::path dir = fs::path(root_) / name;
  std::error_code ec;
  ModelConfig config;
  if (fs::exists(dir / "config.json", ec)) {
    std::ifstream in(dir / "config.json");
    std::stringstream text;
    text << in.rdbuf();
    ONNXFLOW_ASSIGN_OR_RETURN(config, ParseModelConfig(text.str()));
  }
  std::map<int64_t, fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string v = entry.path().filename().string();
    if (entry.is_directory(ec) && IsVersionName(v) && fs::exists(entry.path() / "model.onnx", ec)) {
      files[std::stoll(v)] = entry.path() / "model.onnx";
    }
  }
  if (files.empty() && fs::exists(dir / "model.onnx", ec)) files[1] = dir / "model.onnx";
  if (files.empty()) return NotFound("no model.onnx in " + name + "/ or its numbered version folders");
  std::map<int64_t, std::shared_ptr<const LoadedModel>> versions;
  for (const auto& [version, path] : files) {
    auto session = Session::Load(path.string(), config.session);
    if (!session.ok()) return session.status().WithContext("version " + std::to_string(version));
    auto model = std::make_shared<LoadedModel>();
    model->name = name;
    model->version = std::to_string(version);
    model->session = std::make_shared<const Session>(std::move(*session));
    model->metrics = &metrics_->ForModel(name);
    if (config.batching.enabled()) {
      ONNXFLOW_RETURN_IF_ERROR(Batcher::CheckBatchable(*model->session));
      model->batcher = std::make_unique<Batcher>(model->session, config.batching, model->metrics);
    }
    versions[version] = std::move(model);
  }
  return versions;
}

void ModelRepository::LoadAll() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    if (entry.is_directory(ec)) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (!ValidName(name) || name[0] == '.') continue;
    (void)Load(name);  // a failure stays in the index; the other models load
  }
}

ApiStatus ModelRepository::Load(const std::string& name) {
  if (!ValidName(name)) return BadRequest("'" + name + "' is not a model name");
  std::lock_guard<std::mutex> serial(load_mutex_);
  std::error_code ec;
  if (!fs::is_directory(fs::path(root_) / name, ec)) {
    return ModelNotFound("model '" + name + "' is not in the repository");
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Record& r = records_[name];
    if (r.versions.empty()) r.state = "LOADING";
    metrics_->ForModel(name);
  }
  auto loaded = LoadFolder(name);
  std::map<int64_t, std::shared_ptr<const LoadedModel>> old;  // released outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  Record& r = records_[name];
  if (!loaded.ok()) {
    old.swap(r.versions);
    r.state = "UNAVAILABLE";
    r.reason = loaded.status().ToString();
    return Unavailable("model '" + name + "' failed to load: " + r.reason);
  }
  old.swap(r.versions);
  r.versions = std::move(*loaded);
  r.state = "READY";
  r.reason.clear();
  return ApiStatus::Ok();
}

ApiStatus ModelRepository::Unload(const std::string& name) {
  std::lock_guard<std::mutex> serial(load_mutex_);
  std::map<int64_t, std::shared_ptr<const LoadedModel>> old;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = records_.find(name);
  if (it == records_.end()) return ModelNotFound("model '" + name + "' is not in the repository");
  old.swap(it->second.versions);
  it->second.state = "UNAVAILABLE";
  it->second.reason = "unloaded";
  return ApiStatus::Ok();
}

std::shared_ptr<const LoadedModel> ModelRepository::Find(const std::string& name, const std::string& version,
                                                         ApiStatus* error) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = records_.find(name);
  if (it == records_.end()) {
    *error = ModelNotFound("model '" + name + "' is not found");
    return nullptr;
  }
  const Record& r = it->second;
  if (r.versions.empty()) {
    *error = Unavailable("model '" + name + "' is not ready" + (r.reason.empty() ? "" : ": " + r.reason));
    return nullptr;
  }
  if (version.empty()) return r.versions.rbegin()->second;
  auto v = IsVersionName(version) ? r.versions.find(std::stoll(version)) : r.versions.end();
  if (v == r.versions.end()) {
    *error = ModelNotFound("model '" + name + "' has no version '" + version + "'");
    return nullptr;
  }
  return v->second;
}

std::vector<std::string> ModelRepository::Versions(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  auto it = records_.find(name);
  if (it != records_.end()) {
    for (const auto& [v, model] : it->second.versions) out.push_back(std::to_string(v));
  }
  return out;
}

std::vector<ModelIndexEntry> ModelRepository::Index() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ModelIndexEntry> out;
  for (const auto& [name, r] : records_) {
    out.push_back({name, r.versions.empty() ? "" : std::to_string(r.versions.rbegin()->first), r.state, r.reason});
  }
  return out;
}

std::map<std::string, bool> ModelRepository::Readiness() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, bool> out;
  for (const auto& [name, r] : records_) out[name] = !r.versions.empty();
  return out;
}

}  // namespace onnxflow::server
