#include "backend/cuda/runtime/capture_arena.h"

#include <iterator>

namespace tf::cuda {

namespace {
constexpr size_t kAlign = 256;
}

size_t CaptureArena::take(size_t bytes) {
  const size_t len = (bytes + kAlign - 1) / kAlign * kAlign;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < len) continue;
    const size_t off = it->first, rest = it->second - len;
    free_.erase(it);
    if (rest) free_.emplace(off + len, rest);
    live_.emplace(off, len);
    return off;
  }
  // no freed range fits: grow at the end (merging a free range that ends there)
  size_t off = high_water_;
  if (!free_.empty()) {
    auto last = std::prev(free_.end());
    if (last->first + last->second == high_water_) {
      off = last->first;
      free_.erase(last);
    }
  }
  if (base_ && off + len > bytes_) {
    if (off != high_water_) free_.emplace(off, high_water_ - off);
    return SIZE_MAX;
  }
  high_water_ = off + len;
  live_.emplace(off, len);
  return off;
}

bool CaptureArena::give_back(size_t offset) {
  auto it = live_.find(offset);
  if (it == live_.end()) return false;
  size_t off = it->first, len = it->second;
  live_.erase(it);
  auto next = free_.lower_bound(off);
  if (next != free_.end() && off + len == next->first) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += len;
      return true;
    }
  }
  free_.emplace(off, len);
  return true;
}

CaptureArena*& current_capture_arena() {
  thread_local CaptureArena* arena = nullptr;
  return arena;
}

}  // namespace tf::cuda
