#include "io/checkpoint.h"

#include <filesystem>
#include <set>

#include "core/error.h"
#include "io/json_file.h"

namespace fs = std::filesystem;

namespace tf {

bool path_exists(const std::string& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

Checkpoint Checkpoint::open_file(const std::string& path) {
  Checkpoint c;
  c.where_ = path;
  c.files_.push_back(SafetensorsFile::open(path));
  for (auto& [name, e] : c.files_[0]->entries()) c.index_[name] = 0;
  return c;
}

Checkpoint Checkpoint::open_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(dir + ": not a folder");
  for (const char* idx_name : {"model.safetensors.index.json", "diffusion_pytorch_model.safetensors.index.json"}) {
    std::string idx = (fs::path(dir) / idx_name).string();
    if (!path_exists(idx)) continue;
    Json j = load_json_file(idx);
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      fail(idx + ": expected an object with a \"weight_map\" object");
    Checkpoint c;
    c.where_ = dir;
    std::map<std::string, size_t> file_ids;
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
      if (!it->is_string()) fail(idx + ": weight_map \"" + it.key() + "\" must name a file");
      std::string shard = it->get<std::string>();
      if (shard.find('/') != std::string::npos || shard.find("..") != std::string::npos)
        fail(idx + ": shard name \"" + shard + "\" must be a plain file name in the folder");
      if (!file_ids.count(shard)) {
        std::string sp = (fs::path(dir) / shard).string();
        if (!path_exists(sp)) fail(idx + ": shard \"" + shard + "\" named for tensor \"" + it.key() + "\" is missing");
        file_ids[shard] = c.files_.size();
        c.files_.push_back(SafetensorsFile::open(sp));
      }
      size_t id = file_ids[shard];
      if (!c.files_[id]->has(it.key()))
        fail(c.files_[id]->path() + ": tensor \"" + it.key() + "\" named by " + idx + " is not in this shard");
      c.index_[it.key()] = id;
    }
    return c;
  }
  std::vector<std::string> found;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors") found.push_back(e.path().string());
  if (found.empty()) fail(dir + ": no *.safetensors file and no model.safetensors.index.json");
  if (found.size() > 1) fail(dir + ": several *.safetensors files but no model.safetensors.index.json to say which to use");
  Checkpoint c = open_file(found[0]);
  c.where_ = dir;
  return c;
}

bool Checkpoint::has(const std::string& name) const { return index_.count(name) > 0; }

Tensor Checkpoint::get(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) fail(where_ + ": missing tensor \"" + name + "\"");
  return files_[it->second]->get(name);
}

Tensor Checkpoint::get(const std::string& name, DType dtype, const Shape& shape) const {
  Tensor t = get(name);
  expect_tensor(t, file_of(name), name, dtype, shape);
  return t;
}

std::string Checkpoint::file_of(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? where_ : files_[it->second]->path();
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> n;
  for (auto& [k, v] : index_) n.push_back(k);
  return n;
}

std::string resolve_component(const std::string& model_dir, const std::string& component) {
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) fail("--model " + model_dir + ": not a folder");
  if (path_exists((fs::path(model_dir) / "model_index.json").string())) {
    fs::path sub = fs::path(model_dir) / component;
    if (!fs::is_directory(sub, ec))
      fail("--model " + model_dir + ": pipeline folder (model_index.json) without a " + component + "/ folder");
    return sub.string();
  }
  if (path_exists((fs::path(model_dir) / "config.json").string())) return model_dir;
  fail("--model " + model_dir + ": neither a pipeline folder (model_index.json) nor a component folder (config.json)");
}

}  // namespace tf
