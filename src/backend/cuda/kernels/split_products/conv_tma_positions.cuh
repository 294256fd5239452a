#pragma once
// conv_tma_kernel's convolution with the product's roles swapped: the output positions are the
// wgmma's M (two consumer warpgroups of 64 positions) and the output channels its N, a tile BN of
// them (16, 96 or 128), so 96 or 192 channels fill their tiles instead of padding to 128. The K tile
// is the same tap's 64 channels; where a tap's last tile holds fewer channels (96 = 64 + 32) only
// its k16 steps that hold channels run. Numerics are conv_tma_kernel's: each output's products are
// the same terms in the same order (per k16 lo * w then hi * w into a fresh per-K-tile accumulator,
// joined to the running one with one rounding), the skipped steps' products all zero.
#include "backend/cuda/kernels/split_products/conv_tma.cuh"

namespace tf::cuda::conv_tma {

template <int BN>
struct PositionsTile {
  static_assert(BN % 16 == 0 && BN <= 128, "one wgmma's N");
  static constexpr int kWeightBytes = BN * BK * 2;
  static constexpr int kStageBytes = 2 * kTileBytes + kWeightBytes;  // x hi, x lo (128 positions), w (BN channels)
  static constexpr int kStages = (227 * 1024 - 1024 - 128) / kStageBytes < 6 ? (227 * 1024 - 1024 - 128) / kStageBytes : 6;
  static constexpr size_t kSmemBytes = size_t(kStages) * kStageBytes + 1024 + 2 * kStages * sizeof(uint64_t);
};

// Channels of the c-th 64-deep tile of a tap that hold data, in k16 steps (4 unless Ci ends inside it).
__device__ __forceinline__ int k16_steps(int Ci, int c) { return min(BK, Ci - c * BK + 15) / 16; }

// One K tile's first STEPS k16 steps: per k16 x_lo . w then x_hi . w, the first product starting
// the fresh accumulator.
template <int BN, int STEPS>
__device__ __forceinline__ void positions_k_steps(float (&p)[BN / 2], uint64_t x_hi, uint64_t x_lo, uint64_t w) {
  wgmma_fence_registers(p);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < STEPS; ++kk) {
    wgmma_m64k16_bf16<BN>(p, wgmma_descriptor_at_k16(x_lo, kk), wgmma_descriptor_at_k16(w, kk), kk != 0);
    wgmma_m64k16_bf16<BN>(p, wgmma_descriptor_at_k16(x_hi, kk), wgmma_descriptor_at_k16(w, kk));
  }
  wgmma_commit();
}

// One K tile of `steps` k16 steps (1 to 4).
template <int BN>
__device__ __forceinline__ void positions_k_tile(float (&p)[BN / 2], uint64_t x_hi, uint64_t x_lo, uint64_t w,
                                                 int steps) {
  if (steps == 4) positions_k_steps<BN, 4>(p, x_hi, x_lo, w);
  else if (steps == 2) positions_k_steps<BN, 2>(p, x_hi, x_lo, w);
  else if (steps == 3) positions_k_steps<BN, 3>(p, x_hi, x_lo, w);
  else positions_k_steps<BN, 1>(p, x_hi, x_lo, w);
}

// The tile's sums into y, straight from the fragments: acc[4 j + q] of consumer thread t is
// position 16 (t / 32) + (t % 32) / 4 (+8 for q >= 2) of its warpgroup's 64, channel 8 j + 2 (t % 4)
// (+1 for odd q); eight lanes write 8 consecutive positions of one channel (BW % 8 == 0).
// Arithmetic as gemm::store_pair: alpha * acc + bias, then + residual.
template <int BN>
__device__ __forceinline__ void store_positions_tile(const gemm::Epilogue& e, const ConvTiles& s, int n0, int oy0,
                                                     int ox0, int cw, int t, const float (&acc)[BN / 2]) {
  const int lane = t % 32;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int p = 64 * cw + 16 * (t / 32) + lane / 4 + 8 * h, oy = oy0 + p / s.BW, ox = ox0 + p % s.BW;
    if (oy >= s.Ho || ox >= s.Wo) continue;
    const int64_t at = int64_t(oy) * s.Wo + ox;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
      for (int odd = 0; odd < 2; ++odd) {
        const int m = n0 + 8 * j + 2 * (lane % 4) + odd;
        if (m >= e.M) continue;
        const float bias = e.bias ? __bfloat162float(e.bias[m]) : 0.f;
        float y = __fadd_rn(__fmul_rn(e.alpha, acc[4 * j + 2 * h + odd]), bias);
        if (e.residual) y = __fadd_rn(y, e.residual[int64_t(m) * e.ldc + at]);
        e.c[int64_t(m) * e.ldc + at] = y;
      }
    }
  }
}

// ConvTiles read with m_tiles as the channel tiles of BN and c_tiles, KT as for conv_tma_kernel;
// Ci the input's channels (the last tile's depth).
template <int BN>
__global__ void __launch_bounds__(THREADS, 1)
    conv_tma_positions_kernel(const __grid_constant__ CUtensorMap w_map, const __grid_constant__ CUtensorMap hi_map,
                              const __grid_constant__ CUtensorMap lo_map, ConvTiles s, int Ci, gemm::Epilogue e) {
  using T = PositionsTile<BN>;
  constexpr int STAGES = T::kStages, kStageBytes = T::kStageBytes;
  extern __shared__ unsigned char smem_raw[];
  auto* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  auto* full = reinterpret_cast<uint64_t*>(base + STAGES * kStageBytes);
  uint64_t* empty = full + STAGES;
  if (threadIdx.x == 0) {
    mbarrier_init_stages(full, empty, STAGES, 2 * 128);
    mbarrier_init_fence();
  }
  __syncthreads();
  const int wg = threadIdx.x / 128;

  if (wg == 0) {
    registers_decrease<40>();
    if (threadIdx.x != 0) return;
    int it = 0;
    for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
      const int n0 = (tile % s.m_tiles) * BN, pt = tile / s.m_tiles;
      const int ix0 = (pt % s.tiles_x) * s.BW * s.stride - s.pad_left;
      const int iy0 = (pt / s.tiles_x) * s.BH * s.stride - s.pad_top;
      int c = 0, tap = 0;
      for (int kt = 0; kt < s.KT; ++kt, ++it) {
        const int st = it % STAGES;
        if (it >= STAGES) mbarrier_wait(empty + st, ((it / STAGES) - 1) & 1);
        unsigned char* dst = base + st * kStageBytes;
        mbarrier_arrive_expect_tx(full + st, kStageBytes);
        const int ky = tap / s.ks, kx = tap - ky * s.ks;
        tma_load_3d(dst, &hi_map, full + st, c * BK, ix0 + kx, iy0 + ky);
        tma_load_3d(dst + kTileBytes, &lo_map, full + st, c * BK, ix0 + kx, iy0 + ky);
        tma_load_2d(dst + 2 * kTileBytes, &w_map, full + st, kt * BK, n0);
        if (++c == s.c_tiles) c = 0, ++tap;
      }
    }
    return;
  }

  registers_increase<232>();
  const int cw = wg - 1, t = threadIdx.x % 128;
  int it = 0;
  for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
    float acc[BN / 2], part[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
    int c = 0;
    for (int kt = 0; kt < s.KT; ++kt, ++it) {
      const int st = it % STAGES;
      unsigned char* src = base + st * kStageBytes;
      mbarrier_wait(full + st, (it / STAGES) & 1);
      positions_k_tile<BN>(part, wgmma_descriptor(src + 64 * cw * BK * 2),
                           wgmma_descriptor(src + kTileBytes + 64 * cw * BK * 2), wgmma_descriptor(src + 2 * kTileBytes),
                           k16_steps(Ci, c));
      wgmma_wait_all();
      wgmma_fence_registers(part);
      mbarrier_arrive(empty + st);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = __fadd_rn(acc[i], part[i]);
      if (++c == s.c_tiles) c = 0;
    }
    const int pt = tile / s.m_tiles;
    store_positions_tile<BN>(e, s, (tile % s.m_tiles) * BN, (pt / s.tiles_x) * s.BH, (pt % s.tiles_x) * s.BW, cw, t,
                             acc);
  }
}

}  // namespace tf::cuda::conv_tma
