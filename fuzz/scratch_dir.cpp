#include <unistd.h>

#include <filesystem>

#include "fuzz_target.h"

namespace tf::fuzz {

std::string scratch_dir() {
  static const std::string dir = [] {
    auto p = std::filesystem::temp_directory_path() / ("tf-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("tf-fuzz-" + std::to_string(::getpid())), ec);
    });
    return p.string();
  }();
  return dir;
}

}  // namespace tf::fuzz
