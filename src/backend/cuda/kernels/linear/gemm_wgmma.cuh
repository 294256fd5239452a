#pragma once
// The large products on Hopper with the step after them in the epilogue: s = x w^T, x [M, K] and
// w [N, K] bf16 (K contiguous), fp32 sums, then per element as the separate ops round (gemm_wgmma.h).
// Persistent and warp-specialised: warpgroup 0's first thread brings 128 x 64 tiles of x and two
// 128 x 64 tiles of w by TMA, STAGES ahead; warpgroups 1 and 2 each multiply 64 of the 128 rows by
// all 256 columns, one m64n256k16 per 16 of K, one k tile's group in flight while the next issues.
// A sum runs over K in 64-wide tiles in order from a fresh accumulator, so it depends on neither M
// nor the row's place in its tile: packed samples keep their bytes.
#include <cuda.h>

#include <cstdint>

#include "backend/cuda/kernels/linear/gemm_wgmma.h"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/primitives/tma.cuh"
#include "backend/cuda/primitives/wgmma.cuh"
#include "backend/cuda/primitives/wgmma_n256.cuh"

namespace tf::cuda::wgmma_product {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 384;
constexpr int kATileBytes = BM * BK * 2;       // 128 rows of 128 bytes
constexpr int kBHalfBytes = (BN / 2) * BK * 2;  // each of the two 128-row boxes of w
constexpr int kStageBytes = kATileBytes + 2 * kBHalfBytes;
constexpr size_t kSmemBytes = size_t(STAGES) * kStageBytes + 1024 + 2 * STAGES * sizeof(uint64_t);

// Output columns per tile: situ pairs 128 up rows with the 128 gate rows of the same columns.
template <GemmEpilogue E>
constexpr int kTileCols = E == GemmEpilogue::situ ? BN / 2 : BN;

struct Tiles {
  int M, N, KT;                // N: output columns
  int m_tiles, tiles;          // tile i: rows (i % m_tiles) * BM, columns (i / m_tiles) * kTileCols
  uint16_t* y;                 // store, situ: y [M, N]; gated_residual: h [M, N], updated in place
  const uint16_t* gate;        // gated_residual: [N]
  const uint16_t* gate_factor;  // situ: both factors' tables over all 65,536 bf16 inputs
  const uint16_t* up_factor;
};

__device__ __forceinline__ uint32_t ld_u32(const uint16_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
__device__ __forceinline__ float lo_f(uint32_t v) { return bf16_bits_to_float(static_cast<uint16_t>(v)); }
__device__ __forceinline__ float hi_f(uint32_t v) { return bf16_bits_to_float(static_cast<uint16_t>(v >> 16)); }

// Rows r and r + 8 of this warp's 16 (m = first row of the pair), columns 8 j + 2 (t % 4) (+1) of the
// tile: acc[4 j .. 4 j + 1] on row r, acc[4 j + 2 .. 4 j + 3] on row r + 8.
template <GemmEpilogue E>
__device__ __forceinline__ void store_tile(const Tiles& s, int m, int n0, int q, const float (&acc)[128]) {
  if constexpr (E == GemmEpilogue::situ) {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int col = n0 + 8 * j + 2 * q;
      if (col >= s.N) continue;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (m + 8 * h >= s.M) continue;
        float r[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {  // up in columns 0..127 of the accumulators, gate in 128..255
          const uint16_t ub = st_bf16(acc[4 * j + 2 * h + e]), gb = st_bf16(acc[4 * (j + 16) + 2 * h + e]);
          r[e] = __fmul_rn(bf16_bits_to_float(__ldg(s.gate_factor + gb)), bf16_bits_to_float(__ldg(s.up_factor + ub)));
        }
        *reinterpret_cast<uint32_t*>(s.y + int64_t(m + 8 * h) * s.N + col) = pack_bf16(r[0], r[1]);
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int col = n0 + 8 * j + 2 * q;
      if (col >= s.N) continue;
      uint32_t g = 0;
      if constexpr (E == GemmEpilogue::gated_residual) g = ld_u32(s.gate + col);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (m + 8 * h >= s.M) continue;
        uint16_t* dst = s.y + int64_t(m + 8 * h) * s.N + col;
        float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
        if constexpr (E == GemmEpilogue::gated_residual) {  // h + bf16(bf16(s) * gate), rounded once more
          const uint32_t old = ld_u32(dst);
          v0 = __fadd_rn(lo_f(old), round_bf16(__fmul_rn(round_bf16(v0), lo_f(g))));
          v1 = __fadd_rn(hi_f(old), round_bf16(__fmul_rn(round_bf16(v1), hi_f(g))));
        }
        *reinterpret_cast<uint32_t*>(dst) = pack_bf16(v0, v1);
      }
    }
  }
}

template <GemmEpilogue E>
__global__ void __launch_bounds__(THREADS, 1)
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap x_map, const __grid_constant__ CUtensorMap w_map,
                      const __grid_constant__ CUtensorMap w2_map, Tiles s) {
  extern __shared__ unsigned char smem_raw[];
  auto* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  auto* full = reinterpret_cast<uint64_t*>(base + STAGES * kStageBytes);  // the stage's bytes have landed
  uint64_t* empty = full + STAGES;                                        // both consumers are done with it
  if (threadIdx.x == 0) {
    for (int i = 0; i < STAGES; ++i) {
      mbarrier_init(full + i, 1);
      mbarrier_init(empty + i, 2 * 128);
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  const int wg = threadIdx.x / 128;

  if (wg == 0) {
    registers_decrease<40>();
    if (threadIdx.x != 0) return;
    int it = 0;  // k tiles issued by this block, across its output tiles
    for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
      const int m0 = (tile % s.m_tiles) * BM, c0 = (tile / s.m_tiles) * kTileCols<E>;
      // situ: w is the up weight and w2 the gate weight, both at the tile's columns; else w's 256 rows
      const int w2_row = E == GemmEpilogue::situ ? c0 : c0 + BN / 2;
      for (int kt = 0; kt < s.KT; ++kt, ++it) {
        const int st = it % STAGES;
        if (it >= STAGES) mbarrier_wait(empty + st, ((it / STAGES) - 1) & 1);
        unsigned char* dst = base + st * kStageBytes;
        mbarrier_arrive_expect_tx(full + st, kStageBytes);
        tma_load_2d(dst, &x_map, full + st, kt * BK, m0);
        tma_load_2d(dst + kATileBytes, &w_map, full + st, kt * BK, c0);
        tma_load_2d(dst + kATileBytes + kBHalfBytes, &w2_map, full + st, kt * BK, w2_row);
      }
    }
    return;
  }

  registers_increase<232>();
  const int cw = wg - 1, t = threadIdx.x % 128;
  int it = 0;
  float acc[128];
  for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
    for (int kt = 0; kt < s.KT; ++kt, ++it) {
      const int st = it % STAGES;
      unsigned char* src = base + st * kStageBytes;
      mbarrier_wait(full + st, (it / STAGES) & 1);
      const uint64_t da = wgmma_descriptor(src + cw * (BM / 2) * BK * 2), db = wgmma_descriptor(src + kATileBytes);
      wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < BK / 16; ++k16)
        wgmma_m64n256k16_bf16(acc, wgmma_descriptor_at_k16(da, k16), wgmma_descriptor_at_k16(db, k16),
                              (kt > 0 || k16 > 0) ? 1 : 0);
      wgmma_commit();
      wgmma_wait<1>();  // the previous k tile's products are done: its stage goes back
      if (kt > 0) mbarrier_arrive(empty + (it - 1) % STAGES);
    }
    wgmma_wait<0>();
    wgmma_fence_registers(acc);
    mbarrier_arrive(empty + (it - 1) % STAGES);
    const int m = (tile % s.m_tiles) * BM + 64 * cw + 16 * (t / 32) + (t % 32) / 4;
    store_tile<E>(s, m, (tile / s.m_tiles) * kTileCols<E>, t % 4, acc);
  }
}

}  // namespace tf::cuda::wgmma_product
