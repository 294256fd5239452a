#pragma once
// Host-side TMA descriptors (CUtensorMap) for row-major bf16 tensors, encoded through the driver
// entry point the runtime hands out (no link-time dependency on libcuda).
#include <cuda.h>

#include <cstdint>

namespace tf::cuda {

// A bf16 tensor of `rank` (2 to 5) dimensions, innermost first: dims[i] elements, byte strides of
// dims 1.. in strides[i - 1]. The box is box[i] elements (box[0] * 2 == 128 bytes: the 128-byte
// swizzle wgmma reads; 64 bytes with swizzle_64), taken every element_strides[i]-th element; outside
// reads as zeros. Throws tf::Error naming `what` if the driver refuses the geometry.
CUtensorMap bf16_tensor_map(const char* what, const void* base, int rank, const uint64_t* dims,
                            const uint64_t* strides, const uint32_t* box, const uint32_t* element_strides,
                            bool swizzle_64 = false);

}  // namespace tf::cuda
