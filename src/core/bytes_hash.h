#pragma once
// FNV-1a (64-bit) over bytes: a stable fingerprint, so two builds' or two runs' outputs can be
// compared by one printed number, and a stable seed can come from a name. Not for security.
#include <cstddef>
#include <cstdint>

namespace tf {

constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ull;

// h: the starting value (FNV's offset basis unless a caller keeps an older sequence of values).
constexpr uint64_t bytes_hash(const void* data, size_t n, uint64_t h = kFnvOffsetBasis) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace tf
