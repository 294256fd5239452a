#pragma once
// The convolution's implicit GEMM with both operands brought by the tensor memory accelerator:
// C[Co, positions] = W[Co, K] . im2col(x)[K, positions], K = tap * Cp + ci, Cp = Ci rounded up to 64
// (the weights' padding columns zero, the picture's channels past Ci read as zeros by TMA).
// The activations are first split once into channels-last bf16 hi and lo pictures
// (split_channels_last); a K tile is then one tap's 64 channels of a BH x BW rectangle of output
// positions, which TMA reads as a box of the hi or lo picture shifted by the tap (stride 2 as an
// element stride; the padding is the box reaching outside the picture, read as zeros).
// Numerics are conv_wgmma_kernel's exactly (same split, same K order, per k16 w * lo then w * hi
// into a fresh per-K-tile accumulator added to the running one), so the bytes are the same.
// Warp-specialised and persistent: warpgroup 0's first thread issues the loads STAGES tiles ahead,
// warpgroups 1 and 2 multiply 64 Co rows each; blocks loop over output tiles.
// With A_SPLIT the A operand is an fp32 matrix split into hi and lo as well (the attention's
// products, each a 1x1 convolution over a one-row picture): per k16 A_hi B_lo, A_hi B_hi, A_lo B_hi,
// the order of split_wgmma_f32_kernel; the softmax between them may be split over the two (SoftmaxStep).
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/kernels/split_products/slab_stats.cuh"
#include "backend/cuda/kernels/split_products/softmax_tiles.cuh"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"
#include "backend/cuda/kernels/split_products/split_gemm_wgmma.cuh"
#include "backend/cuda/kernels/split_products/split_passes.cuh"
#include "backend/cuda/kernels/split_products/staged_store.cuh"
#include "backend/cuda/primitives/tma.cuh"
#include "backend/cuda/primitives/wgmma.cuh"

namespace tf::cuda::conv_tma {

template <bool A_SPLIT>
constexpr int kTilesPerStage = A_SPLIT ? 4 : 3;  // (A hi, A lo,) B hi, B lo
template <bool A_SPLIT>
constexpr int kStages = 3;  // as many as fit in 227 KB (beside the staged tile without A_SPLIT)
constexpr size_t kOutBytes = size_t(8) * kOutRowsPerWarp * BN * sizeof(float);  // 8 consumer warps
// Without A_SPLIT a tile's sums go through a staged tile to the store warps (staged_store.cuh); with it
// the consumers store, through staging rows where there is a residual (the launch adds kOutBytes).
template <bool A_SPLIT>
constexpr size_t kSmemBytes = size_t(kStages<A_SPLIT>) * kTilesPerStage<A_SPLIT> * kTileBytes +
                              (A_SPLIT ? 0 : kStagedBytes<BM>) + 1024 + (2 * kStages<A_SPLIT> + 4) * sizeof(uint64_t);
static_assert(kSmemBytes<false> <= 227 * 1024 && kSmemBytes<true> + kOutBytes <= 227 * 1024);

// The tile's accumulators plus the residual into y: acc[4 j + q] of consumer thread t is Co row
// 16 (t / 32) + (t % 32) / 4 (+8 for q >= 2) of its warpgroup's 64, tile column 8 j + 2 (t % 4) (+1).
// Each warp passes its rows through shared memory (`rows`, [8][BN], columns XOR-swizzled by 8 x row
// so neither the pair writes nor the row reads conflict), then writes and reads whole rows: a warp
// instruction covers 128 consecutive positions of one Co row instead of 8 rows x 8 positions.
// Arithmetic as gemm::store_pair: alpha * acc + bias, then + residual.
__device__ __forceinline__ void store_tile_rows(const gemm::Epilogue& e, const ConvTiles& s, int m0, int oy0, int ox0,
                                                int cw, int t, const float (&acc)[64], float* rows) {
  const int lane = t % 32, col = 4 * lane;
  const int oy = oy0 + col / s.BW, ox = ox0 + col % s.BW;  // a lane's 4 columns share a tile row (BW % 4 == 0)
  const bool in_y = oy < s.Ho;
  const bool vec4 = s.Wo % 4 == 0 && e.ldc % 4 == 0 && (reinterpret_cast<uintptr_t>(e.c) & 15) == 0 &&
                    (!e.residual || (reinterpret_cast<uintptr_t>(e.residual) & 15) == 0);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    stage_row_half(rows, lane, h, acc);
    __syncwarp();
    const int mfirst = m0 + 64 * cw + 16 * (t / 32) + 8 * h;  // row R of the 8 is Co mfirst + R
    float4 v[kOutRowsPerWarp], res[kOutRowsPerWarp];
#pragma unroll
    for (int R = 0; R < kOutRowsPerWarp; ++R) {
      v[R] = staged_columns(rows, lane, R);
      res[R] = make_float4(0.f, 0.f, 0.f, 0.f);
      const int m = mfirst + R;
      if (e.residual && m < e.M && in_y) {
        const float* src = e.residual + int64_t(m) * e.ldc + int64_t(oy) * s.Wo + ox;
        if (vec4 && ox + 3 < s.Wo) {
          res[R] = *reinterpret_cast<const float4*>(src);
        } else {
          if (ox < s.Wo) res[R].x = src[0];
          if (ox + 1 < s.Wo) res[R].y = src[1];
          if (ox + 2 < s.Wo) res[R].z = src[2];
          if (ox + 3 < s.Wo) res[R].w = src[3];
        }
      }
    }
    __syncwarp();  // the rows are read before the next h overwrites them
#pragma unroll
    for (int R = 0; R < kOutRowsPerWarp; ++R) {
      const int m = mfirst + R;
      if (m >= e.M || !in_y) continue;
      const float bias = e.bias ? __bfloat162float(e.bias[m]) : 0.f;
      auto out = [&](float a, float rr) {
        const float y = __fadd_rn(__fmul_rn(e.alpha, a), bias);
        return e.residual ? __fadd_rn(y, rr) : y;
      };
      const float4 y = make_float4(out(v[R].x, res[R].x), out(v[R].y, res[R].y), out(v[R].z, res[R].z),
                                   out(v[R].w, res[R].w));
      float* dst = e.c + int64_t(m) * e.ldc + int64_t(oy) * s.Wo + ox;
      if (vec4 && ox + 3 < s.Wo) {
        *reinterpret_cast<float4*>(dst) = y;
      } else {
        if (ox < s.Wo) dst[0] = y.x;
        if (ox + 1 < s.Wo) dst[1] = y.y;
        if (ox + 2 < s.Wo) dst[2] = y.z;
        if (ox + 3 < s.Wo) dst[3] = y.w;
      }
    }
  }
}

// The tile's accumulators into y when there is no residual: straight from the fragments, each
// pair as gemm::store_pair computes it (alpha * acc + bias).
__device__ __forceinline__ void store_tile_direct(const gemm::Epilogue& e, const ConvTiles& s, int m0, int oy0,
                                                  int ox0, int cw, int t, const float (&acc)[64]) {
  const bool vec2 = gemm::pairs_vectorised(e) && s.Wo % 2 == 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int m = m0 + 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
    const float bias = e.bias && m < e.M ? __bfloat162float(e.bias[m]) : 0.f;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int col = 8 * j + 2 * (t % 4), oy = oy0 + col / s.BW, ox = ox0 + col % s.BW;
      const bool in0 = m < e.M && oy < s.Ho && ox < s.Wo, in1 = in0 && ox + 1 < s.Wo;
      float* dst = e.c + int64_t(m) * e.ldc + int64_t(oy) * s.Wo + ox;
      const float v0 = __fadd_rn(__fmul_rn(e.alpha, acc[4 * j + 2 * h]), bias);
      const float v1 = __fadd_rn(__fmul_rn(e.alpha, acc[4 * j + 2 * h + 1]), bias);
      if (vec2 && in1) {
        *reinterpret_cast<float2*>(dst) = make_float2(v0, v1);
      } else {
        if (in0) dst[0] = v0;
        if (in1) dst[1] = v1;
      }
    }
  }
}

template <bool A_SPLIT, SoftmaxStep STEP = SoftmaxStep::none>
__global__ void __launch_bounds__(THREADS, 1)
    conv_tma_kernel(const __grid_constant__ CUtensorMap w_map, const __grid_constant__ CUtensorMap w_lo_map,
                    const __grid_constant__ CUtensorMap hi_map, const __grid_constant__ CUtensorMap lo_map,
                    ConvTiles s, gemm::Epilogue e) {
  constexpr int STAGES = kStages<A_SPLIT>, kStageBytes = kTilesPerStage<A_SPLIT> * kTileBytes;
  constexpr int kB = A_SPLIT ? 2 : 1;  // the B hi tile's index in a stage
  extern __shared__ unsigned char smem_raw[];
  auto* base = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  constexpr int kStaged = A_SPLIT ? 0 : kStagedBytes<BM>;
  auto* staged = reinterpret_cast<float*>(base + STAGES * kStageBytes);  // without A_SPLIT: the tile to store
  auto* full = reinterpret_cast<uint64_t*>(base + STAGES * kStageBytes + kStaged);  // the stage's bytes have landed
  uint64_t* empty = full + STAGES;                                        // both consumers are done with it
  uint64_t* out_full = empty + STAGES;                                    // the consumers have staged a tile
  uint64_t* out_empty = out_full + 1;                                     // the store warps have read it
  uint64_t* res_full = out_empty + 1;                                     // residual_staged: its copy has landed
  auto* out_rows = reinterpret_cast<float*>(out_empty + 3);  // A_SPLIT: [8 consumer warps][8][BN], 16-byte aligned
  if (threadIdx.x == 0) {
    mbarrier_init_stages(full, empty, STAGES, 2 * 128);
    mbarrier_init(out_full, 2 * 128);
    mbarrier_init(out_empty, kStoreWarps * 32);
    mbarrier_init(res_full, kStoreWarps * 32);
    mbarrier_init_fence();
  }
  __syncthreads();
  const int wg = threadIdx.x / 128;

  if (wg == 0) {
    registers_decrease<A_SPLIT ? 40 : 80>();
    if (!A_SPLIT && threadIdx.x >= 32) {  // the store warps
      run_store_warps<BM, 0, true>(e, s, staged, out_full, out_empty, res_full);
      return;
    }
    if (threadIdx.x != 0) return;
    int it = 0;  // K tiles issued by this block, across its output tiles
    for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
      const TilePlace q = tile_place(s, tile, BM);
      const int cls = q.cls, m0 = q.m0;
      const int ix0 = q.ox0 * s.stride - class_pad_left(s, cls), iy0 = q.oy0 * s.stride - class_pad_top(s, cls);
      const int k0 = cls * s.class_k;  // the class's weights
      int c = 0, tap = 0;
      for (int kt = 0; kt < s.KT; ++kt, ++it) {
        const int st = it % STAGES;
        if (it >= STAGES) mbarrier_wait(empty + st, ((it / STAGES) - 1) & 1);
        unsigned char* dst = base + st * kStageBytes;
        mbarrier_arrive_expect_tx(full + st, kStageBytes);
        const int ky = tap / s.ks, kx = tap - ky * s.ks;
        tma_load_2d(dst, &w_map, full + st, k0 + kt * BK, m0);
        if constexpr (A_SPLIT) tma_load_2d(dst + kTileBytes, &w_lo_map, full + st, kt * BK, m0);
        tma_load_3d(dst + kB * kTileBytes, &hi_map, full + st, c * BK, ix0 + kx, iy0 + ky);
        tma_load_3d(dst + (kB + 1) * kTileBytes, &lo_map, full + st, c * BK, ix0 + kx, iy0 + ky);
        if (++c == s.c_tiles) c = 0, ++tap;
      }
      c = 0;
      for (int j = 0, kt = s.KT; j < s.KT1; ++j, ++kt, ++it) {  // one product: the weights' lo, the picture's hi
        const int st = it % STAGES;
        if (it >= STAGES) mbarrier_wait(empty + st, ((it / STAGES) - 1) & 1);
        unsigned char* dst = base + st * kStageBytes;
        mbarrier_arrive_expect_tx(full + st, 2 * kTileBytes);
        const int q = lo_tap(cls, j / s.c_tiles), ky = q / s.ks, kx = q - ky * s.ks;
        tma_load_2d(dst, &w_map, full + st, k0 + kt * BK, m0);
        tma_load_3d(dst + kB * kTileBytes, &hi_map, full + st, c * BK, ix0 + kx, iy0 + ky);
        if (++c == s.c_tiles) c = 0;
      }
    }
    return;
  }

  registers_increase<A_SPLIT ? 232 : 208>();
  const int cw = wg - 1, t = threadIdx.x % 128;
  const bool copied = !A_SPLIT && residual_staged(e, s);
  int n = 0;  // tiles staged for the store warps
  int it = 0;
  static_assert(A_SPLIT || STEP == SoftmaxStep::none);
  for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
    const TilePlace q = tile_place(s, tile, BM);
    float bias[2];  // asked for before the products, used after them
    if (copied || e.tile_stats) row_biases(e, q.m0, cw, t, bias);
    float acc[64], part[64];
    float f[STEP == SoftmaxStep::scaled_k ? 32 : 1];  // the K block's factors for this thread's columns
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.f;
    for (int kt = 0; kt < s.KT; ++kt, ++it) {
      const int st = it % STAGES;
      unsigned char* src = base + st * kStageBytes;
      if constexpr (STEP == SoftmaxStep::scaled_k)  // asked for before the wait, used after the products
        if (kt * BK % kSoftmaxTile == 0) block_factors(e, q.ox0, kt * BK / kSoftmaxTile, t, f);
      mbarrier_wait(full + st, (it / STAGES) & 1);
      gemm_wgmma::split_k_tile<A_SPLIT>(part, wgmma_descriptor(src + 64 * cw * BK * 2),
                                        wgmma_descriptor(src + kTileBytes + 64 * cw * BK * 2),
                                        wgmma_descriptor(src + kB * kTileBytes),
                                        wgmma_descriptor(src + (kB + 1) * kTileBytes));
      wgmma_wait_all();
      wgmma_fence_registers(part);
      mbarrier_arrive(empty + st);
      if constexpr (STEP == SoftmaxStep::scaled_k) {
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = __fmaf_rn(part[i], f[2 * (i / 4) + i % 2], acc[i]);
      } else {
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = __fadd_rn(acc[i], part[i]);
      }
    }
    if constexpr (!A_SPLIT) {
      for (int j = 0; j < s.KT1; ++j, ++it) {  // sub-pixel classes: the weights' lo against the picture's hi
        const int st = it % STAGES;
        unsigned char* src = base + st * kStageBytes;
        mbarrier_wait(full + st, (it / STAGES) & 1);
        gemm_wgmma::single_k_tile<128>(part, wgmma_descriptor(src + 64 * cw * BK * 2), wgmma_descriptor(src + kTileBytes));
        wgmma_wait_all();
        wgmma_fence_registers(part);
        mbarrier_arrive(empty + st);
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = __fadd_rn(acc[i], part[i]);
      }
    }
    if constexpr (!A_SPLIT) {
      if (n > 0) mbarrier_wait(out_empty, (n - 1) & 1);  // the store warps have read the last tile
      if (copied) {
        mbarrier_wait(res_full, n & 1);  // this tile's residual has landed in the staging
        stage_rows<true>(staged, cw, t, acc, e.alpha, bias);
      } else {
        stage_rows<false>(staged, cw, t, acc);
      }
      mbarrier_arrive(out_full);
      ++n;
      if (e.tile_stats) {  // the outputs' statistics while the store warps store (acc holds them when copied)
        if (!copied) output_row_values(acc, e.alpha, bias);
        const int64_t run = int64_t(tile / s.classes / s.m_tiles) * s.classes + q.cls;
        store_row_tile_stats(e, s, run, q.m0, q.oy0, q.ox0, cw, t, acc);
      }
    } else if constexpr (STEP == SoftmaxStep::exp_tiles) {
      tile_exp(e, q.m0, q.ox0, cw, t, acc);
      store_tile_exp_rows(e, q.m0, q.ox0, cw, t, acc, out_rows + (threadIdx.x / 32 - 4) * kOutRowsPerWarp * BN);
    } else if (e.residual) {  // whole rows pay where the residual's loads are; without one scattered stores are as fast
      store_tile_rows(e, s, q.m0, q.oy0, q.ox0, cw, t, acc, out_rows + (threadIdx.x / 32 - 4) * kOutRowsPerWarp * BN);
    } else {
      store_tile_direct(e, s, q.m0, q.oy0, q.ox0, cw, t, acc);
    }
  }
}

}  // namespace tf::cuda::conv_tma
