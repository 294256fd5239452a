#pragma once
// Host -> device copies of many large host ranges (weights in a mapped checkpoint) through pinned
// staging buffers: several threads read the host pages while the copy engine drains full buffers.
#include <cstddef>
#include <functional>
#include <vector>

namespace tf::cuda {

struct HostToDeviceJob {
  void* dst = nullptr;        // device
  const void* src = nullptr;  // pageable host memory (a file mapping)
  size_t bytes = 0;
};

// Returns when every byte is on the device. progress(done, total) is called from the calling
// thread after each staged chunk is queued.
void copy_host_to_device(const std::vector<HostToDeviceJob>& jobs,
                         const std::function<void(size_t done, size_t total)>& progress);

}  // namespace tf::cuda
