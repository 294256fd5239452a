#pragma once
// Peak-memory estimates made before any work, from shapes only, and the one refusal a run gets when
// its estimate exceeds what the device has: every family states the same facts the same way (what
// asked for it, the run's size, the estimate and where it peaks, what is available, what fits).
#include <string>

#include "backend/device/device.h"

namespace tf {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Workspaces (product and conv packing, norm partials, per-thread scratch) and small host tensors.
constexpr double kWorkspaceBytes = 64.0 * 1024 * 1024;
// The allocator's slack over the live set: freed blocks below malloc's mmap threshold stay in the
// heap, the CUDA pool rounds and caches.
constexpr double kAllocatorSlack = 1.25;

struct MemoryEstimate {
  double bytes = 0;  // peak bytes on the device (on the CPU: with the run's host copies)
  std::string peak;  // where the peak is reached: a stage or sublayer name
};

// The largest live set seen while a run's ops are walked with shapes only.
class PeakWalk {
 public:
  void live(double bytes, const std::string& where) {
    if (bytes > peak_.bytes) peak_ = {bytes, where};
  }
  const MemoryEstimate& peak() const { return peak_; }

 private:
  MemoryEstimate peak_;
};

// Refuses (tf::Error) a run whose estimate exceeds `have`:
//   "WHAT: RUN needs an estimated X GiB (peak in PEAK), more than the Y GiB available (HAVE); ADVICE"
// `what` names the file or flag the size came from, `run` the size ("a 1024x1024 decode").
void require_memory(const MemoryEstimate& need, const AvailableMemory& have, const std::string& what,
                    const std::string& run, const std::string& advice);

}  // namespace tf
