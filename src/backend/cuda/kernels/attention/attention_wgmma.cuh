#pragma once
// Causal GQA attention on Hopper's wgmma at torch eager's rounding points, in the two passes of
// attention_mma.cuh (the roundings the contract models; l's sum order and 1 / l differ):
//   pass 1: s = bf16(bf16(q . k) * scale) per key tile; each row's max m and sum l of exp(s - m),
//           rescaled once a tile
//   pass 2: s again; p = bf16(exp(s - m) * (1 / l)) in registers as wgmma's A operand; o += p V
// One warpgroup serves 64 query rows of one head. q, keys and values sit in shared memory as [64][D]
// tiles of 64-wide column blocks with 128-byte rows, swizzled, so q k^T reads q and k K-major and
// p V reads the same value tile MN-major: nothing is transposed. Key and value tiles come by TMA
// (one thread asks, an mbarrier a buffer), the query tile by cp.async once.
#include <cuda.h>

#include <cstdint>

#include "backend/cuda/kernels/attention/attention_causal.cuh"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/primitives/tma.cuh"
#include "backend/cuda/primitives/wgmma.cuh"

namespace tf::cuda::attention_wgmma {

constexpr int kRows = 64, kKeys = 64, kThreads = 128;
static_assert(kRows == kKeys, "a key or value tile fills a [64][D] tile as the query tile does");

template <int D>
constexpr int kTileElems = kRows * D;  // one [64][D] tile: D / 64 column blocks of [64][64]

template <int D>
constexpr size_t smem_bytes() {
  // three tiles, two mbarriers, and alignment to the swizzle's 1024 bytes
  return sizeof(uint16_t) * 3 * size_t(kTileElems<D>) + 2 * sizeof(uint64_t) + 1024;
}

// Rows [first, first + 64) of head `head` of a [tokens, heads, D] tensor (map: dims {D, heads,
// tokens}, boxes {64, 1, 64}) into a swizzled tile, completing on `bar`; rows past the tensor read as
// zeros. Thread 0 asks; every thread waits on the barrier's phase before reading.
template <int D>
__device__ __forceinline__ void tma_tile(uint16_t* dst, const CUtensorMap* map, uint64_t* bar, int head, int64_t first) {
  if (threadIdx.x != 0) return;
  mbarrier_arrive_expect_tx(bar, uint32_t(sizeof(uint16_t) * kTileElems<D>));
#pragma unroll
  for (int cb = 0; cb < D / 64; ++cb) tma_load_3d(dst + cb * (kRows * 64), map, bar, 64 * cb, head, int(first));
}

// Zeros rows [from, 64) of a swizzled tile (a row keeps its 128 bytes in each column block), then
// publishes them to the tensor cores: past a sequence's last key a value row must add nothing, even
// when the row TMA brought (the next sequence's) is not finite.
template <int D>
__device__ __forceinline__ void zero_rows_from(uint16_t* tile, int from) {
  constexpr int kChunks = D / 8;  // 16-byte chunks a row
  for (int e = threadIdx.x; e < (kRows - from) * kChunks; e += kThreads) {
    const int r = from + e / kChunks, c = e % kChunks;
    *reinterpret_cast<uint4*>(tile + (c / 8) * (kRows * 64) + r * 64 + (c % 8) * 8) = make_uint4(0, 0, 0, 0);
  }
  fence_shared_for_async_proxy();
  __syncthreads();
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
__global__ void __launch_bounds__(kThreads, 2)
    attention_kernel(const uint16_t* q, const __grid_constant__ CUtensorMap kmap, const __grid_constant__ CUtensorMap vmap,
                     float scale, SeqTable seqs, uint16_t* o, int Hq, int Hkv) {
  static_assert(D == 64 || D == 128 || D == 256, "head dims of whole 128-wide halves, or 64");
  constexpr int kN = D < 128 ? D : 128;  // output dims per p V instruction
  constexpr int kHalves = D / kN;
  extern __shared__ uint8_t raw[];
  uint16_t* qs = reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  auto buf = [&](int i) { return qs + (1 + i) * kTileElems<D>; };
  uint64_t* bar = reinterpret_cast<uint64_t*>(qs + 3 * kTileElems<D>);  // bar[i] paces buf(i)
  uint32_t phases = 0;  // bit i: the parity bar[i] completes next
  auto wait_buf = [&](int i) {
    mbarrier_wait(&bar[i], (phases >> i) & 1);
    phases ^= 1u << i;
  };
  const int h = blockIdx.y, hk = h / (Hq / Hkv);
  attention_causal::QueryTile qt;
  if (!attention_causal::query_tile<kRows, kKeys>(seqs, qt)) return;
  const int64_t start = qt.start, end = qt.end, row0 = qt.row0;
  const int n_keys = qt.n_keys, tiles = qt.tiles;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // this thread's two rows, as positions in the sequence (causal limit)
  const int pr0 = static_cast<int>(row0 - start) + warp * 16 + lane / 4, pr1 = pr0 + 8;
  const int64_t kv_end = start + n_keys;
  if (threadIdx.x == 0) {
    mbarrier_init(&bar[0], 1);
    mbarrier_init(&bar[1], 1);
    mbarrier_init_fence();
  }
  __syncthreads();

  load_tile<D>(qs, q + int64_t(h) * D, row0, end, int64_t(Hq) * D);
  tma_tile<D>(buf(0), &kmap, &bar[0], hk, start);
  cp_async_wait<0>();
  publish_tiles();  // the query tile, for every warp

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
    if (t + 1 < tiles) tma_tile<D>(buf((t + 1) & 1), &kmap, &bar[(t + 1) & 1], hk, start + j0 + kKeys);
    wait_buf(t & 1);  // keys past kv_end are masked below whatever they hold
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
  tma_tile<D>(ks, &kmap, &bar[0], hk, start);
  tma_tile<D>(vs, &vmap, &bar[1], hk, start);
  for (int t = 0; t < tiles; ++t) {
    const int j0 = t * kKeys;
    wait_buf(0);  // keys of tile t (its values may still be in flight)
    tile_dots<D>(qs, ks, s);
    __syncthreads();
    if (t + 1 < tiles) tma_tile<D>(ks, &kmap, &bar[0], hk, start + j0 + kKeys);
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
    wait_buf(1);  // values of tile t (the next keys may still be in flight)
    if (start + j0 + kKeys > kv_end) zero_rows_from<D>(vs, static_cast<int>(kv_end - start - j0));
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
    if (t + 1 < tiles) tma_tile<D>(vs, &vmap, &bar[1], hk, start + j0 + kKeys);
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
