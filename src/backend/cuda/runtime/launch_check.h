#pragma once
// Turns a failed launch or CUDA call into a tf::Error naming the kernel.
#include <cuda_runtime.h>

#include <string>

#include "core/error.h"

namespace tf::cuda {

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(e));
}
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

}  // namespace tf::cuda
