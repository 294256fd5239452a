#pragma once
// A persistent product's epilogue taken off the tensor cores' path: the consumers write a tile's sums
// (ROWS output channels x 128 positions, fp32) into a staged tile in shared memory and go on to the
// next tile's products, while three warps of the producer warpgroup add the bias and residual and store
// it. Arithmetic as gemm::store_pair: alpha * acc + bias, then + residual.
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/kernels/split_products/conv_tiles.cuh"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"

namespace tf::cuda::conv_tma {

constexpr int kStagedPositions = 128;
constexpr int kStoreWarps = 3;  // warps 1-3 of the producer warpgroup
template <int ROWS>
constexpr int kStagedBytes = ROWS * kStagedPositions * 4;

// Position p of row r sits at p ^ (8 ((r >> SHIFT) & 3)) in the row: the consumers' pair writes then
// spread over the banks (SHIFT 1: a lane quad writes channel pairs; 0: lanes of a quad share a row),
// and 4-position groups stay whole for the store warps' 16-byte reads.
template <int SHIFT>
__device__ __forceinline__ int staged_at(int r, int p) {
  return r * kStagedPositions + (p ^ (8 * ((r >> SHIFT) & 3)));
}

// The outputs of the tile at (oy0, ox0) inside the output: its rows times its columns there.
__device__ __forceinline__ float tile_count(const ConvTiles& s, int oy0, int ox0) {
  return float(min(s.BH, s.Ho - oy0) * min(s.BW, s.Wo - ox0));
}

// Row moments in two steps. In the store loop each lane sums its own outputs of a row shifted by the row's
// first output x0 (lane 0's first, shuffled) and, once the warp has read the row, writes (sum of x - x0, sum
// of (x - x0)^2) as a float2 into the row's own staged floats 2 l, 2 l + 1 (lane 0 also x0 at float 64).
// Then lane l of store warp w adds rows w + 3 l and w + 3 (l + 32)'s 32 pairs in lane order from a start
// rotated by the lane (a phase's 8 lanes on 8 bank groups) and writes (x0, s, ss, count): no more than 34
// fp32 additions a sum, so the same bytes wherever the tile runs.
struct LanePartial {
  float s = 0.f, ss = 0.f;
  __device__ __forceinline__ void add(float v, float x0) {
    const float d = __fsub_rn(v, x0);
    s = __fadd_rn(s, d);
    ss = __fmaf_rn(d, d, ss);
  }
  // Warp-uniform: after every lane has read row r of the staged tile.
  __device__ __forceinline__ void stage(float* staged, int r, int lane, float x0) const {
    __syncwarp();
    *reinterpret_cast<float2*>(staged + r * kStagedPositions + 2 * lane) = make_float2(s, ss);
    if (lane == 0) staged[r * kStagedPositions + 64] = x0;
  }
};

template <int ROWS>
__device__ __forceinline__ void store_warp_moments(const gemm::Epilogue& e, const ConvTiles& s, int m0, int oy0,
                                                   int ox0, const float* staged, int w, int lane, int slot) {
  __syncwarp();
  const float n = tile_count(s, oy0, ox0);
#pragma unroll 1
  for (int r = w + kStoreWarps * lane; r < ROWS; r += kStoreWarps * 32) {
    const int m = m0 + r;
    if (m >= e.M) break;
    const float* row = staged + r * kStagedPositions;
    float sum = 0.f, sq = 0.f;
#pragma unroll 4
    for (int j = 0; j < 16; ++j) {
      const int q = (j + lane) % 16;  // lanes 2 q and 2 q + 1
      const float4 v = *reinterpret_cast<const float4*>(row + 4 * q);
      sum = __fadd_rn(sum, __fadd_rn(v.x, v.z));
      sq = __fadd_rn(sq, __fadd_rn(v.y, v.w));
    }
    e.moments[int64_t(m) * e.moment_slots + slot] = make_float4(row[64], sum, sq, n);
  }
}

// Sub-pixel classes' outputs (every other column): lane l stores positions l + 32 i of the tile's rows w,
// w + 3, ..., so a warp's store covers 32 consecutive positions of one row (8 sectors, half of each).
template <int ROWS, int SHIFT>
__device__ __forceinline__ void store_staged_strided(const gemm::Epilogue& e, const ConvTiles& s, int m0, int oy0,
                                                     int ox0, const OutMap& map, float* staged, int w, int lane,
                                                     int slot) {
#pragma unroll 1
  for (int r = w; r < ROWS; r += kStoreWarps) {
    const int m = m0 + r;
    if (m >= e.M) break;
    const float bias = e.bias ? __bfloat162float(e.bias[m]) : 0.f;
    float y[kStagedPositions / 32];
    bool in[kStagedPositions / 32];
#pragma unroll
    for (int i = 0; i < kStagedPositions / 32; ++i) {
      const int p = lane + 32 * i, oy = oy0 + p / s.BW, ox = ox0 + p % s.BW;
      in[i] = oy < s.Ho && ox < s.Wo;
      const int64_t at = int64_t(m) * e.ldc + map.base + oy * map.row + int64_t(ox) * map.col;
      const float t = __fadd_rn(__fmul_rn(e.alpha, staged[staged_at<SHIFT>(r, p)]), bias);
      y[i] = e.residual && in[i] ? __fadd_rn(t, e.residual[at]) : t;
      if (in[i]) e.c[at] = y[i];
    }
    if (e.moments) {  // position 0 (lane 0's first) is always inside
      const float x0 = __shfl_sync(0xffffffffu, y[0], 0);
      LanePartial part;
#pragma unroll
      for (int i = 0; i < kStagedPositions / 32; ++i)
        if (in[i]) part.add(y[i], x0);
      part.stage(staged, r, lane, x0);
    }
  }
  if (e.moments) store_warp_moments<ROWS>(e, s, m0, oy0, ox0, staged, w, lane, slot);
}

// Store warp w (0-2), lane l: positions 4 l .. 4 l + 3 of the tile's rows w, w + 3, ... (output
// channel m0 + r); each batch's residual values are loaded before any of its stores (the output may be
// the residual's own buffer). Positions go where map puts them (every other column only with SUBPIXEL:
// the 96-output kernels, which have no sub-pixel classes, keep their store warps' registers); with
// e.moments each row's moments go to the tile's slot (LanePartial).
template <int ROWS, int SHIFT, bool SUBPIXEL = false>
__device__ __forceinline__ void store_staged(const gemm::Epilogue& e, const ConvTiles& s, int m0, int oy0, int ox0,
                                             const OutMap& map, float* staged, int w, int lane, int slot) {
  if constexpr (SUBPIXEL) {
    if (map.col != 1) return store_staged_strided<ROWS, SHIFT>(e, s, m0, oy0, ox0, map, staged, w, lane, slot);
  }
  const int p = 4 * lane, oy = oy0 + p / s.BW, ox = ox0 + p % s.BW;  // 4 positions share a row (BW % 4 == 0)
  const bool in = oy < s.Ho && ox < s.Wo;  // lanes past the picture still join the rows' shuffles
  const int64_t at = in ? map.base + int64_t(oy) * map.row + ox : 0;
  const bool vec4 = ox + 3 < s.Wo && at % 4 == 0 && e.ldc % 4 == 0 && (reinterpret_cast<uintptr_t>(e.c) & 15) == 0 &&
                    (!e.residual || (reinterpret_cast<uintptr_t>(e.residual) & 15) == 0);
  constexpr int kBatch = 4;  // residual loads in flight a lane (more spill at the store warps' registers)
#pragma unroll 1
  for (int r0 = w; r0 < ROWS; r0 += kStoreWarps * kBatch) {
    float4 res[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int r = r0 + kStoreWarps * b, m = m0 + r;
      res[b] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (in && e.residual && r < ROWS && m < e.M) {
        const float* src = e.residual + int64_t(m) * e.ldc + at;
        if (vec4) {
          res[b] = *reinterpret_cast<const float4*>(src);
        } else {
          res[b].x = src[0];
          if (ox + 1 < s.Wo) res[b].y = src[1];
          if (ox + 2 < s.Wo) res[b].z = src[2];
          if (ox + 3 < s.Wo) res[b].w = src[3];
        }
      }
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int r = r0 + kStoreWarps * b, m = m0 + r;
      if (r >= ROWS || m >= e.M) continue;
      const float4 v = *reinterpret_cast<const float4*>(staged + staged_at<SHIFT>(r, p));
      const float bias = e.bias ? __bfloat162float(e.bias[m]) : 0.f;
      auto y = [&](float a, float rr) {
        const float t = __fadd_rn(__fmul_rn(e.alpha, a), bias);
        return e.residual ? __fadd_rn(t, rr) : t;
      };
      const float4 o = make_float4(y(v.x, res[b].x), y(v.y, res[b].y), y(v.z, res[b].z), y(v.w, res[b].w));
      float* dst = e.c + int64_t(m) * e.ldc + at;
      if (!in) {
      } else if (vec4) {
        *reinterpret_cast<float4*>(dst) = o;
      } else {
        dst[0] = o.x;
        if (ox + 1 < s.Wo) dst[1] = o.y;
        if (ox + 2 < s.Wo) dst[2] = o.z;
        if (ox + 3 < s.Wo) dst[3] = o.w;
      }
      if (e.moments) {  // position 0 (lane 0's first) is always inside
        const float x0 = __shfl_sync(0xffffffffu, o.x, 0);
        LanePartial part;
        if (in) part.add(o.x, x0);
        if (in && ox + 1 < s.Wo) part.add(o.y, x0);
        if (in && ox + 2 < s.Wo) part.add(o.z, x0);
        if (in && ox + 3 < s.Wo) part.add(o.w, x0);
        part.stage(staged, r, lane, x0);
      }
    }
  }
  if (e.moments) store_warp_moments<ROWS>(e, s, m0, oy0, ox0, staged, w, lane, slot);
}

// The column tiles' consumer thread t of warpgroup cw (96 output channels as N): acc[4 j + q] is
// position 64 cw + 16 (t / 32) + (t % 32) / 4 (+8 for q >= 2), channel 8 j + 2 (t % 4) (+1 for odd q).
__device__ __forceinline__ void stage_cols(float* staged, int cw, int t, const float (&acc)[48]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int p = 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
#pragma unroll
    for (int j = 0; j < 12; ++j) {
      const int c = 8 * j + 2 * (t % 4);
      staged[staged_at<1>(c, p)] = acc[4 * j + 2 * h];
      staged[staged_at<1>(c + 1, p)] = acc[4 * j + 2 * h + 1];
    }
  }
}

// The row tiles' consumer thread t of warpgroup cw (128 output channels as M): acc[4 j + q] is row
// 64 cw + 16 (t / 32) + (t % 32) / 4 (+8 for q >= 2), position 8 j + 2 (t % 4) (+1 for odd q).
__device__ __forceinline__ void stage_rows(float* staged, int cw, int t, const float (&acc)[64]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
#pragma unroll
    for (int j = 0; j < 16; ++j)
      *reinterpret_cast<float2*>(staged + staged_at<0>(r, 8 * j + 2 * (t % 4))) =
          make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
  }
}

}  // namespace tf::cuda::conv_tma
