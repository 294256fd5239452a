#pragma once
// Causal GQA attention on the tensor cores (mma.sync m16n8k16, bf16 in, fp32 accumulate) at torch
// eager's rounding points, in two passes over the keys:
//   pass 1: s = bf16(bf16(q . k) * scale) per key tile; each row's max m and sum l of exp(s - m)
//   pass 2: s again; p = bf16(exp(s - m) / l) in registers as the A operand; o += p V, key tiles in order
// A block serves 64 query rows of one head (4 warps x 16 rows) and all D output dims. Shared memory
// holds q and two key-tile buffers, filled by cp.async one tile ahead: pass 1 alternates keys between
// them; pass 2 keeps keys in one and values in the other, each refilled while the other is used.
#include <cstdint>

#include "backend/cuda/kernels/attention/attention_causal.cuh"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/primitives/tensor_core.cuh"

namespace tf::cuda::attention_mma {

constexpr int kRows = 64, kKeys = 64, kWarps = 4, kThreads = 32 * kWarps;

// Eight 8x8 bf16 matrices' worth of a B operand, transposed on the way (rows in memory are k).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}

// rows [first, first + 64) of a [tokens, heads, D] tensor's head into smem [64][D + 8] by cp.async;
// rows at or past `limit` are zeros. One commit group.
template <int D>
__device__ __forceinline__ void load_tile_async(uint16_t* dst, const uint16_t* src, int64_t first, int64_t limit,
                                                int64_t row_stride) {
  constexpr int per_row = D / 8;  // 16-byte pieces
  for (int e = threadIdx.x; e < kRows * per_row; e += kThreads) {
    const int r = e / per_row, c = (e % per_row) * 8;
    const bool real = first + r < limit;
    cp_async_16_zfill(dst + r * (D + 8) + c, src + (real ? first + r : first) * row_stride + c, real ? 16 : 0);
  }
  cp_async_commit();
}

// The warp's 16 x 64 raw scores q . k (fp32) for the key tile in smem.
template <int D>
__device__ __forceinline__ void tile_dots(const uint16_t* qs, const uint16_t* ks, int warp, int lane, float (&acc)[8][4]) {
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] = 0.0f;
  // A: lane gives row lane % 16 at column half lane / 16; B: keys nt * 8 + lane % 8, column quarter lane / 8
  const uint16_t* qa = qs + (warp * 16 + lane % 16) * (D + 8) + (lane / 16) * 8;
  const uint16_t* kb = ks + (lane % 8 + (lane / 16) * 8) * (D + 8) + ((lane / 8) % 2) * 8;
#pragma unroll 4
  for (int kk = 0; kk < D / 16; ++kk) {
    uint32_t a[4];
    ldmatrix_x4(a, qa + kk * 16);
#pragma unroll
    for (int nt = 0; nt < 8; nt += 2) {
      uint32_t b[4];  // keys nt (b[0], b[1]) and nt + 1 (b[2], b[3])
      ldmatrix_x4(b, kb + nt * 8 * (D + 8) + kk * 16);
      mma_bf16(acc[nt], a, b[0], b[1]);
      mma_bf16(acc[nt + 1], a, b[2], b[3]);
    }
  }
}

// grid: (64-row query tiles of the longest sequence, query heads, sequences); the last tiles (the
// most keys) are started first.
template <int D>
__global__ void __launch_bounds__(kThreads, 2) attention_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                                                float scale, SeqTable seqs, uint16_t* o, int Hq,
                                                                int Hkv) {
  extern __shared__ __align__(16) uint16_t sm[];
  constexpr int kTile = kRows * (D + 8);
  uint16_t* qs = sm;  // [64][D + 8]; then two [64][D + 8] buffers: keys, and keys (pass 1) or values (pass 2)
  auto buf = [&](int i) { return sm + (1 + i) * kTile; };
  const int h = blockIdx.y, hk = h / (Hq / Hkv);
  attention_causal::QueryTile qt;
  if (!attention_causal::query_tile<kRows, kKeys>(seqs, qt)) return;
  const int64_t start = qt.start, end = qt.end, row0 = qt.row0;
  const int n_keys = qt.n_keys, tiles = qt.tiles;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // this thread's two rows, as positions in the sequence (causal limit)
  const int64_t pr0 = row0 - start + warp * 16 + lane / 4, pr1 = pr0 + 8;
  const uint16_t* kh = k + int64_t(hk) * D;
  const uint16_t* vh = v + int64_t(hk) * D;
  const int64_t kv_stride = int64_t(Hkv) * D, kv_end = start + n_keys;

  load_tile_async<D>(qs, q + int64_t(h) * D, row0, end, int64_t(Hq) * D);
  load_tile_async<D>(buf(0), kh, start, kv_end, kv_stride);

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  float acc[8][4];
  auto scores = [&](int j0) {  // acc -> s (rounded, scaled, masked)
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t j = j0 + nt * 8 + (lane % 4) * 2 + (e & 1);
        const int64_t pr = (e < 2) ? pr0 : pr1;
        acc[nt][e] = (j <= pr) ? round_bf16(round_bf16(acc[nt][e]) * scale) : -INFINITY;
      }
  };

  for (int t = 0; t < tiles; ++t) {
    const int j0 = t * kKeys;
    if (t + 1 < tiles) load_tile_async<D>(buf((t + 1) & 1), kh, start + j0 + kKeys, kv_end, kv_stride);
    else cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    tile_dots<D>(qs, buf(t & 1), warp, lane, acc);
    scores(j0);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = e >> 1;
        const float s = acc[nt][e];
        if (s == -INFINITY) continue;
        if (s > m[r]) {
          l[r] = l[r] * expf(m[r] - s) + 1.0f;
          m[r] = s;
        } else {
          l[r] = l[r] + expf(s - m[r]);
        }
      }
    __syncthreads();  // buf(t & 1) is refilled next step
  }
  attention_causal::merge_quad(m, l);

  float oacc[D / 8][4];
#pragma unroll
  for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) oacc[nt][e] = 0.0f;
  uint16_t* ks = buf(0);
  uint16_t* vs = buf(1);
  load_tile_async<D>(ks, kh, start, kv_end, kv_stride);
  load_tile_async<D>(vs, vh, start, kv_end, kv_stride);
  // B for p V: keys kk * 16 + (lane / 8 % 2) * 8 + lane % 8, dims nt * 8 + (lane / 16) * 8
  const uint16_t* vb = vs + (lane % 8 + ((lane / 8) % 2) * 8) * (D + 8) + (lane / 16) * 8;
  for (int t = 0; t < tiles; ++t) {
    const int j0 = t * kKeys;
    cp_async_wait<1>();  // keys of tile t (its values may still be in flight)
    __syncthreads();
    tile_dots<D>(qs, ks, warp, lane, acc);
    __syncthreads();
    if (t + 1 < tiles) load_tile_async<D>(ks, kh, start + j0 + kKeys, kv_end, kv_stride);
    else cp_async_commit();
    scores(j0);
    uint32_t pa[4][4];  // p as the A operand, 16 keys per step
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      float p[2][4];
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float s = acc[2 * kk + half][e];
          const int r = e >> 1;
          p[half][e] = (s == -INFINITY) ? 0.0f : expf(s - m[r]) / l[r];
        }
      pa[kk][0] = pack_bf16(p[0][0], p[0][1]);
      pa[kk][1] = pack_bf16(p[0][2], p[0][3]);
      pa[kk][2] = pack_bf16(p[1][0], p[1][1]);
      pa[kk][3] = pack_bf16(p[1][2], p[1][3]);
    }
    cp_async_wait<1>();  // values of tile t (the next keys may still be in flight)
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int nt = 0; nt < D / 8; nt += 2) {
        uint32_t b[4];  // dims nt (b[0], b[1]) and nt + 1 (b[2], b[3])
        ldmatrix_x4_trans(b, vb + kk * 16 * (D + 8) + nt * 8);
        mma_bf16(oacc[nt], pa[kk], b[0], b[1]);
        mma_bf16(oacc[nt + 1], pa[kk], b[2], b[3]);
      }
    __syncthreads();
    if (t + 1 < tiles) load_tile_async<D>(vs, vh, start + j0 + kKeys, kv_end, kv_stride);
    else cp_async_commit();
  }
  const int64_t t0 = row0 + warp * 16 + lane / 4;
#pragma unroll
  for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t t = t0 + 8 * r;
      if (t >= end) continue;
      uint16_t* orow = o + (t * Hq + h) * D + nt * 8 + (lane % 4) * 2;
      *reinterpret_cast<uint32_t*>(orow) = pack_bf16(oacc[nt][2 * r], oacc[nt][2 * r + 1]);
    }
}

template <int D>
constexpr size_t smem_bytes() {
  return sizeof(uint16_t) * 3 * size_t(kRows) * (D + 8);
}

}  // namespace tf::cuda::attention_mma
