#pragma once
// The passes that split an fp32 picture once into the TMA products' channels-last bf16 hi and lo operands
// (through a nearest 2x upsample, through GroupNorm's map, with x's own split beside it), and an element-wise split.
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/kernels/channels_f32.h"
#include "backend/cuda/kernels/norm/group_norm_affine.cuh"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"

namespace tf::cuda::conv_tma {

constexpr int kSplitPositions = 128;  // positions per block of the split pass, 32 at a time

// x [Ci, Hs, Ws] fp32 (read through a nearest 2x upsample when UP: logical H x W = 2Hs x 2Ws;
// through GroupNorm's map when NORM) -> hi, lo [H, W, Ci] bf16 with hi = bf16(x), lo = bf16(x - hi).
// Block: 64 channels x kSplitPositions positions, through a 64 x 32 transpose tile.
template <bool UP, bool NORM>
__global__ void __launch_bounds__(256) split_channels_last(const float* __restrict__ x, int Ci, int Hs, int Ws,
                                                           int W, int64_t positions, GroupNormApply norm,
                                                           __nv_bfloat16* __restrict__ hi,
                                                           __nv_bfloat16* __restrict__ lo) {
  __shared__ float tile[64][33];
  __shared__ ChannelAffine affine[NORM ? 64 : 1];  // the block's channels' maps, computed once
  const int c0 = blockIdx.y * 64, t = threadIdx.x;
  if constexpr (NORM) {
    if (t < 64 && c0 + t < Ci) affine[t] = channel_affine(norm, c0 + t);
    __syncthreads();
  }
  for (int64_t p0 = int64_t(blockIdx.x) * kSplitPositions;
       p0 < min(positions, int64_t(blockIdx.x + 1) * kSplitPositions); p0 += 32) {
    {
      const int64_t p = p0 + t % 32;
      const int y = p < positions ? int(p / W) : 0, xx = p < positions ? int(p - int64_t(y) * W) : 0;
      const int sy = UP ? y >> 1 : y, sx = UP ? xx >> 1 : xx;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int c = t / 32 + 8 * i;
        const bool in = p < positions && c0 + c < Ci;
        float v = in ? x[int64_t(c0 + c) * Hs * Ws + int64_t(sy) * Ws + sx] : 0.f;
        if constexpr (NORM) v = in ? group_norm_value(affine[c], norm.silu, v) : 0.f;
        tile[c][t % 32] = v;
      }
    }
    __syncthreads();
    const int pos = t / 8, ch = t % 8;
    const int64_t p = p0 + pos;
    if (p < positions && c0 + 8 * ch < Ci) {
      __align__(16) __nv_bfloat16 h[8], l[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        gemm::split_bf16(tile[8 * ch + i][pos], h[i], l[i]);
      }
      const int64_t at = p * Ci + c0 + 8 * ch;
      *reinterpret_cast<uint4*>(hi + at) = *reinterpret_cast<const uint4*>(h);
      *reinterpret_cast<uint4*>(lo + at) = *reinterpret_cast<const uint4*>(l);
    }
    __syncthreads();  // the tile is refilled next round
  }
}

// The block's tile (split_channels_last_rows' layout) out as channels-last hi and lo.
__device__ __forceinline__ void split_tile_out(const float (*tile)[kSplitPositions], int Ci, int64_t positions,
                                               int c0, int64_t p0, int t, __nv_bfloat16* __restrict__ hi,
                                               __nv_bfloat16* __restrict__ lo) {
  const int ch = t % 8;
#pragma unroll
  for (int round = 0; round < kSplitPositions / 32; ++round) {
    const int pos = t / 8 + 32 * round;
    const int64_t p = p0 + pos;
    if (p >= positions || c0 + 8 * ch >= Ci) break;
    __align__(16) __nv_bfloat16 h[8], l[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) gemm::split_bf16(tile[8 * ch + i][pos ^ (4 * ch)], h[i], l[i]);
    const int64_t at = p * Ci + c0 + 8 * ch;
    *reinterpret_cast<uint4*>(hi + at) = *reinterpret_cast<const uint4*>(h);
    *reinterpret_cast<uint4*>(lo + at) = *reinterpret_cast<const uint4*>(l);
  }
}

// split_channels_last without upsampling where positions % 4 == 0: the block's 64 x 128 inputs are
// read as 16-byte pieces all at once (8 a thread in flight), kept in a tile whose row c has column p
// at p ^ (4 (c / 8)), so both the 16-byte tile writes and the 8-channel column reads are conflict-free.
// With RAW (and NORM) x's own split goes to raw_hi, raw_lo first, from the same read.
template <bool NORM, bool RAW = false>
__global__ void __launch_bounds__(256) split_channels_last_rows(const float* __restrict__ x, int Ci,
                                                                int64_t positions, GroupNormApply norm,
                                                                __nv_bfloat16* __restrict__ hi,
                                                                __nv_bfloat16* __restrict__ lo,
                                                                __nv_bfloat16* __restrict__ raw_hi = nullptr,
                                                                __nv_bfloat16* __restrict__ raw_lo = nullptr) {
  static_assert(NORM || !RAW);
  __shared__ __align__(16) float tile[64][kSplitPositions];
  __shared__ ChannelAffine affine[NORM ? 64 : 1];
  const int c0 = blockIdx.y * 64, t = threadIdx.x, lane = t % 32;
  if constexpr (NORM) {
    if (t < 64 && c0 + t < Ci) affine[t] = channel_affine(norm, c0 + t);
    __syncthreads();
  }
  const int64_t p0 = int64_t(blockIdx.x) * kSplitPositions;
  float4 v[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t p = p0 + 4 * lane;
    v[i] = p < positions && c0 + t / 32 + 8 * i < Ci
               ? *reinterpret_cast<const float4*>(x + int64_t(c0 + t / 32 + 8 * i) * positions + p)
               : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  if constexpr (RAW) {
#pragma unroll
    for (int i = 0; i < 8; ++i) *reinterpret_cast<float4*>(&tile[t / 32 + 8 * i][(4 * lane) ^ (4 * i)]) = v[i];
    __syncthreads();
    split_tile_out(tile, Ci, positions, c0, p0, t, raw_hi, raw_lo);
    __syncthreads();  // the tile is refilled with the normalised values
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int c = t / 32 + 8 * i;  // c / 8 == i
    if constexpr (NORM) {
      if (c0 + c < Ci) {  // channels past Ci stay zero, as the product's padding needs
        v[i].x = group_norm_value(affine[c], norm.silu, v[i].x);
        v[i].y = group_norm_value(affine[c], norm.silu, v[i].y);
        v[i].z = group_norm_value(affine[c], norm.silu, v[i].z);
        v[i].w = group_norm_value(affine[c], norm.silu, v[i].w);
      }
    }
    *reinterpret_cast<float4*>(&tile[c][(4 * lane) ^ (4 * i)]) = v[i];
  }
  __syncthreads();
  split_tile_out(tile, Ci, positions, c0, p0, t, hi, lo);
}

// hi[i], lo[i] = split_bf16(x[i]).
__global__ void split_elementwise(const float* __restrict__ x, int64_t n, __nv_bfloat16* __restrict__ hi,
                                  __nv_bfloat16* __restrict__ lo) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_bfloat16 h, l;
  gemm::split_bf16(x[i], h, l);
  hi[i] = h;
  lo[i] = l;
}

}  // namespace tf::cuda::conv_tma
