#pragma once
// safetensors files: a validated, memory-mapped reader and an atomic writer.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor.h"

namespace tf {

struct TensorEntry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte offsets in the data area
};

class SafetensorsFile {
 public:
  // Maps the file and validates the whole header before anything is used.
  static std::shared_ptr<SafetensorsFile> open(const std::string& path);
  // The same validation over bytes already in memory (`name` stands for the file in errors).
  static std::shared_ptr<SafetensorsFile> parse(std::string bytes, const std::string& name);

  const std::string& path() const { return path_; }
  const std::map<std::string, TensorEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool has(const std::string& name) const { return entries_.count(name) > 0; }

  // A CPU view into the mapping; the view keeps the file mapped. A tensor the file places at an
  // offset misaligned for its dtype comes back as an aligned copy.
  Tensor get(const std::string& name) const;

 private:
  // Checks the header of the `size` bytes at `base` and fills the entries.
  void validate(const uint8_t* base, size_t size);

  std::string path_;
  std::shared_ptr<const void> keep_;  // the mapping or the owned bytes behind every view
  const uint8_t* base_ = nullptr;
  const uint8_t* data_area_ = nullptr;
  std::map<std::string, TensorEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// Checks a tensor's dtype and shape; the error names the source and the tensor.
void expect_tensor(const Tensor& t, const std::string& source, const std::string& name, DType dtype,
                   const Shape& shape);

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes CPU tensors to `path` through a temporary name renamed on success, so a failed write
// leaves no partial output.
void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace tf
