#pragma once
// A checkpoint: one safetensors file or shards named by model.safetensors.index.json; tensors are
// found by name across shards and checked for dtype and shape on request.
#include <memory>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace tf {

class Checkpoint {
 public:
  // A folder holding model.safetensors.index.json, or exactly one *.safetensors file.
  static Checkpoint open_folder(const std::string& dir);
  static Checkpoint open_file(const std::string& path);

  bool has(const std::string& name) const;
  Tensor get(const std::string& name) const;
  Tensor get(const std::string& name, DType dtype, const Shape& shape) const;
  std::string file_of(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::string& where() const { return where_; }

 private:
  std::string where_;
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  std::map<std::string, size_t> index_;  // tensor -> file
};

// --model DIR: a pipeline folder (model_index.json with the component's sub-folder) or the
// component's own folder (config.json). Returns the component folder.
std::string resolve_component(const std::string& model_dir, const std::string& component);
bool path_exists(const std::string& p);

}  // namespace tf
