#pragma once
// conv_tma_kernel with the output channels as the wgmma's N: a tile is 128 output positions x all CO
// output channels (CO = 96 or 192, widths that 128-row Co tiles pad by a quarter or a third), the
// picture's hi and lo tiles the A operand (64 positions a consumer warpgroup) and the weights' K tile
// the B operand. Loads, K order and numerics are conv_tma_kernel's: per k16 the picture's lo then hi
// against the weights into a fresh per-K-tile accumulator, added to the running one with one rounding.
// With C % 64 == 32 (96 input channels) each tap's last K tile is read 32 deep (64-byte rows, the
// 64-byte swizzle) instead of 64 with 32 zero channels: the same sums, a quarter fewer MMAs.
#include "backend/cuda/kernels/split_products/conv_tma.cuh"

namespace tf::cuda::conv_tma {

template <int CO>
constexpr int kColsStageBytes = 2 * kTileBytes + CO * BK * 2;  // hi, lo (128 positions), weights (CO rows)
constexpr int kSmemOptIn = 227 * 1024;  // sm_90's dynamic shared memory a block, opted in
constexpr int kStagedCo = 96;  // the output width whose tiles are stored by the store warps (staged_store.cuh)
template <int CO>  // the staged tile the store warps read
constexpr int kColsOutBytes = CO == kStagedCo ? kStagedBytes<kStagedCo> : 0;
template <int CO>  // as many stages as fit beside the staged tile, alignment slack, barriers and bias, at most 6
constexpr int kColsStages = (kSmemOptIn - 2048 - kColsOutBytes<CO>) / kColsStageBytes<CO> < 6
                                ? (kSmemOptIn - 2048 - kColsOutBytes<CO>) / kColsStageBytes<CO>
                                : 6;
template <int CO>  // the bias as floats: 96-output tiles may be halves of 192 outputs (ConvTiles::m_tiles 2)
constexpr int kColsBias = CO == kStagedCo ? 2 * CO : CO;
template <int CO>  // the stages, the staged tile, the barriers (stages' and the staged tile's), the bias
constexpr size_t kColsSmemBytes = size_t(kColsStages<CO>) * kColsStageBytes<CO> + kColsOutBytes<CO> + 1024 +
                                  (2 * kColsStages<CO> + 3) * sizeof(uint64_t) + kColsBias<CO> * sizeof(float);
static_assert(kColsStages<96> == 4 && kColsStages<192> == 4 && kColsSmemBytes<192> <= size_t(kSmemOptIn) &&
              kColsSmemBytes<96> <= size_t(kSmemOptIn));
// The producer warpgroup's and the consumers' registers: more for the store warps where they store.
template <int CO>
constexpr int kProducerRegisters = CO == kStagedCo ? 80 : 40;
template <int CO>
constexpr int kConsumerRegisters = CO == kStagedCo ? 208 : 232;

// acc[4 j + q] of consumer thread t: position 64 cw + 16 (t / 32) + (t % 32) / 4 (+8 for q >= 2) of the
// tile, output channel 8 j + 2 (t % 4) (+1 for odd q); stored as gemm::store_pair computes (alpha * acc
// + bias, then + residual). A position's residual values are loaded 24 at a time before any of their
// stores (the stores could alias them, so a load placed after a store waits out its own latency); the bias
// comes from shared memory. A warp instruction writes 8 consecutive positions of 4 channels.
template <int CO>
__device__ __forceinline__ void store_cols(const gemm::Epilogue& e, const ConvTiles& s, int oy0, int ox0,
                                           const OutMap& map, int cw, int t, const float (&acc)[CO / 2],
                                           const float* bias) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int p = 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h, oy = oy0 + p / s.BW, ox = ox0 + p % s.BW;
    if (oy >= s.Ho || ox >= s.Wo) continue;
    const int64_t at = map.base + int64_t(oy) * map.row + int64_t(ox) * map.col;
    constexpr int kChunk = 24;  // residual values in flight at once (more would spill at CO = 192)
#pragma unroll
    for (int i0 = 0; i0 < CO / 4; i0 += kChunk) {
      float r[kChunk];
#pragma unroll
      for (int i = 0; i < kChunk; ++i) {
        const int m = 8 * ((i0 + i) / 2) + 2 * (t % 4) + i % 2;
        r[i] = e.residual && m < e.M ? e.residual[int64_t(m) * e.ldc + at] : 0.f;
      }
#pragma unroll
      for (int i = 0; i < kChunk; ++i) {
        const int m = 8 * ((i0 + i) / 2) + 2 * (t % 4) + i % 2;
        if (m >= e.M) continue;
        const float y = __fadd_rn(__fmul_rn(e.alpha, acc[4 * ((i0 + i) / 2) + 2 * h + i % 2]), bias[m]);
        e.c[int64_t(m) * e.ldc + at] = e.residual ? __fadd_rn(y, r[i]) : y;
      }
    }
  }
}

// One K tile into part from zero (per k16 the picture's lo, then hi, against the weights), committed as
// one group and not waited for.
template <int CO, int K16>
__device__ __forceinline__ void cols_k_tile(float (&part)[CO / 2], uint64_t hi, uint64_t lo, uint64_t w) {
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < K16; ++kk) {
    // the fresh accumulator starts with the first product (d = a b), so part needs no zeroing
    wgmma_m64k16_bf16<CO>(part, wgmma_descriptor_at_k16(lo, kk), wgmma_descriptor_at_k16(w, kk), kk != 0);
    wgmma_m64k16_bf16<CO>(part, wgmma_descriptor_at_k16(hi, kk), wgmma_descriptor_at_k16(w, kk));
  }
  wgmma_commit();
}

// A K tile's operands in shared memory: the picture's hi and lo rows of this warpgroup, the weights
// (CO rows); `half`: 32 deep (64-byte rows) instead of 64.
struct ColsKTile {
  const unsigned char *hi, *lo, *w;
  bool half;
};

// A K tile's products, its depth known (DEPTH 32 or 64) or read from k (DEPTH 0).
template <int CO, int DEPTH = 0>
__device__ __forceinline__ void cols_issue(float (&part)[CO / 2], const ColsKTile& k) {
  if (DEPTH == 32 || (DEPTH == 0 && k.half))
    cols_k_tile<CO, 2>(part, wgmma_descriptor_64b(k.hi), wgmma_descriptor_64b(k.lo), wgmma_descriptor_64b(k.w));
  else
    cols_k_tile<CO, 4>(part, wgmma_descriptor(k.hi), wgmma_descriptor(k.lo), wgmma_descriptor(k.w));
}

// A tile's KT K tiles into acc, each into a fresh accumulator added to acc with one rounding.
// acquire(k) waits for K tile k's bytes and returns its operands; release(k) frees its stage(s) once
// its products are done. CT > 0 (96 outputs): a tap's CT channel tiles are written out straight (the
// last 32 deep when HALF) with two accumulators alternating, so K tile k + 1's products run while K tile
// k's sum is added; no products are pending across the loop's back edge and no branch chooses between
// products, or the compiler cannot tell which group a wait ends and serialises them. CT = 0: any channel
// tiles, each K tile's sum added after its products (192 outputs have no registers for a second one).
template <int CO, int CT, bool HALF, class Acquire, class Release>
__device__ __forceinline__ void cols_k_loop(float (&acc)[CO / 2], int KT, Acquire acquire, Release release) {
  auto add = [&](const float(&part)[CO / 2]) {
#pragma unroll
    for (int i = 0; i < CO / 2; ++i) acc[i] = __fadd_rn(acc[i], part[i]);
  };
  if constexpr (CT > 0) {
    static_assert(CO == kStagedCo && CT <= 3);
    constexpr int kLast = HALF ? 32 : 64;  // the tap's last channel tile's depth
    float p0[CO / 2], p1[CO / 2];
    auto done = [&](float(&part)[CO / 2], int k) {
      wgmma_fence_registers(part);
      release(k);
      add(part);
    };
    for (int k0 = 0; k0 < KT; k0 += CT) {
      cols_issue<CO, CT == 1 ? kLast : 64>(p0, acquire(k0));
      if constexpr (CT >= 2) {
        cols_issue<CO, CT == 2 ? kLast : 64>(p1, acquire(k0 + 1));
        wgmma_wait<1>();
        done(p0, k0);
      }
      if constexpr (CT == 3) {
        cols_issue<CO, kLast>(p0, acquire(k0 + 2));
        wgmma_wait<1>();
        done(p1, k0 + 1);
      }
      wgmma_wait<0>();
      done(CT == 2 ? p1 : p0, k0 + CT - 1);
    }
  } else {
    float part[CO / 2];
    for (int kt = 0; kt < KT; ++kt) {
      cols_issue<CO>(part, acquire(kt));
      wgmma_wait<0>();
      wgmma_fence_registers(part);
      release(kt);
      add(part);
    }
  }
}

// CT, HALF: cols_k_loop's (a tap's channel tiles and last tile's depth fixed, or CT = 0).
template <int CO, int CT, bool HALF>
__global__ void __launch_bounds__(THREADS, 1)
    conv_tma_cols_kernel(const __grid_constant__ CUtensorMap w_map, const __grid_constant__ CUtensorMap hi_map,
                         const __grid_constant__ CUtensorMap lo_map, const __grid_constant__ CUtensorMap w32_map,
                         const __grid_constant__ CUtensorMap hi32_map, const __grid_constant__ CUtensorMap lo32_map,
                         ConvTiles s, gemm::Epilogue e) {
  constexpr int kHalfStageBytes = kColsStageBytes<CO> / 2;  // a 32-deep K tile's hi, lo and weights
  constexpr int STAGES = kColsStages<CO>, kStageBytes = kColsStageBytes<CO>;
  extern __shared__ unsigned char smem_raw[];
  auto* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  auto* staged = reinterpret_cast<float*>(base + STAGES * kStageBytes);  // 96 outputs: the tile to store
  auto* full = reinterpret_cast<uint64_t*>(base + STAGES * kStageBytes + kColsOutBytes<CO>);  // the stage's bytes have landed
  uint64_t* empty = full + STAGES;                                        // both consumers are done with it
  uint64_t* out_full = empty + STAGES;                                    // the consumers have staged a tile
  uint64_t* out_empty = out_full + 1;                                     // the store warps have read it
  uint64_t* res_full = out_empty + 1;                                     // residual_staged: its copy has landed
  auto* bias = reinterpret_cast<float*>(res_full + 1);
  if (threadIdx.x == 0) {
    mbarrier_init_stages(full, empty, STAGES, 2 * 128);
    mbarrier_init(out_full, 2 * 128);
    mbarrier_init(out_empty, kStoreWarps * 32);
    mbarrier_init(res_full, kStoreWarps * 32);
    mbarrier_init_fence();
  }
  for (int m = threadIdx.x; m < kColsBias<CO>; m += THREADS) bias[m] = e.bias && m < e.M ? __bfloat162float(e.bias[m]) : 0.f;
  __syncthreads();
  const int wg = threadIdx.x / 128;

  if (wg == 0) {
    registers_decrease<kProducerRegisters<CO>>();
    if (CO == kStagedCo && threadIdx.x >= 32) {  // the store warps
      run_store_warps<kStagedCo, 1, false>(e, s, staged, out_full, out_empty, res_full);
      return;
    }
    if (threadIdx.x != 0) return;
    int it = 0;  // K tiles issued by this block, across its output tiles
    for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
      const TilePlace q = tile_place(s, tile, CO);
      const int cls = q.cls, k0 = cls * s.class_k, m0 = q.m0;  // m0: the tile's output channels' weights
      const int ix0 = q.ox0 * s.stride - class_pad_left(s, cls), iy0 = q.oy0 * s.stride - class_pad_top(s, cls);
      int c = 0, tap = 0;
      for (int kt = 0; kt < s.KT; ++kt, ++it) {
        const int st = it % STAGES;
        if (it >= STAGES) mbarrier_wait(empty + st, ((it / STAGES) - 1) & 1);
        unsigned char* dst = base + st * kStageBytes;
        const int ky = tap / s.ks, kx = tap - ky * s.ks;
        if (s.half_last && c == s.c_tiles - 1) {
          mbarrier_arrive_expect_tx(full + st, kHalfStageBytes);
          tma_load_3d(dst, &hi32_map, full + st, c * BK, ix0 + kx, iy0 + ky);
          tma_load_3d(dst + kTileBytes, &lo32_map, full + st, c * BK, ix0 + kx, iy0 + ky);
          tma_load_2d(dst + 2 * kTileBytes, &w32_map, full + st, k0 + kt * BK, m0);
        } else {
          mbarrier_arrive_expect_tx(full + st, kStageBytes);
          tma_load_3d(dst, &hi_map, full + st, c * BK, ix0 + kx, iy0 + ky);
          tma_load_3d(dst + kTileBytes, &lo_map, full + st, c * BK, ix0 + kx, iy0 + ky);
          tma_load_2d(dst + 2 * kTileBytes, &w_map, full + st, k0 + kt * BK, m0);
        }
        if (++c == s.c_tiles) c = 0, ++tap;
      }
      c = 0;
      for (int j = 0, kt = s.KT; j < s.KT1; ++j, ++kt, ++it) {  // one product: the picture's hi, the weights' lo
        const int st = it % STAGES;
        if (it >= STAGES) mbarrier_wait(empty + st, ((it / STAGES) - 1) & 1);
        unsigned char* dst = base + st * kStageBytes;
        const int q = lo_tap(cls, j / s.c_tiles), ky = q / s.ks, kx = q - ky * s.ks;
        mbarrier_arrive_expect_tx(full + st, kTileBytes + CO * BK * 2);
        tma_load_3d(dst, &hi_map, full + st, c * BK, ix0 + kx, iy0 + ky);
        tma_load_2d(dst + 2 * kTileBytes, &w_map, full + st, k0 + kt * BK, m0);
        if (++c == s.c_tiles) c = 0;
      }
    }
    return;
  }

  registers_increase<kConsumerRegisters<CO>>();
  const int cw = wg - 1, t = threadIdx.x % 128;
  const bool copied = CO == kStagedCo && residual_staged(e, s);
  int n = 0;   // tiles staged for the store warps
  int it = 0;  // this tile's first K tile, counted across the block's tiles
  for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
    float acc[CO / 2];
#pragma unroll
    for (int i = 0; i < CO / 2; ++i) acc[i] = 0.f;
    auto acquire = [&](int kt) {
      const int st = (it + kt) % STAGES;
      const unsigned char* src = base + st * kStageBytes;
      mbarrier_wait(full + st, ((it + kt) / STAGES) & 1);
      const int ct = CT > 0 ? CT : s.c_tiles;  // a constant where fixed: no division per K tile
      const bool half = s.half_last && kt % ct == ct - 1;  // 32 deep: rows of 64 bytes
      const int rows = 64 * cw * (half ? 64 : BK * 2);  // the warpgroup's 64 positions
      return ColsKTile{src + rows, src + kTileBytes + rows, src + 2 * kTileBytes, half};
    };
    auto release = [&](int kt) { mbarrier_arrive(empty + (it + kt) % STAGES); };
    cols_k_loop<CO, CT, HALF>(acc, s.KT, acquire, release);
    if constexpr (CT == 0) {  // sub-pixel classes: the picture's hi against the weights' lo
      float part[CO / 2];
      for (int kt = s.KT; kt < s.KT + s.KT1; ++kt) {
        const ColsKTile k = acquire(kt);
        gemm_wgmma::single_k_tile<CO>(part, wgmma_descriptor(k.hi), wgmma_descriptor(k.w));
        wgmma_wait<0>();
        wgmma_fence_registers(part);
        release(kt);
#pragma unroll
        for (int i = 0; i < CO / 2; ++i) acc[i] = __fadd_rn(acc[i], part[i]);
      }
    }
    it += s.KT + s.KT1;
    const TilePlace q = tile_place(s, tile, CO);
    if constexpr (CO == kStagedCo) {
      if (n > 0) mbarrier_wait(out_empty, (n - 1) & 1);  // the store warps have read the last tile
      if (copied) {
        mbarrier_wait(res_full, n & 1);  // this tile's residual has landed in the staging
        stage_cols<true>(staged, cw, t, acc, e.alpha, bias + q.m0);
      } else {
        stage_cols<false>(staged, cw, t, acc);
      }
      mbarrier_arrive(out_full);
      ++n;
    } else {
      store_cols<CO>(e, s, q.oy0, q.ox0, out_map(s, q.cls), cw, t, acc, bias);
    }
  }
}

}  // namespace tf::cuda::conv_tma
