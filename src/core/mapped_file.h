#pragma once
// A read-only memory map of a whole file; tensor data is used in place, never copied at load.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tf {

class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole (small) file into a string; errors name the file.
std::string read_text_file(const std::string& path, size_t max_bytes = size_t(1) << 30);

}  // namespace tf
