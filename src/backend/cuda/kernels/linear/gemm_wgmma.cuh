#pragma once
// The large products on Hopper with the step after them in the epilogue: s = x w^T, x [M, K] and
// w [N, K] bf16 (K contiguous), fp32 sums, then per element as the separate ops round (gemm_wgmma.h).
// Persistent and warp-specialised: warpgroup 0's first thread brings 128 x 64 tiles of x and two
// 128 x 64 tiles of w by TMA, STAGES ahead; warpgroups 1 and 2 each multiply 64 of the 128 rows by
// all 256 columns, one m64n256k16 per 16 of K, one k tile's group in flight while the next issues.
// The epilogue goes through a staging tile in shared memory that TMA stores (and, for the gated
// residual, first fills with h, asked for when the tile's products start), so the next tile's
// products start while the stores drain.
// A sum runs over K in 64-wide tiles in order from a fresh accumulator, so it depends on neither M
// nor the row's place in its tile: packed samples keep their bytes.
#include <cuda.h>

#include <cstdint>

#include "backend/cuda/kernels/linear/gemm_wgmma.h"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/primitives/tensor_core.cuh"
#include "backend/cuda/primitives/tma.cuh"
#include "backend/cuda/primitives/wgmma.cuh"
#include "backend/cuda/primitives/wgmma_n256.cuh"

namespace tf::cuda::wgmma_product {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 3, THREADS = 384;
constexpr int kATileBytes = BM * BK * 2;       // 128 rows of 128 bytes
constexpr int kBHalfBytes = (BN / 2) * BK * 2;  // each of the two 128-row boxes of w
constexpr int kStageBytes = kATileBytes + 2 * kBHalfBytes;
constexpr int kBoxBytes = BM * 64 * 2;          // a staging box: 128 rows of 64 bf16, 128-byte swizzled
constexpr int kStagingBytes = (BN / 64) * kBoxBytes;
constexpr size_t kSmemBytes =
    size_t(STAGES) * kStageBytes + kStagingBytes + 1024 + (2 * STAGES + 1) * sizeof(uint64_t);

// Output columns per tile: situ pairs 128 up rows with the 128 gate rows of the same columns.
template <GemmEpilogue E>
constexpr int kTileCols = E == GemmEpilogue::situ ? BN / 2 : BN;

struct Tiles {
  int M, N, KT;                // N: output columns (y [M, N]; gated_residual: h, updated in place, through y_map)
  int m_tiles, n_tiles, tiles;  // tile_at(i): bands of kBand row tiles, a band's rows fastest, then its columns
  const uint16_t* gate;        // gated_residual: [N]
  const float* gate_factor;  // situ: both fp32 factors' tables over all 65,536 bf16 inputs
  const float* up_factor;
};

// Tiles run in bands of kBand row tiles, each band's columns in turn: the blocks running at once share
// a band of x (kBand x 128 rows) and a run of w's columns, which stay in L2 (x whole would not, past
// ~4k rows). Only the order changes: a tile's sums are the same wherever it runs.
constexpr int kBand = 8;
struct TileAt {
  int m0, c0;
};
template <GemmEpilogue E>
__device__ __forceinline__ TileAt tile_at(const Tiles& s, int i) {
  const int per_band = kBand * s.n_tiles, band = i / per_band, in = i - band * per_band;
  const int rows = min(kBand, s.m_tiles - band * kBand);  // the last band may be short
  return {(band * kBand + in % rows) * BM, (in / rows) * kTileCols<E>};
}

// The staging tile's byte offset of (row r, column c) of the 128 x kTileCols tile: boxes of 64
// columns, each TMA's 128-byte swizzle (16-byte chunk k of row r at chunk k ^ (r % 8)).
__device__ __forceinline__ uint32_t staged_at(int r, int c) {
  return uint32_t((c / 64) * kBoxBytes + r * 128 + ((((c % 64) / 8) ^ (r % 8)) * 16) + (c % 8) * 2);
}
__device__ __forceinline__ float lo_f(uint32_t v) { return bf16_bits_to_float(static_cast<uint16_t>(v)); }
__device__ __forceinline__ float hi_f(uint32_t v) { return bf16_bits_to_float(static_cast<uint16_t>(v >> 16)); }

__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(map),
               "r"(shared_address(src)), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Until this thread's committed stores have read their shared memory (.read), or are done.
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_done() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

// Thread t's values into the staging tile, as the separate ops round them: rows m (its warp's row r)
// and m + 8 of the tile, columns 8 j + 2 (t % 4) (+1): acc[4 j .. 4 j + 1] on row r, acc[4 j + 2 ..] on
// r + 8. gated_residual reads h from the staging tile (TMA put it there) at the same places.
template <GemmEpilogue E>
__device__ __forceinline__ void stage_tile(const Tiles& s, unsigned char* staging, int r, int c0, int q,
                                           const float (&acc)[128]) {
  if constexpr (E == GemmEpilogue::situ) {
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float v[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {  // up in columns 0..127 of the accumulators, gate in 128..255
          const uint16_t ub = st_bf16(acc[4 * j + 2 * h + e]), gb = st_bf16(acc[4 * (j + 16) + 2 * h + e]);
          v[e] = __fmul_rn(__ldg(s.gate_factor + gb), __ldg(s.up_factor + ub));
        }
        *reinterpret_cast<uint32_t*>(staging + staged_at(r + 8 * h, 8 * j + 2 * q)) = pack_bf16(v[0], v[1]);
      }
  } else {
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int col = 8 * j + 2 * q;
      uint32_t g = 0;
      if constexpr (E == GemmEpilogue::gated_residual)
        g = c0 + col < s.N ? *reinterpret_cast<const uint32_t*>(s.gate + c0 + col) : 0u;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint32_t* at = reinterpret_cast<uint32_t*>(staging + staged_at(r + 8 * h, col));
        float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
        if constexpr (E == GemmEpilogue::gated_residual) {  // h + bf16(s) * gate, rounded once more
          const uint32_t old = *at;
          v0 = __fadd_rn(lo_f(old), __fmul_rn(round_bf16(v0), lo_f(g)));
          v1 = __fadd_rn(hi_f(old), __fmul_rn(round_bf16(v1), hi_f(g)));
        }
        *at = pack_bf16(v0, v1);
      }
    }
  }
}

template <GemmEpilogue E>
__global__ void __launch_bounds__(THREADS, 1)
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap x_map, const __grid_constant__ CUtensorMap w_map,
                      const __grid_constant__ CUtensorMap w2_map, const __grid_constant__ CUtensorMap y_map, Tiles s) {
  extern __shared__ unsigned char smem_raw[];
  auto* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  unsigned char* staging = base + STAGES * kStageBytes;                      // the epilogue's tile
  auto* full = reinterpret_cast<uint64_t*>(staging + kStagingBytes);       // the stage's bytes have landed
  uint64_t* empty = full + STAGES;                                        // both consumers are done with it
  uint64_t* h_landed = empty + STAGES;                                    // gated_residual: h is staged
  if (threadIdx.x == 0) {
    mbarrier_init_stages(full, empty, STAGES, 2 * 128);
    mbarrier_init(h_landed, 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  const int wg = threadIdx.x / 128;

  if (wg == 0) {
    registers_decrease<40>();
    if (threadIdx.x != 0) return;
    int it = 0;  // k tiles issued by this block, across its output tiles
    for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
      const auto [m0, c0] = tile_at<E>(s, tile);
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
  const bool leader = threadIdx.x == 128;  // issues the staging tile's loads and stores
  constexpr int kBoxes = kTileCols<E> / 64;
  int it = 0, n_tile = 0;
  float acc[128];
  for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x, ++n_tile) {
    const auto [m0, c0] = tile_at<E>(s, tile);
    if (E == GemmEpilogue::gated_residual && leader) {  // h's tile into the staging tile while the products run
      bulk_wait_read();                                  // the previous tile's stores have read it
      mbarrier_arrive_expect_tx(h_landed, kStagingBytes);
      for (int b = 0; b < kBoxes; ++b) tma_load_2d(staging + b * kBoxBytes, &y_map, h_landed, c0 + 64 * b, m0);
    }
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
    if constexpr (E == GemmEpilogue::gated_residual) {
      mbarrier_wait(h_landed, n_tile & 1);
    } else {
      if (leader) bulk_wait_read();  // the previous tile's stores have read the staging tile
      consumers_sync();
    }
    stage_tile<E>(s, staging, 64 * cw + 16 * (t / 32) + (t % 32) / 4, c0, t % 4, acc);
    fence_shared_for_async_proxy();  // the staged values, written by this thread, visible to TMA
    consumers_sync();
    if (leader) {
      for (int b = 0; b < kBoxes; ++b) tma_store_2d(&y_map, staging + b * kBoxBytes, c0 + 64 * b, m0);
      bulk_commit();
    }
  }
  if (leader) bulk_wait_done();  // the shared memory stays until the last stores have read it
}

}  // namespace tf::cuda::wgmma_product
