#pragma once
// Tensors made while work is recorded, carved from one device buffer the graph owns, so the graph
// holds no allocation or free nodes: two kernels next to each other in the stream stay next to
// each other in the graph, which dependent launches need. Freed ranges are reused first fit; the
// graph's kernels run in stream order, so a range is rewritten only after its last reader.
// Host-only; the runtime consults the arena of the recording thread.
#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>

namespace tf::cuda {

class CaptureArena {
 public:
  // With base null the arena only plans: offsets are handed out and the high-water mark kept.
  CaptureArena(char* base, size_t bytes) : base_(base), bytes_(bytes) {}

  // Offset of a new range of `bytes` (rounded up to 256), or SIZE_MAX when a buffer arena is full.
  size_t take(size_t bytes);
  // Gives back the range that starts at `offset`; false when no live range starts there.
  bool give_back(size_t offset);

  char* base() const { return base_; }
  size_t high_water() const { return high_water_; }
  size_t live() const { return live_.size(); }
  bool holds(const void* p) const {
    return base_ && p >= base_ && static_cast<const char*>(p) < base_ + bytes_;
  }
  // Planning only: the pool's pointer p stands for the range planned at `take`.
  void plan(const void* p, size_t bytes) { planned_.emplace(p, take(bytes)); }
  void unplan(const void* p) {
    auto it = planned_.find(p);
    if (it == planned_.end()) return;
    give_back(it->second);
    planned_.erase(it);
  }

 private:
  char* base_;
  size_t bytes_;
  size_t high_water_ = 0;
  std::map<size_t, size_t> free_;              // offset -> length, coalesced
  std::unordered_map<size_t, size_t> live_;    // offset -> length
  std::unordered_map<const void*, size_t> planned_;  // planning: pool pointer -> offset
};

// The recording thread's arena (null when none): set by capture_graph, read by device_alloc / free.
CaptureArena*& current_capture_arena();

}  // namespace tf::cuda
