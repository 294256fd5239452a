#pragma once
// Work recorded once and replayed: on CUDA the kernels a function queues, captured as a CUDA graph
// and replayed with one launch (no per-kernel launch cost); the CPU has nothing to record.
#include <functional>
#include <memory>

#include "core/tensor.h"

namespace tf {

class RecordedWork {
 public:
  RecordedWork() = default;

  // Records `work` on `d` without running it. CUDA only; the work must not wait for the device.
  static RecordedWork record(Device d, const std::function<void()>& work);

  // Queues one replay; outputs are ready when the device's queue is (to_device waits for it).
  void replay() const;

  explicit operator bool() const { return static_cast<bool>(impl_); }

 private:
  std::shared_ptr<void> impl_;
};

// Whether recording is on for `d`: CUDA, unless TF_CUDA_GRAPH=0 (read once).
bool recording_supported(Device d);

}  // namespace tf
