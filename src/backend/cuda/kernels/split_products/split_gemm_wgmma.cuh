#pragma once
// The convolution's implicit GEMM on Hopper's warpgroup MMA, for the tap-major gather with
// Ci % 64 == 0 (one 64-deep K tile = one tap): C[Co, positions] = W[Co, K] . im2col(x)[K, positions]
// at split_gemm.cuh's numerics (each fp32 activation enters as bf16 hi + bf16 lo, w * lo and w * hi
// accumulated in fp32, each K tile in a fresh accumulator added to the running one with one
// rounding). Block tile 128 Co x 128 positions x 64 depths, two warpgroups of 64 Co rows; the
// weights arrive by cp.async, the activations are gathered to registers while the previous tile's
// wgmma runs, then split and stored in the 128-byte-swizzled layout wgmma reads.
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/kernels/linear/gemm_tiles.cuh"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"
#include "backend/cuda/primitives/tensor_core.cuh"
#include "backend/cuda/primitives/wgmma.cuh"

namespace tf::cuda::gemm_wgmma {

constexpr int BM = 128, BN = 128, BK = 64, THREADS = 256;
constexpr int kTileElems = 128 * BK;                                         // one operand tile, bf16
constexpr size_t kSmemBytes = size_t(2) * 3 * kTileElems * 2 + 1024;          // 2 stages x (w, x hi, x lo)
constexpr int kValues = BN * BK / THREADS;                                    // gathered floats per thread

using streaming::swizzled;

// One 64-deep K tile of split products into p from zero, issued and committed, still running on
// return (the caller waits, then pins p with wgmma_fence_registers before reading it): per k16 A_hi B_lo, A_hi B_hi and, with a split
// A, A_lo B_hi (an exact A, the weights, passes a_lo unused). The order every wgmma split kernel
// shares; the arguments are descriptors of 128-byte-swizzled K-major tiles.
template <bool A_SPLIT>
__device__ __forceinline__ void split_k_tile(float (&p)[64], uint64_t a_hi, uint64_t a_lo, uint64_t b_hi,
                                             uint64_t b_lo) {
  wgmma_fence_registers(p);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
    // the fresh accumulator starts with the first product (d = a b), so p needs no zeroing
    wgmma_m64k16_bf16<128>(p, wgmma_descriptor_at_k16(a_hi, kk), wgmma_descriptor_at_k16(b_lo, kk), kk != 0);
    wgmma_m64k16_bf16<128>(p, wgmma_descriptor_at_k16(a_hi, kk), wgmma_descriptor_at_k16(b_hi, kk));
    if constexpr (A_SPLIT)
      wgmma_m64k16_bf16<128>(p, wgmma_descriptor_at_k16(a_lo, kk), wgmma_descriptor_at_k16(b_hi, kk));
  }
  wgmma_commit();
}

// One product a k16, a b, over a 64-deep K tile into p from zero (the sub-pixel convolution's one-product
// taps: the picture's hi against the summed weights' lo), committed and not waited for; N the wgmma's N.
template <int N>
__device__ __forceinline__ void single_k_tile(float (&p)[N / 2], uint64_t a, uint64_t b) {
  wgmma_fence_registers(p);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk)
    wgmma_m64k16_bf16<N>(p, wgmma_descriptor_at_k16(a, kk), wgmma_descriptor_at_k16(b, kk), kk != 0);
  wgmma_commit();
}

// This thread's 32 depths of one position: position t % 128, depths (t / 128) * 32 ..; with
// Ci % 64 == 0 they are 32 channels of one tap, one plane apart.
template <int STRIDE, bool UP>
__device__ __forceinline__ void gather(const gemm::ConvGatherTapMajor<STRIDE, UP>& s, int n0, int k0,
                                       float (&v)[kValues]) {
  gemm::gather_tap_major<kValues>(s, n0 + threadIdx.x % BN, k0 + (threadIdx.x / BN) * kValues, v);
}

// hi = bf16(v), lo = bf16(v - hi) of V depths from `depth` (a multiple of 8) of one tile row, into
// the swizzled hi and lo tiles.
template <int V>
__device__ __forceinline__ void store_split_at(const float (&v)[V], int row, int depth, __nv_bfloat16* hi,
                                               __nv_bfloat16* lo) {
#pragma unroll
  for (int c = 0; c < V / 8; ++c) {
    __align__(16) __nv_bfloat16 h[8], l[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      gemm::split_bf16(v[8 * c + i], h[i], l[i]);
    }
    *reinterpret_cast<uint4*>(hi + swizzled(row, depth / 8 + c)) = *reinterpret_cast<const uint4*>(h);
    *reinterpret_cast<uint4*>(lo + swizzled(row, depth / 8 + c)) = *reinterpret_cast<const uint4*>(l);
  }
}

// The gathered x values (row = position) into the x tiles.
__device__ __forceinline__ void store_split(const float (&v)[kValues], __nv_bfloat16* hi, __nv_bfloat16* lo) {
  store_split_at(v, threadIdx.x % BN, (threadIdx.x / BN) * kValues, hi, lo);
}

// 128 weight rows from m0, depths k0 .. k0 + 63 (rows past M read as zeros).
__device__ __forceinline__ void load_weights(__nv_bfloat16* dst, const gemm::Bf16KContig& a, int m0, int k0) {
#pragma unroll
  for (int i = 0; i < BM * 8 / THREADS; ++i) {
    const int c = threadIdx.x + i * THREADS, r = c >> 3, ch = c & 7;
    const bool in = m0 + r < a.rows;
    const __nv_bfloat16* src = a.p + (in ? int64_t(m0 + r) * a.K + k0 + 8 * ch : 0);
    cp_async_16_zfill(dst + swizzled(r, ch), src, in ? 16 : 0);
  }
}

// The block's 128 x 128 output tile from its warpgroups' accumulators: acc[4 j + q] of thread t
// is row 64 wg + 16 (t % 128 / 32) + (t % 32) / 4 (+8 for q >= 2), column 8 j + 2 (t % 4) (+1).
__device__ __forceinline__ void store_output(const gemm::Epilogue& e, int m0, int n0, const float (&acc)[64]) {
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const bool vec2 = gemm::pairs_vectorised(e);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int m = m0 + 64 * wg + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
    if (m >= e.M) continue;
    const float bias = e.bias ? __bfloat162float(e.bias[m]) : 0.f;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
      gemm::store_pair(e, vec2, m, n0 + 8 * j + 2 * (t % 4), bias, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
  }
}

template <int STRIDE, bool UP>
__global__ void __launch_bounds__(THREADS, 1)
    conv_wgmma_kernel(gemm::Bf16KContig a, gemm::ConvGatherTapMajor<STRIDE, UP> b, gemm::Epilogue e) {
  extern __shared__ unsigned char smem_raw[];
  auto* smem = reinterpret_cast<__nv_bfloat16*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  auto tile = [&](int stage, int which) { return smem + (stage * 3 + which) * kTileElems; };  // w, x hi, x lo
  const int m_tiles = (e.M + BM - 1) / BM;
  const int m0 = int(blockIdx.x % m_tiles) * BM, n0 = int(blockIdx.x / m_tiles) * BN;
  const int KT = b.K / BK;
  const int wg = threadIdx.x / 128;

  float acc[64], part[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f;
  float v[kValues];
  load_weights(tile(0, 0), a, m0, 0);
  cp_async_commit();
  gather(b, n0, 0, v);
  store_split(v, tile(0, 1), tile(0, 2));
  cp_async_wait<0>();
  fence_shared_for_async_proxy();
  __syncthreads();

  for (int kt = 0; kt < KT; ++kt) {
    const int s = kt & 1;
    const uint64_t wd = wgmma_descriptor(tile(s, 0) + 64 * wg * BK);
    split_k_tile<false>(part, wd, wd, wgmma_descriptor(tile(s, 1)), wgmma_descriptor(tile(s, 2)));
    if (kt + 1 < KT) {  // the next tile's loads run under this tile's MMAs
      load_weights(tile(s ^ 1, 0), a, m0, (kt + 1) * BK);
      cp_async_commit();
      gather(b, n0, (kt + 1) * BK, v);
    }
    wgmma_wait_all();
    wgmma_fence_registers(part);
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = __fadd_rn(acc[i], part[i]);
    if (kt + 1 < KT) {
      store_split(v, tile(s ^ 1, 1), tile(s ^ 1, 2));
      cp_async_wait<0>();
      fence_shared_for_async_proxy();
    }
    __syncthreads();
  }

  store_output(e, m0, n0, acc);
}

// Both operands fp32 (the attention's two products), each split into bf16 hi and lo:
// C = alpha * (A_hi B_lo + A_hi B_hi + A_lo B_hi) per K tile in a fresh accumulator, as split_gemm.cuh.
// Each 64-deep K tile is staged as split_gemm's two 32-deep halves; the next tile's first half is
// loaded under this tile's MMAs, its second half after them.
constexpr size_t kSmemBytesF32 = size_t(2) * 4 * kTileElems * 2 + 1024;  // 2 stages x (A hi, A lo, B hi, B lo)

template <class ASrc, class BSrc>
__global__ void __launch_bounds__(THREADS, 1) split_wgmma_f32_kernel(ASrc a, BSrc b, gemm::Epilogue e) {
  extern __shared__ unsigned char smem_raw[];
  auto* smem = reinterpret_cast<__nv_bfloat16*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  auto tile = [&](int stage, int which) { return smem + (stage * 4 + which) * kTileElems; };  // A hi, A lo, B hi, B lo
  const int m_tiles = (e.M + BM - 1) / BM;
  const int m0 = int(blockIdx.x % m_tiles) * BM, n0 = int(blockIdx.x / m_tiles) * BN;
  const int KT = (b.K + BK - 1) / BK;
  const int wg = threadIdx.x / 128;

  gemm::StageF<gemm::kStageValues<BM>> sa, sb;  // one 32-deep half of each operand
  auto load_half = [&](int k0, int h) {
    gemm::load_tile<BM>(a, m0, k0 + 32 * h, sa);
    gemm::load_tile<BN>(b, n0, k0 + 32 * h, sb);
  };
  auto store_half = [&](int st, int h) {
    store_split_at(sa.v, gemm::stage_row<BM>(a), 32 * h + gemm::stage_col<BM>(a), tile(st, 0), tile(st, 1));
    store_split_at(sb.v, gemm::stage_row<BN>(b), 32 * h + gemm::stage_col<BN>(b), tile(st, 2), tile(st, 3));
  };
  float acc[64], part[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f;
  for (int h = 0; h < 2; ++h) {
    load_half(0, h);
    store_half(0, h);
  }
  fence_shared_for_async_proxy();
  __syncthreads();

  for (int kt = 0; kt < KT; ++kt) {
    const int s = kt & 1;
    split_k_tile<true>(part, wgmma_descriptor(tile(s, 0) + 64 * wg * BK), wgmma_descriptor(tile(s, 1) + 64 * wg * BK),
                       wgmma_descriptor(tile(s, 2)), wgmma_descriptor(tile(s, 3)));
    if (kt + 1 < KT) load_half((kt + 1) * BK, 0);
    wgmma_wait_all();
    wgmma_fence_registers(part);
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = __fadd_rn(acc[i], part[i]);
    if (kt + 1 < KT) {
      store_half(s ^ 1, 0);
      load_half((kt + 1) * BK, 1);
      store_half(s ^ 1, 1);
      fence_shared_for_async_proxy();
    }
    __syncthreads();
  }

  store_output(e, m0, n0, acc);
}

}  // namespace tf::cuda::gemm_wgmma
