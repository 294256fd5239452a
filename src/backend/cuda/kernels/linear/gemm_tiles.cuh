#pragma once
// Tiles of the weight-streaming GEMM: rows of 64 bf16 k values (128 bytes) in shared memory with
// the 128-byte swizzle wgmma reads (the layout TMA's 128-byte swizzle writes).
#include <cstdint>

namespace tf::cuda::streaming {

constexpr int kThreads = 256;  // two warpgroups
constexpr int BK = 64;         // k per step: one 128-byte row

// Element (row, 16-byte chunk c) of a [rows][64] bf16 tile: chunks XOR-swizzled by row so that
// ldmatrix's eight rows of one chunk hit eight different bank groups.
__device__ __forceinline__ int swizzled(int row, int chunk) { return row * BK + ((chunk ^ (row & 7)) << 3); }

}  // namespace tf::cuda::streaming
