#pragma once
// The convolution's implicit GEMM with both operands brought by the tensor memory accelerator:
// C[Co, positions] = W[Co, K] . im2col(x)[K, positions], K = tap * Ci + ci, Ci % 64 == 0.
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
// the order of split_wgmma_f32_kernel.
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/group_norm_affine.cuh"
#include "backend/cuda/split_gemm.cuh"
#include "backend/cuda/split_gemm_wgmma.cuh"
#include "backend/cuda/tma.cuh"
#include "backend/cuda/wgmma.cuh"

namespace tf::cuda::conv_tma {

constexpr int BM = 128, BN = 128, BK = 64, THREADS = 384;
constexpr int kTileBytes = 128 * BK * 2;  // one operand tile: 128 rows of 128 bytes
template <bool A_SPLIT>
constexpr int kTilesPerStage = A_SPLIT ? 4 : 3;  // (A hi, A lo,) B hi, B lo
template <bool A_SPLIT>
constexpr int kStages = A_SPLIT ? 3 : 4;  // as many as fit in 227 KB
template <bool A_SPLIT>
constexpr size_t kSmemBytes = size_t(kStages<A_SPLIT>) * kTilesPerStage<A_SPLIT> * kTileBytes + 1024 +
                              2 * kStages<A_SPLIT> * sizeof(uint64_t);

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
    if (t < 64) affine[t] = channel_affine(norm, c0 + t);
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
        float v = p < positions ? x[int64_t(c0 + c) * Hs * Ws + int64_t(sy) * Ws + sx] : 0.f;
        if constexpr (NORM) v = group_norm_value(affine[c], norm.silu, v);
        tile[c][t % 32] = v;
      }
    }
    __syncthreads();
    const int pos = t / 8, ch = t % 8;
    const int64_t p = p0 + pos;
    if (p < positions) {
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

struct ConvTiles {
  int m_tiles, tiles_x, tiles;  // tile i: Co rows (i % m_tiles) * 128, positions tile i / m_tiles (x fastest)
  int BW, BH;                   // output positions per tile: BH rows x BW columns, BW * BH == 128
  int ks, stride, pad_top, pad_left;
  int c_tiles, KT;  // Ci / 64; K tiles per output tile (taps * c_tiles)
  int Ho, Wo;
};

// The tile's accumulators into y: acc[4 j + q] of consumer thread t is Co row
// 16 (t / 32) + (t % 32) / 4 (+8 for q >= 2) of its warpgroup's 64, tile column 8 j + 2 (t % 4) (+1).
// Every residual is loaded before the first store, so the loads are in flight together instead of
// one dependent load per stored pair. Arithmetic as gemm::store_pair: alpha * acc + bias, then + residual.
__device__ __forceinline__ void store_tile(const gemm::Epilogue& e, const ConvTiles& s, int m0, int oy0, int ox0,
                                           int cw, int t, const float (&acc)[64]) {
  const bool vec2 = gemm::pairs_vectorised(e) && s.Wo % 2 == 0;
  auto where = [&](int h, int j, int64_t& off, bool& in0, bool& in1) {  // (h, j)'s pair: offset, which are real
    const int m = m0 + 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
    const int col = 8 * j + 2 * (t % 4), oy = oy0 + col / s.BW, ox = ox0 + col % s.BW;
    in0 = m < e.M && oy < s.Ho && ox < s.Wo;
    in1 = in0 && ox + 1 < s.Wo;
    off = int64_t(m) * e.ldc + int64_t(oy) * s.Wo + ox;
  };
  float res[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) res[i] = 0.f;
  if (e.residual) {
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        int64_t off;
        bool in0, in1;
        where(h, j, off, in0, in1);
        float& r0 = res[4 * j + 2 * h];
        float& r1 = res[4 * j + 2 * h + 1];
        if (vec2 && in1) {
          const float2 r = *reinterpret_cast<const float2*>(e.residual + off);
          r0 = r.x, r1 = r.y;
        } else {
          if (in0) r0 = e.residual[off];
          if (in1) r1 = e.residual[off + 1];
        }
      }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int m = m0 + 64 * cw + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
    const float bias = e.bias && m < e.M ? __bfloat162float(e.bias[m]) : 0.f;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      int64_t off;
      bool in0, in1;
      where(h, j, off, in0, in1);
      float v0 = __fadd_rn(__fmul_rn(e.alpha, acc[4 * j + 2 * h]), bias);
      float v1 = __fadd_rn(__fmul_rn(e.alpha, acc[4 * j + 2 * h + 1]), bias);
      if (e.residual) v0 = __fadd_rn(v0, res[4 * j + 2 * h]), v1 = __fadd_rn(v1, res[4 * j + 2 * h + 1]);
      if (vec2 && in1) {
        *reinterpret_cast<float2*>(e.c + off) = make_float2(v0, v1);
      } else {
        if (in0) e.c[off] = v0;
        if (in1) e.c[off + 1] = v1;
      }
    }
  }
}

template <bool A_SPLIT>
__global__ void __launch_bounds__(THREADS, 1)
    conv_tma_kernel(const __grid_constant__ CUtensorMap w_map, const __grid_constant__ CUtensorMap w_lo_map,
                    const __grid_constant__ CUtensorMap hi_map, const __grid_constant__ CUtensorMap lo_map,
                    ConvTiles s, gemm::Epilogue e) {
  constexpr int STAGES = kStages<A_SPLIT>, kStageBytes = kTilesPerStage<A_SPLIT> * kTileBytes;
  constexpr int kB = A_SPLIT ? 2 : 1;  // the B hi tile's index in a stage
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
    int it = 0;  // K tiles issued by this block, across its output tiles
    for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
      const int m0 = (tile % s.m_tiles) * BM, pt = tile / s.m_tiles;
      const int ix0 = (pt % s.tiles_x) * s.BW * s.stride - s.pad_left;
      const int iy0 = (pt / s.tiles_x) * s.BH * s.stride - s.pad_top;
      int c = 0, tap = 0;
      for (int kt = 0; kt < s.KT; ++kt, ++it) {
        const int st = it % STAGES;
        if (it >= STAGES) mbarrier_wait(empty + st, ((it / STAGES) - 1) & 1);
        unsigned char* dst = base + st * kStageBytes;
        mbarrier_arrive_expect_tx(full + st, kStageBytes);
        const int ky = tap / s.ks, kx = tap - ky * s.ks;
        tma_load_2d(dst, &w_map, full + st, kt * BK, m0);
        if constexpr (A_SPLIT) tma_load_2d(dst + kTileBytes, &w_lo_map, full + st, kt * BK, m0);
        tma_load_3d(dst + kB * kTileBytes, &hi_map, full + st, c * BK, ix0 + kx, iy0 + ky);
        tma_load_3d(dst + (kB + 1) * kTileBytes, &lo_map, full + st, c * BK, ix0 + kx, iy0 + ky);
        if (++c == s.c_tiles) c = 0, ++tap;
      }
    }
    return;
  }

  registers_increase<232>();
  const int cw = wg - 1, t = threadIdx.x % 128;
  int it = 0;
  for (int tile = blockIdx.x; tile < s.tiles; tile += gridDim.x) {
    float acc[64], part[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.f;
    for (int kt = 0; kt < s.KT; ++kt, ++it) {
      const int st = it % STAGES;
      unsigned char* src = base + st * kStageBytes;
      mbarrier_wait(full + st, (it / STAGES) & 1);
      gemm_wgmma::split_k_tile<A_SPLIT>(part, wgmma_descriptor(src + 64 * cw * BK * 2),
                                        wgmma_descriptor(src + kTileBytes + 64 * cw * BK * 2),
                                        wgmma_descriptor(src + kB * kTileBytes),
                                        wgmma_descriptor(src + (kB + 1) * kTileBytes));
      wgmma_wait_all();
      wgmma_fence_registers(part);
      mbarrier_arrive(empty + st);
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[i] = __fadd_rn(acc[i], part[i]);
    }
    const int pt = tile / s.m_tiles;
    store_tile(e, s, (tile % s.m_tiles) * BM, (pt / s.tiles_x) * s.BH, (pt % s.tiles_x) * s.BW, cw, t, acc);
  }
}

}  // namespace tf::cuda::conv_tma
