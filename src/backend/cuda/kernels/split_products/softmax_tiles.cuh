#pragma once
// The split-A products' share of a softmax taken per 128-column tile (the channels attention, attention_launch.cu):
// the scores' epilogue writing each tile's e = exp(s - tile max) split into bf16 hi and lo with the tile's stats,
// and the factors the values' product joins each 128-deep K block by.
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/kernels/split_products/conv_tiles.cuh"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"

namespace tf::cuda::conv_tma {

// The split-A kernels' part of a softmax taken per 128-column tile (attention_launch.cu): none; the scores'
// epilogue writing each tile's e and stats (gemm::ExpTiles); the values' K blocks of 128 joined times their
// columns' factors (gemm::Epilogue::k_block_scale).
enum class SoftmaxStep { none, exp_tiles, scaled_k };
constexpr int kSoftmaxTile = BN;  // the scores' tile width, so the values' K block
static_assert(kSoftmaxTile % BK == 0);

// The scores' tile softmax (gemm::ExpTiles) from a tile's accumulators (acc[4 j + 2 h + u]: row
// 16 (t / 32) + (t % 32) / 4 + 8 h of its warpgroup's 64, column 8 j + 2 (t % 4) + u; a quad holds a row):
// the row's maximum over columns below N, e = exp(s - max) into acc (store_tile_exp_rows stores it), the sum of
// e in double (the thread's columns in order, then the quad's butterfly), stats written by the quad's first lane.
__device__ __forceinline__ void tile_exp(const gemm::Epilogue& e, int m0, int n0, int cw, int t, float (&acc)[64]) {
  const int q = t % 4;
  const gemm::ExpTiles& x = e.exp_tiles;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int m = m0 + 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int u = 0; u < 2; ++u)
        if (n0 + 8 * j + 2 * q + u < e.N) mx = fmaxf(mx, __fmul_rn(e.alpha, acc[4 * j + 2 * h + u]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    double sum = 0.0;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        float& a = acc[4 * j + 2 * h + u];
        a = n0 + 8 * j + 2 * q + u < e.N ? expf(__fsub_rn(__fmul_rn(e.alpha, a), mx)) : 0.f;
        sum += double(a);
      }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (q == 0 && m < e.M) x.stats[int64_t(m) * x.tiles + n0 / kSoftmaxTile] = make_float2(mx, float(sum));
  }
}

// e (store_tile_exp's acc) split into bf16 hi and lo rows: each warp passes its 8-row halves through `rows`
// (store_tile_rows' swizzled staging), then lane l splits columns 4 l .. 4 l + 3 of a row and stores 8 bytes
// of each, a warp instruction 256 contiguous bytes of one row.
__device__ __forceinline__ void store_tile_exp_rows(const gemm::Epilogue& e, int m0, int n0, int cw, int t,
                                                    const float (&acc)[64], float* rows) {
  const int lane = t % 32, n = n0 + 4 * lane;
  const gemm::ExpTiles& x = e.exp_tiles;
  const bool aligned = ((reinterpret_cast<uintptr_t>(x.hi) | reinterpret_cast<uintptr_t>(x.lo)) & 7) == 0;
  const bool vec = aligned && e.ldc % 4 == 0 && n + 3 < e.N;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    stage_row_half(rows, lane, h, acc);
    __syncwarp();
    const int mfirst = m0 + 64 * cw + 16 * (t / 32) + 8 * h;
#pragma unroll
    for (int R = 0; R < kOutRowsPerWarp; ++R) {
      const int m = mfirst + R;
      const float4 v = staged_columns(rows, lane, R);
      if (m >= e.M || n >= e.N) continue;
      __align__(8) __nv_bfloat16 hi[4], lo[4];
      gemm::split_bf16(v.x, hi[0], lo[0]);
      gemm::split_bf16(v.y, hi[1], lo[1]);
      gemm::split_bf16(v.z, hi[2], lo[2]);
      gemm::split_bf16(v.w, hi[3], lo[3]);
      const int64_t at = int64_t(m) * e.ldc + n;
      if (vec) {
        *reinterpret_cast<uint2*>(x.hi + at) = *reinterpret_cast<const uint2*>(hi);
        *reinterpret_cast<uint2*>(x.lo + at) = *reinterpret_cast<const uint2*>(lo);
      } else {
        for (int u = 0; u < 4 && n + u < e.N; ++u) x.hi[at + u] = hi[u], x.lo[at + u] = lo[u];
      }
    }
    __syncwarp();  // the rows are read before the next h overwrites them
  }
}

// This thread's columns' factors (f[2 j + u]: column n0 + 8 j + 2 (t % 4) + u) for the values' K block b;
// columns at or past N get 0.
__device__ __forceinline__ void block_factors(const gemm::Epilogue& e, int n0, int b, int t, float (&f)[32]) {
  const float* row = e.k_block_scale + int64_t(b) * e.N;
  const bool pairs = (e.N % 2) == 0 && (reinterpret_cast<uintptr_t>(e.k_block_scale) & 7) == 0;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int n = n0 + 8 * j + 2 * (t % 4);
    if (pairs && n + 1 < e.N) {
      const float2 v = *reinterpret_cast<const float2*>(row + n);
      f[2 * j] = v.x, f[2 * j + 1] = v.y;
    } else {
      f[2 * j] = n < e.N ? row[n] : 0.f;
      f[2 * j + 1] = n + 1 < e.N ? row[n + 1] : 0.f;
    }
  }
}

}  // namespace tf::cuda::conv_tma
