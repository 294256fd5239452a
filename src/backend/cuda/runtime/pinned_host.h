#pragma once
// Pinned host memory for tensors copied back from the GPU. The copy engine writes pinned memory at
// full speed; a pageable destination goes through the driver's bounce copies, many times slower.
// Freed buffers stay cached by size for the next copy of the same shape.
#include <cstddef>

namespace tf::cuda {

// A pinned buffer of at least `bytes`, or nullptr above 1 GiB or when the driver has none to give
// (the caller then falls back to pageable memory).
void* pinned_host_alloc(size_t bytes);
void pinned_host_free(void* p);
// Returns the cached (unused) buffers to the driver.
void pinned_host_release_cached();

}  // namespace tf::cuda
