#pragma once
// A persistent product's epilogue taken off the tensor cores' path: the consumers write a tile's sums
// (ROWS output channels x 128 positions, fp32) into a staged tile in shared memory and go on to the
// next tile's products, while three warps of the producer warpgroup store it (adding the bias, or, with a
// residual, having copied it into the staging for the consumers to add their sums to). Arithmetic as
// gemm::store_pair: alpha * acc + bias, then + residual.
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/kernels/split_products/conv_tiles.cuh"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"
#include "backend/cuda/primitives/tensor_core.cuh"
#include "backend/cuda/primitives/tma.cuh"

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

// With a residual and one class the store warps copy each tile's residual into its staging (cp.async: none of
// it held in their registers, all its rows in flight at once) while the consumers multiply, and the consumers
// stage alpha * acc + bias + residual, so the store warps' chain is stores only.
__device__ __forceinline__ bool residual_staged(const gemm::Epilogue& e, const ConvTiles& s) {
  return e.residual && s.classes == 1;
}

// The consumers' staged value where the residual is staged: as gemm::store_pair (alpha * acc + bias, then
// + residual).
__device__ __forceinline__ float staged_sum(float alpha, float acc, float bias, float residual) {
  return __fadd_rn(__fadd_rn(__fmul_rn(alpha, acc), bias), residual);
}

// Lane l's positions 4 l .. 4 l + 3 of a tile (one picture row: BW % 4 == 0): their place in each output
// row, whether they lie in the picture, and whether `base` may be moved in 16-byte pieces there.
struct LaneQuad {
  int p, ox;
  int64_t at;
  bool in, vec4;
};
__device__ __forceinline__ LaneQuad lane_quad(const gemm::Epilogue& e, const ConvTiles& s, int oy0, int ox0,
                                              const OutMap& map, int lane, const float* base) {
  const int p = 4 * lane, oy = oy0 + p / s.BW, ox = ox0 + p % s.BW;
  const int64_t at = map.base + int64_t(oy) * map.row + ox;
  const bool in = oy < s.Ho && ox < s.Wo;
  return {p, ox, at, in,
          in && ox + 3 < s.Wo && at % 4 == 0 && e.ldc % 4 == 0 && (reinterpret_cast<uintptr_t>(base) & 15) == 0};
}

// Store warp w, lane l: the residual of its positions of the tile's rows w, w + 3, ... into the staging where
// store_staged reads them, then waits for its copies.
template <int ROWS, int SHIFT>
__device__ __forceinline__ void copy_residual(const gemm::Epilogue& e, const ConvTiles& s, int m0, int oy0, int ox0,
                                              const OutMap& map, float* staged, int w, int lane) {
  const LaneQuad q = lane_quad(e, s, oy0, ox0, map, lane, e.residual);
  if (q.in) {
#pragma unroll 4
    for (int r = w; r < ROWS; r += kStoreWarps) {
      if (m0 + r >= e.M) break;
      const float* src = e.residual + int64_t(m0 + r) * e.ldc + q.at;
      float* dst = staged + staged_at<SHIFT>(r, q.p);
      if (q.vec4) {
        cp_async_16(dst, src);
      } else {
        for (int i = 0; i < 4 && q.ox + i < s.Wo; ++i) cp_async_4(dst + i, src + i);
      }
    }
  }
  cp_async_commit();
  cp_async_wait<0>();
}

// Sub-pixel classes' outputs (every other column): lane l stores positions l + 32 i of the tile's rows w,
// w + 3, ..., so a warp's store covers 32 consecutive positions of one row (8 sectors, half of each).
template <int ROWS, int SHIFT>
__device__ __forceinline__ void store_staged_strided(const gemm::Epilogue& e, const ConvTiles& s, int m0, int oy0,
                                                     int ox0, const OutMap& map, const float* staged, int w, int lane) {
#pragma unroll 1
  for (int r = w; r < ROWS; r += kStoreWarps) {
    const int m = m0 + r;
    if (m >= e.M) break;
    const float bias = e.bias ? __bfloat162float(e.bias[m]) : 0.f;
#pragma unroll
    for (int i = 0; i < kStagedPositions / 32; ++i) {
      const int p = lane + 32 * i, oy = oy0 + p / s.BW, ox = ox0 + p % s.BW;
      if (oy >= s.Ho || ox >= s.Wo) continue;
      const int64_t at = int64_t(m) * e.ldc + map.base + oy * map.row + int64_t(ox) * map.col;
      const float t = __fadd_rn(__fmul_rn(e.alpha, staged[staged_at<SHIFT>(r, p)]), bias);
      e.c[at] = e.residual ? __fadd_rn(t, e.residual[at]) : t;
    }
  }
}

// Store warp w (0-2), lane l: its positions of the tile's rows w, w + 3, ... (output channel m0 + r), alpha *
// sum + bias, or (`final`: the residual staged) the staged values as they are; a one-class tile with a
// residual always has it staged. Every other column (sub-pixel classes) only with SUBPIXEL: kernels without
// sub-pixel classes keep their store warps' registers.
template <int ROWS, int SHIFT, bool SUBPIXEL>
__device__ __forceinline__ void store_staged(const gemm::Epilogue& e, const ConvTiles& s, int m0, int oy0, int ox0,
                                             const OutMap& map, const float* staged, int w, int lane, bool final) {
  if constexpr (SUBPIXEL) {
    if (map.col != 1) return store_staged_strided<ROWS, SHIFT>(e, s, m0, oy0, ox0, map, staged, w, lane);
  }
  const LaneQuad q = lane_quad(e, s, oy0, ox0, map, lane, e.c);
  if (!q.in) return;
#pragma unroll 4
  for (int r = w; r < ROWS; r += kStoreWarps) {
    const int m = m0 + r;
    if (m >= e.M) break;
    float4 v = *reinterpret_cast<const float4*>(staged + staged_at<SHIFT>(r, q.p));
    if (!final) {
      const float bias = e.bias ? __bfloat162float(e.bias[m]) : 0.f;
      auto y = [&](float a) { return __fadd_rn(__fmul_rn(e.alpha, a), bias); };
      v = make_float4(y(v.x), y(v.y), y(v.z), y(v.w));
    }
    float* dst = e.c + int64_t(m) * e.ldc + q.at;
    if (q.vec4) {
      *reinterpret_cast<float4*>(dst) = v;
    } else {
      dst[0] = v.x;
      if (q.ox + 1 < s.Wo) dst[1] = v.y;
      if (q.ox + 2 < s.Wo) dst[2] = v.z;
      if (q.ox + 3 < s.Wo) dst[3] = v.w;
    }
  }
}

// The store warps' loop over the persistent block's tiles (ROWS output channels a tile, placed by tile_place):
// wait for the consumers' staged tile, store it, free the staging; where residual_staged, each tile's residual is
// copied into the staging first (res_full: it has landed), the next one's as soon as this tile's rows are stored.
template <int ROWS, int SHIFT, bool SUBPIXEL>
__device__ __forceinline__ void run_store_warps(const gemm::Epilogue& e, const ConvTiles& s, float* staged,
                                                uint64_t* out_full, uint64_t* out_empty, uint64_t* res_full) {
  const int w = threadIdx.x / 32 - 1, lane = threadIdx.x % 32;
  const bool copied = residual_staged(e, s);
  auto copy = [&](int t) {
    if (!copied || t >= s.tiles) return;
    const TilePlace q = tile_place(s, t, ROWS);
    copy_residual<ROWS, SHIFT>(e, s, q.m0, q.oy0, q.ox0, out_map(s, q.cls), staged, w, lane);
    mbarrier_arrive(res_full);
  };
  copy(blockIdx.x);
  int n = 0;
  for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x, ++n) {
    mbarrier_wait_idle(out_full, n & 1);
    const TilePlace q = tile_place(s, tile, ROWS);
    store_staged<ROWS, SHIFT, SUBPIXEL>(e, s, q.m0, q.oy0, q.ox0, out_map(s, q.cls), staged, w, lane, copied);
    mbarrier_arrive(out_empty);
    copy(tile + gridDim.x);  // rows this lane alone reads and writes: its stores above have their values
  }
}

// The column tiles' consumer thread t of warpgroup cw (96 output channels as N): acc[4 j + q] is position
// 64 cw + 16 (t / 32) + (t % 32) / 4 (+8 for q >= 2), channel 8 j + 2 (t % 4) (+1 for odd q). FINAL: the
// staging holds the residual (residual_staged) and gets staged_sum (bias: the channels' floats), which acc then
// holds too.
template <bool FINAL>
__device__ __forceinline__ void stage_cols(float* staged, int cw, int t, float (&acc)[48], float alpha = 1.f,
                                           const float* bias = nullptr) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int p = 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
#pragma unroll
    for (int j = 0; j < 12; ++j) {
      const int c = 8 * j + 2 * (t % 4);
      float* s0 = staged + staged_at<1>(c, p);
      float* s1 = staged + staged_at<1>(c + 1, p);
      if constexpr (FINAL) {
        *s0 = acc[4 * j + 2 * h] = staged_sum(alpha, acc[4 * j + 2 * h], bias[c], *s0);
        *s1 = acc[4 * j + 2 * h + 1] = staged_sum(alpha, acc[4 * j + 2 * h + 1], bias[c + 1], *s1);
      } else {
        *s0 = acc[4 * j + 2 * h];
        *s1 = acc[4 * j + 2 * h + 1];
      }
    }
  }
}

// A column tile's sums in acc (stage_cols' order) made the values the store warps store without a staged
// residual: alpha * acc + bias (bias: the channels' floats).
__device__ __forceinline__ void output_values(float (&acc)[48], int t, float alpha, const float* bias) {
#pragma unroll
  for (int j = 0; j < 12; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int c = 8 * j + 2 * (t % 4) + i % 2;
      acc[4 * j + i] = __fadd_rn(__fmul_rn(alpha, acc[4 * j + i]), bias[c]);
    }
}

// The row tiles' consumer thread t of warpgroup cw (128 output channels as M): acc[4 j + q] is row
// 64 cw + 16 (t / 32) + (t % 32) / 4 (+8 for q >= 2), position 8 j + 2 (t % 4) (+1 for odd q). FINAL as
// stage_cols's (bias: its two rows'; acc then holds the staged sums).
template <bool FINAL>
__device__ __forceinline__ void stage_rows(float* staged, int cw, int t, float (&acc)[64], float alpha = 1.f,
                                           const float (&bias)[2] = {0.f, 0.f}) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      auto* d = reinterpret_cast<float2*>(staged + staged_at<0>(r, 8 * j + 2 * (t % 4)));
      float2 v = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      if constexpr (FINAL) {
        const float2 res = *d;
        v = make_float2(staged_sum(alpha, v.x, bias[h], res.x), staged_sum(alpha, v.y, bias[h], res.y));
        acc[4 * j + 2 * h] = v.x, acc[4 * j + 2 * h + 1] = v.y;
      }
      *d = v;
    }
  }
}

// A row tile's sums in acc (stage_rows' order) made the values the store warps store without a staged residual:
// alpha * acc + bias (bias: the thread's two rows').
__device__ __forceinline__ void output_row_values(float (&acc)[64], float alpha, const float (&bias)[2]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = __fadd_rn(__fmul_rn(alpha, acc[i]), bias[(i / 2) % 2]);
}

// A row tiles' consumer's two rows' biases (the rows of stage_rows), 0 past e.M or without one.
__device__ __forceinline__ void row_biases(const gemm::Epilogue& e, int m0, int cw, int t, float (&bias)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int m = m0 + 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
    bias[h] = e.bias && m < e.M ? __bfloat162float(e.bias[m]) : 0.f;
  }
}

}  // namespace tf::cuda::conv_tma
