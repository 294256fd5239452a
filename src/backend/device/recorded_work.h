#pragma once
// Work recorded once and replayed: on CUDA the kernels a function queues, captured as a CUDA graph
// and replayed with one launch (no per-kernel launch cost); the CPU has nothing to record.
#include <functional>
#include <memory>

#include "backend/variants.h"
#include "core/tensor.h"

namespace tf {

class RecordedWork {
 public:
  RecordedWork() = default;

  // Records `work` on `d` without running it. CUDA only; the work must not wait for the device.
  static RecordedWork record(Device d, const std::function<void()>& work);

  // Queues one replay; outputs are ready when the device's queue is (to_device waits for it).
  // Recorded kernels and launch attributes are the variants' at recording, so a replay under
  // other choices (backend/variants.h) is an error: the holder records again instead.
  void replay() const;
  bool under_current_variants() const;

  explicit operator bool() const { return static_cast<bool>(impl_); }

 private:
  std::shared_ptr<void> impl_;
  variants::Choices variants_{};
};

// Whether recording is on for `d`: CUDA, unless TF_CUDA_GRAPH=off.
bool recording_supported(Device d);

}  // namespace tf
