#pragma once
// Causal GQA attention on Hopper's wgmma at torch eager's rounding points, in the two passes of
// attention_mma.cuh (the roundings the contract models; l's sum order and 1 / l differ):
//   pass 1: s = bf16(bf16(q . k) * scale) per key tile; each row's max m and sum l of exp(s - m),
//           rescaled once a tile
//   pass 2: s again; p = bf16(exp(s - m) * (1 / l)) in registers as wgmma's A operand; o += p V
// One warpgroup serves 64 query rows of one head. q, keys and values sit in shared memory as [64][D]
// tiles of 64-wide column blocks with 128-byte rows, swizzled, so q k^T reads q and k K-major and
// p V reads the same value tile MN-major: nothing is transposed.
#include <cstdint>

#include "backend/cuda/attention_causal.cuh"
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/wgmma.cuh"

namespace tf::cuda::attention_wgmma {

constexpr int kRows = 64, kKeys = 64, kThreads = 128;

template <int D>
constexpr int kTileElems = kRows * D;  // one [64][D] tile: D / 64 column blocks of [64][64]

template <int D>
constexpr size_t smem_bytes() {
  return sizeof(uint16_t) * 3 * size_t(kTileElems<D>) + 1024;  // + alignment to the swizzle's 1024 bytes
}

// rows [first, first + 64) of a [tokens, heads, D] tensor's head into a swizzled tile: 16-byte chunk c of
// row r goes to column block c / 8 at chunk (c % 8) ^ (r % 8). Rows at or past `limit` are zeros.
// A thread always copies the same chunk c of rows r0, r0 + kStep, ..., so its addresses are one add apart.
template <int D>
__device__ __forceinline__ void load_tile(uint16_t* dst, const uint16_t* src, int64_t first, int64_t limit,
                                          int64_t row_stride) {
  constexpr int per_row = D / 8, kStep = kThreads / per_row;
  const int r0 = threadIdx.x / per_row, c = threadIdx.x % per_row;
  uint16_t* d = dst + (c / 8) * (kRows * 64) + r0 * 64;
  const uint16_t* g = src + (first + r0) * row_stride + c * 8;
  const int64_t left = limit - first - r0;  // rows of this thread's that are real: i * kStep < left
#pragma unroll
  for (int i = 0; i < kRows / kStep; ++i) {
    const bool real = i * kStep < left;
    cp_async_16_zfill(d + i * kStep * 64 + (((c % 8) ^ ((r0 + i * kStep) % 8)) * 8),
                      real ? g + i * kStep * row_stride : src + first * row_stride, real ? 16 : 0);
  }
  cp_async_commit();
}

// The warpgroup's 64 x 64 raw scores q . k (fp32): thread t holds rows 16 (t / 32) + (t % 32) / 4 (+8),
// keys 8 j + 2 (t % 4) (+1) in s[4 j ..].
template <int D>
__device__ __forceinline__ void tile_dots(const uint16_t* qs, const uint16_t* ks, float (&s)[32]) {
  wgmma_fence_registers(s);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const uint64_t a = wgmma_descriptor_at_k16(wgmma_descriptor(qs + (kk / 4) * kRows * 64), kk % 4);
    const uint64_t b = wgmma_descriptor_at_k16(wgmma_descriptor(ks + (kk / 4) * kRows * 64), kk % 4);
    wgmma_m64k16_bf16<64>(s, a, b, kk != 0);
  }
  wgmma_commit();
  wgmma_wait_all();
  wgmma_fence_registers(s);
}

// Stores this thread's cp.async writes for the tensor cores, then waits for the whole block.
__device__ __forceinline__ void publish_tiles() {
  fence_shared_for_async_proxy();
  __syncthreads();
}

// grid: (64-row query tiles of the longest sequence, query heads, sequences); the last tiles (the
// most keys) are started first.
template <int D>
__global__ void __launch_bounds__(kThreads, 2) attention_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                                                float scale, SeqTable seqs, uint16_t* o, int Hq,
                                                                int Hkv) {
  static_assert(D == 64 || D == 128 || D == 256, "head dims of whole 128-wide halves, or 64");
  constexpr int kN = D < 128 ? D : 128;  // output dims per p V instruction
  constexpr int kHalves = D / kN;
  extern __shared__ uint8_t raw[];
  uint16_t* qs = reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  auto buf = [&](int i) { return qs + (1 + i) * kTileElems<D>; };
  const int h = blockIdx.y, hk = h / (Hq / Hkv);
  attention_causal::QueryTile qt;
  if (!attention_causal::query_tile<kRows, kKeys>(seqs, qt)) return;
  const int64_t start = qt.start, end = qt.end, row0 = qt.row0;
  const int n_keys = qt.n_keys, tiles = qt.tiles;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // this thread's two rows, as positions in the sequence (causal limit)
  const int pr0 = static_cast<int>(row0 - start) + warp * 16 + lane / 4, pr1 = pr0 + 8;
  const uint16_t* kh = k + int64_t(hk) * D;
  const uint16_t* vh = v + int64_t(hk) * D;
  const int64_t kv_stride = int64_t(Hkv) * D, kv_end = start + n_keys;

  load_tile<D>(qs, q + int64_t(h) * D, row0, end, int64_t(Hq) * D);
  load_tile<D>(buf(0), kh, start, kv_end, kv_stride);

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  float s[32];
  const int first_row = static_cast<int>(row0 - start);  // tiles whose keys all precede it need no mask
  auto scores = [&](int j0) {  // s -> rounded, scaled, masked
#pragma unroll
    for (int i = 0; i < 32; ++i) s[i] = round_bf16(round_bf16(s[i]) * scale);
    if (j0 + kKeys - 1 <= first_row) return;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const int j = j0 + (i / 4) * 8 + (lane % 4) * 2 + (i & 1);
      if (j > ((i & 2) ? pr1 : pr0)) s[i] = -INFINITY;
    }
  };

  for (int t = 0; t < tiles; ++t) {
    const int j0 = t * kKeys;
    if (t + 1 < tiles) load_tile<D>(buf((t + 1) & 1), kh, start + j0 + kKeys, kv_end, kv_stride);
    else cp_async_commit();
    cp_async_wait<1>();
    publish_tiles();
    tile_dots<D>(qs, buf(t & 1), s);
    scores(j0);
    // this thread's running (m, l) per row, rescaled once a tile; masked scores add exp(-inf) = 0
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mt = m[r];
#pragma unroll
      for (int j = 0; j < 8; ++j) mt = fmaxf(mt, fmaxf(s[4 * j + 2 * r], s[4 * j + 2 * r + 1]));
      const float base = (mt == -INFINITY) ? 0.0f : mt;
      float sum = l[r] * expf(m[r] - base);
#pragma unroll
      for (int j = 0; j < 8; ++j) sum = sum + expf(s[4 * j + 2 * r] - base) + expf(s[4 * j + 2 * r + 1] - base);
      l[r] = sum;
      m[r] = mt;
    }
    __syncthreads();  // buf(t & 1) is refilled next step
  }
  attention_causal::merge_quad<true>(m, l);  // from here on l holds 1 / l: p = exp(s - m) * (1 / l)

  float oacc[kHalves][kN / 2];
#pragma unroll
  for (int hf = 0; hf < kHalves; ++hf)
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) oacc[hf][i] = 0.0f;
  uint16_t* ks = buf(0);
  uint16_t* vs = buf(1);
  load_tile<D>(ks, kh, start, kv_end, kv_stride);
  load_tile<D>(vs, vh, start, kv_end, kv_stride);
  for (int t = 0; t < tiles; ++t) {
    const int j0 = t * kKeys;
    cp_async_wait<1>();  // keys of tile t (its values may still be in flight)
    publish_tiles();
    tile_dots<D>(qs, ks, s);
    __syncthreads();
    if (t + 1 < tiles) load_tile<D>(ks, kh, start + j0 + kKeys, kv_end, kv_stride);
    else cp_async_commit();
    scores(j0);
    uint32_t pa[4][4];  // p as the A operand, 16 keys per step
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
          float p[2];
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const float x = s[(2 * kk + half) * 4 + rr * 2 + c];
            p[c] = expf(x - m[rr]) * l[rr];
          }
          pa[kk][half * 2 + rr] = pack_bf16(p[0], p[1]);
        }
    cp_async_wait<1>();  // values of tile t (the next keys may still be in flight)
    publish_tiles();
#pragma unroll
    for (int hf = 0; hf < kHalves; ++hf) wgmma_fence_registers(oacc[hf]);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int hf = 0; hf < kHalves; ++hf)
        wgmma_m64k16_bf16_reg_a<kN>(
            oacc[hf], pa[kk], wgmma_descriptor_mn_major(vs + (hf * kN / 64) * kRows * 64 + kk * 16 * 64, kRows * 64 * 2));
    wgmma_commit();
    wgmma_wait_all();
#pragma unroll
    for (int hf = 0; hf < kHalves; ++hf) wgmma_fence_registers(oacc[hf]);
    __syncthreads();
    if (t + 1 < tiles) load_tile<D>(vs, vh, start + j0 + kKeys, kv_end, kv_stride);
    else cp_async_commit();
  }
  const int64_t t0 = row0 + warp * 16 + lane / 4;
#pragma unroll
  for (int hf = 0; hf < kHalves; ++hf)
#pragma unroll
    for (int j = 0; j < kN / 8; ++j)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int64_t t = t0 + 8 * r;
        if (t >= end) continue;
        uint16_t* orow = o + (t * Hq + h) * D + hf * kN + j * 8 + (lane % 4) * 2;
        *reinterpret_cast<uint32_t*>(orow) = pack_bf16(oacc[hf][4 * j + 2 * r], oacc[hf][4 * j + 2 * r + 1]);
      }
}

}  // namespace tf::cuda::attention_wgmma
