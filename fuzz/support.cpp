#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fuzz_target.h"

namespace fs = std::filesystem;

namespace tf::fuzz {

namespace {
fs::path scratch_path() { return fs::temp_directory_path() / ("tf-fuzz-" + std::to_string(::getpid())); }
}  // namespace

std::string scratch_dir() {
  static const std::string dir = [] {
    fs::create_directories(scratch_path());
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch_path(), ec);
    });
    return scratch_path().string();
  }();
  return dir;
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

std::string component_with_tiny_weights(const std::string& component) {
  fs::path src = fs::path(TF_TEST_DATA) / "tiny-pipeline" / component;
  fs::path dir = fs::path(scratch_dir()) / component;
  fs::create_directories(dir);
  for (auto& e : fs::directory_iterator(src))
    if (e.path().filename() != "config.json" && !fs::exists(dir / e.path().filename()))
      fs::create_symlink(e.path(), dir / e.path().filename());
  return dir.string();
}

}  // namespace tf::fuzz
