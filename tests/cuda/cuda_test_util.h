#pragma once
// A CUDA test runs only where a GPU is present; elsewhere it reports itself skipped.
#include <gtest/gtest.h>

#ifdef TF_HAVE_CUDA
#include <cuda_runtime.h>

#include "backend/cuda/runtime/runtime.h"

namespace tf::test {
inline bool cuda_gpu_present() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
}  // namespace tf::test

#define TF_REQUIRE_CUDA_GPU()                                         \
  do {                                                                \
    if (!::tf::test::cuda_gpu_present()) GTEST_SKIP() << "no CUDA GPU"; \
    ::tf::cuda::init_runtime();                                       \
  } while (0)
#else
#define TF_REQUIRE_CUDA_GPU() GTEST_SKIP() << "built without CUDA"
#endif
