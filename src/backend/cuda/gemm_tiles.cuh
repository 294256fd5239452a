#pragma once
// Tiles of the weight-streaming GEMM: rows of 64 bf16 k values (128 bytes) in shared memory with
// the 128-byte swizzle wgmma reads, filled by cp.async.
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/tensor_core.cuh"

namespace tf::cuda::streaming {

constexpr int kThreads = 256;  // two warpgroups
constexpr int BN = 256;        // weight rows per tile
constexpr int BK = 64;         // k per step: one 128-byte row

// Element (row, 16-byte chunk c) of a [rows][64] bf16 tile: chunks XOR-swizzled by row so that
// ldmatrix's eight rows of one chunk hit eight different bank groups.
__device__ __forceinline__ int swizzled(int row, int chunk) { return row * BK + ((chunk ^ (row & 7)) << 3); }

// ROWS rows of src [.., ld] from row0 (rows at or past `valid` read as zeros), k in [k0, k0 + 64).
template <int ROWS>
__device__ __forceinline__ void load_tile_async(__nv_bfloat16* dst, const uint16_t* src, int row0, int valid,
                                                int64_t ld, int64_t k0) {
#pragma unroll
  for (int i = 0; i < (ROWS * 8 + kThreads - 1) / kThreads; ++i) {
    const int c = threadIdx.x + i * kThreads, r = c >> 3, ch = c & 7;
    if (ROWS * 8 % kThreads == 0 || c < ROWS * 8) {
      const bool in = row0 + r < valid;
      cp_async_16_zfill(dst + swizzled(r, ch), src + (in ? int64_t(row0 + r) * ld + k0 + 8 * ch : 0), in ? 16 : 0);
    }
  }
}

}  // namespace tf::cuda::streaming
