#pragma once
// Shared by every fuzz target: a target may reject input only with tf::Error (a clear message);
// any other exception, crash or sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace tf::fuzz {

inline std::string bytes_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Reads every byte of a view so ASan sees any view that points outside its storage.
inline uint8_t touch(const void* p, size_t n) {
  const volatile uint8_t* b = static_cast<const volatile uint8_t*>(p);
  uint8_t acc = 0;
  for (size_t i = 0; i < n; ++i) acc ^= b[i];
  return acc;
}

// A private temporary folder for targets that must go through files; made once per process.
std::string scratch_dir();

// Writes bytes to a file (replacing it).
void write_file(const std::string& path, const uint8_t* data, size_t size);

// scratch_dir()/<component>: links to the embedded tiny pipeline's files of that component
// (weights, index), without its config.json, which the target writes.
std::string component_with_tiny_weights(const std::string& component);

}  // namespace tf::fuzz
