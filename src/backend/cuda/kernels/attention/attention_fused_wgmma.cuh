#pragma once
// Bidirectional attention with a fused kernel's numerics (backend/attention/attention.h, numerics
// fused) on Hopper, FlashAttention-3's structure: one producer warpgroup whose thread 0 asks TMA
// for the query tile and a ring of key and value tiles, and two consumer warpgroups of 64 query rows
// each that run s = q k^T and o += p v on wgmma with the softmax in registers between, each
// overlapping a tile's softmax with the previous tile's p v and ping-ponging with the other. Per key tile
// of 128: s = fp32 sum * scale; the row's running max m, e = exp(s - m) (below 2^-126 flushed to zero),
// the running sum l and o rescaled by exp(m_old - m); e enters p v as bf16 (a fused kernel's one extra rounding); o / l is
// rounded once at the end. Key tiles start at the row's sequence start, so a sequence's bytes do
// not depend on what is packed beside it.
#include <cuda.h>

#include <cstdint>

#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/primitives/tma.cuh"
#include "backend/cuda/primitives/wgmma.cuh"

namespace tf::cuda::attention_fused {

constexpr int kRows = 128, kKeys = 128, kStages = 2;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);

// A [128][D] tile is D / 64 column blocks of [128][64] bf16, 128-byte rows, swizzled (TMA's layout).
template <int D>
constexpr int kTileElems = kRows * D;

template <int D>
constexpr size_t smem_bytes() {
  // the query tile, kStages key and value tiles, the barriers, alignment to the swizzle's 1024 bytes
  return sizeof(uint16_t) * size_t(kTileElems<D>) * (1 + 2 * kStages) + sizeof(uint64_t) * (1 + 4 * kStages) + 1024;
}

// 128 rows of head `head` from token `first` of a [tokens, heads, D] map (dims {D, heads, tokens},
// boxes {64, 1, 128}); rows past the tensor read as zeros.
template <int D>
__device__ __forceinline__ void tma_tile(uint16_t* dst, const CUtensorMap* map, uint64_t* bar, int head, int first) {
  mbarrier_arrive_expect_tx(bar, uint32_t(sizeof(uint16_t) * kTileElems<D>));
#pragma unroll
  for (int cb = 0; cb < D / 64; ++cb) tma_load_3d(dst + cb * (kRows * 64), map, bar, 64 * cb, head, first);
}

// The two consumer warpgroups meet here (named barrier 1; the producer never joins).
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, %0;\n" ::"n"(128 * kConsumers) : "memory"); }

// grid: (128-row query tiles of the longest sequence, heads, sequences)
template <int D>
__global__ void __launch_bounds__(kThreads, 1)
    attention_kernel(const __grid_constant__ CUtensorMap qmap, const __grid_constant__ CUtensorMap kmap,
                     const __grid_constant__ CUtensorMap vmap, float scale_log2, SeqTable seqs, uint16_t* o, int Hq,
                     int Hkv) {
  static_assert(D == 64 || D == 128, "head dims of one wgmma's width");
  extern __shared__ uint8_t raw[];
  uint16_t* qs = reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  auto ks = [&](int s) { return qs + (1 + s) * kTileElems<D>; };
  auto vs = [&](int s) { return qs + (1 + kStages + s) * kTileElems<D>; };
  uint64_t* bars = reinterpret_cast<uint64_t*>(qs + (1 + 2 * kStages) * kTileElems<D>);
  uint64_t* q_full = bars;
  uint64_t* k_full = bars + 1;                // [kStages]
  uint64_t* v_full = bars + 1 + kStages;      // [kStages]
  uint64_t* k_empty = bars + 1 + 2 * kStages;  // [kStages], every consumer thread arrives
  uint64_t* v_empty = bars + 1 + 3 * kStages;  // [kStages], likewise

  const int64_t start = seqs.offsets[blockIdx.z], end = seqs.offsets[blockIdx.z + 1];
  const int64_t row0 = start + int64_t(blockIdx.x) * kRows;
  if (row0 >= end) return;
  const int h = blockIdx.y, hk = h / (Hq / Hkv);
  const int n_keys = static_cast<int>(end - start), tiles = (n_keys + kKeys - 1) / kKeys;
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    mbarrier_init(q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&k_full[s], 1);
      mbarrier_init(&v_full[s], 1);
      mbarrier_init(&k_empty[s], 128 * kConsumers);
      mbarrier_init(&v_empty[s], 128 * kConsumers);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // the producer
    registers_decrease<24>();
    if (threadIdx.x != 0) return;
    tma_tile<D>(qs, &qmap, q_full, h, static_cast<int>(row0));
    for (int t = 0; t < tiles; ++t) {
      const int s = t % kStages;
      const int first = static_cast<int>(start) + t * kKeys;
      // a key tile is free once its scores are formed, a value tile once its p v is
      if (t >= kStages) mbarrier_wait(&k_empty[s], ((t / kStages) - 1) & 1);
      tma_tile<D>(ks(s), &kmap, &k_full[s], hk, first);
      if (t >= kStages) mbarrier_wait(&v_empty[s], ((t / kStages) - 1) & 1);
      tma_tile<D>(vs(s), &vmap, &v_full[s], hk, first);
    }
    return;
  }

  registers_increase<240>();
  const int c = wg - 1, lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  float oacc[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) oacc[i] = 0.0f;
  float sacc[kKeys / 2];
  uint32_t pa[kKeys / 16][4];  // the previous tile's p, wgmma's A operand
  const uint16_t* qc = qs + c * 64 * 64;  // this warpgroup's 64 rows in every column block

  auto issue_scores = [&](int s) {  // sacc = q k^T of the key tile in stage s
    wgmma_fence_registers(sacc);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const uint64_t a = wgmma_descriptor_at_k16(wgmma_descriptor(qc + (kk / 4) * kRows * 64), kk % 4);
      const uint64_t b = wgmma_descriptor_at_k16(wgmma_descriptor(ks(s) + (kk / 4) * kRows * 64), kk % 4);
      wgmma_m64k16_bf16<kKeys>(sacc, a, b, kk != 0);
    }
    wgmma_commit();
  };
  auto issue_values = [&](int s) {  // oacc += p v of the value tile in stage s
    wgmma_fence_registers(oacc);
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk)
      wgmma_m64k16_bf16_reg_a<D>(oacc, pa[kk], wgmma_descriptor_mn_major(vs(s) + kk * 16 * 64, kRows * 64 * 2));
    wgmma_commit();
  };
  // The softmax of tile t's scores: keys past the sequence -inf (only the last tile has any), the
  // running max, e = exp2 of the scores in log2 units less it, the running sum; alpha[r] rescales what
  // o held before this tile.
  auto softmax = [&](int t, float (&alpha)[2]) {
    const int valid = n_keys - t * kKeys;
    if (valid >= kKeys) {
#pragma unroll
      for (int i = 0; i < kKeys / 2; ++i) sacc[i] = sacc[i] * scale_log2;
    } else {
#pragma unroll
      for (int i = 0; i < kKeys / 2; ++i) {
        const int j = (i / 4) * 8 + (lane % 4) * 2 + (i & 1);
        sacc[i] = j < valid ? sacc[i] * scale_log2 : -INFINITY;
      }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mt = m[r];
#pragma unroll
      for (int j = 0; j < kKeys / 8; ++j) mt = fmaxf(mt, fmaxf(sacc[4 * j + 2 * r], sacc[4 * j + 2 * r + 1]));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 2));
      alpha[r] = exp2_flush(m[r] - mt);  // m[r] = -inf on the first tile: 0
      m[r] = mt;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kKeys / 8; ++j) {
        const float e0 = exp2_flush(sacc[4 * j + 2 * r] - mt), e1 = exp2_flush(sacc[4 * j + 2 * r + 1] - mt);
        sum = sum + e0 + e1;
        sacc[4 * j + 2 * r] = e0;
        sacc[4 * j + 2 * r + 1] = e1;
      }
      l[r] = l[r] * alpha[r] + sum;
    }
  };
  auto rescale = [&](const float (&alpha)[2]) {
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        oacc[4 * j + 2 * r] *= alpha[r];
        oacc[4 * j + 2 * r + 1] *= alpha[r];
      }
  };
  auto to_operand = [&] {  // e as bf16 pairs in wgmma's A layout, 16 keys a step
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk)
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int r = 0; r < 2; ++r)
          pa[kk][half * 2 + r] = pack_bf16(sacc[(2 * kk + half) * 4 + r * 2], sacc[(2 * kk + half) * 4 + r * 2 + 1]);
  };
  // Ping-pong: the two warpgroups take turns issuing their products (named barriers 2 and 3), so one's
  // softmax runs while the other's products hold the tensor cores. Warpgroup 1 lets 0 go first and
  // skips its last hand-back, so every barrier is met as often as it is waited on.
  const int phases = tiles + 1;
  auto my_turn = [&] { asm volatile("bar.sync %0, %1;\n" ::"r"(2 + c), "n"(128 * kConsumers) : "memory"); };
  auto hand_over = [&](int phase) {
    if (c == 1 && phase == phases - 1) return;
    asm volatile("bar.arrive %0, %1;\n" ::"r"(3 - c), "n"(128 * kConsumers) : "memory");
  };
  if (c == 1) asm volatile("bar.arrive 2, %0;\n" ::"n"(128 * kConsumers) : "memory");

  mbarrier_wait(q_full, 0);
  mbarrier_wait(&k_full[0], 0);
  my_turn();
  wgmma_fence();
  issue_scores(0);
  hand_over(0);
  wgmma_wait<0>();
  wgmma_fence_registers(sacc);
  mbarrier_arrive(&k_empty[0]);
  float alpha[2];
  softmax(0, alpha);
  to_operand();
  // tile t's scores are on the tensor cores while tile t - 1's p v waits behind them; the softmax of
  // t runs as p v finishes, then o is rescaled and t's p takes the operand registers
  for (int t = 1; t < tiles; ++t) {
    const int s = t % kStages, sp = (t - 1) % kStages;
    mbarrier_wait(&k_full[s], (t / kStages) & 1);
    mbarrier_wait(&v_full[sp], ((t - 1) / kStages) & 1);
    my_turn();
    wgmma_fence();
    issue_scores(s);
    issue_values(sp);
    hand_over(t);
    wgmma_wait<1>();
    wgmma_fence_registers(sacc);
    mbarrier_arrive(&k_empty[s]);
    softmax(t, alpha);
    wgmma_wait<0>();
    wgmma_fence_registers(oacc);
    mbarrier_arrive(&v_empty[sp]);
    rescale(alpha);
    to_operand();
  }
  const int last = (tiles - 1) % kStages, valid = n_keys - (tiles - 1) * kKeys;
  mbarrier_wait(&v_full[last], ((tiles - 1) / kStages) & 1);
  if (valid < kKeys) {  // value rows past the sequence (the next one's, maybe not finite) must add nothing
    consumers_sync();
    constexpr int kChunks = D / 8;
    for (int e = threadIdx.x - 128; e < (kKeys - valid) * kChunks; e += 128 * kConsumers) {
      const int row = valid + e / kChunks, ch = e % kChunks;
      *reinterpret_cast<uint4*>(vs(last) + (ch / 8) * (kRows * 64) + row * 64 + (ch % 8) * 8) = make_uint4(0, 0, 0, 0);
    }
    fence_shared_for_async_proxy();
    consumers_sync();
  }
  my_turn();
  wgmma_fence();
  issue_values(last);
  hand_over(phases - 1);
  wgmma_wait<0>();
  wgmma_fence_registers(oacc);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] = l[r] + __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] = l[r] + __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
  const int64_t t0 = row0 + c * 64 + warp * 16 + lane / 4;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t t = t0 + 8 * r;
    if (t >= end) continue;
    uint16_t* orow = o + (t * Hq + h) * D + (lane % 4) * 2;
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<uint32_t*>(orow + j * 8) =
          pack_bf16(__fdiv_rn(oacc[4 * j + 2 * r], l[r]), __fdiv_rn(oacc[4 * j + 2 * r + 1], l[r]));
  }
}

}  // namespace tf::cuda::attention_fused
