#pragma once
// Weights to a device once: host tensors (views into a mapped checkpoint) are replaced by device
// copies in one pass. On CUDA the pages are read by several threads into pinned staging buffers
// while the copy engine drains them; a progress line shows on a terminal.
#include <cstddef>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tf {

struct UploadReport {
  size_t bytes = 0;
  double seconds = 0;
};

// Each tensor is replaced in place by its copy on `d` (nothing happens for Device::CPU).
// `what` names the load in the progress and summary lines ("text encoder weights").
UploadReport upload_tensors(const std::vector<Tensor*>& tensors, Device d, const std::string& what);
// The same, each group's copies in one allocation in the group's order (256-byte aligned), so a
// kernel may read neighbours through one tensor map.
UploadReport upload_tensors(const std::vector<std::vector<Tensor*>>& groups, Device d, const std::string& what);

}  // namespace tf
