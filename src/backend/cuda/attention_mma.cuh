#pragma once
// Causal GQA attention on the tensor cores (mma.sync m16n8k16, bf16 in, fp32 accumulate) at torch
// eager's rounding points, in two passes over the keys:
//   pass 1: s = bf16(bf16(q . k) * scale) per key tile; each row's max m and sum l of exp(s - m)
//   pass 2: s again; p = bf16(exp(s - m) / l) in registers as the A operand; o += p V, key tiles in order
// A block serves 64 query rows of one head (4 warps x 16 rows) and `kDv` of its output dims.
#include <cstdint>

#include "backend/cuda/device_math.cuh"
#include "backend/cuda/tensor_core.cuh"

namespace tf::cuda::attention_mma {

constexpr int kRows = 64, kKeys = 64, kWarps = 4, kThreads = 32 * kWarps;

__device__ __forceinline__ uint32_t ld32(const uint16_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

// rows [first, first + 64) of a [tokens, heads, D] tensor's head `h` into smem [64][D + 8]; zeros past `limit`
template <int D>
__device__ __forceinline__ void load_tile(uint16_t* dst, const uint16_t* src, int64_t first, int64_t limit,
                                          int64_t row_stride) {
  constexpr int per_row = D / 8;  // 16-byte pieces
  for (int e = threadIdx.x; e < kRows * per_row; e += kThreads) {
    const int r = e / per_row, c = (e % per_row) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (first + r < limit) v = *reinterpret_cast<const uint4*>(src + (first + r) * row_stride + c);
    *reinterpret_cast<uint4*>(dst + r * (D + 8) + c) = v;
  }
}

// dims [d0, d0 + kDv) of 64 value rows, transposed into smem [kDv][64 + 8]
template <int D, int kDv>
__device__ __forceinline__ void load_values_t(uint16_t* dst, const uint16_t* src, int64_t first, int64_t limit,
                                              int64_t row_stride, int d0) {
  constexpr int per_row = kDv / 8;
  for (int e = threadIdx.x; e < kKeys * per_row; e += kThreads) {
    const int r = e / per_row, c = (e % per_row) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (first + r < limit) v = *reinterpret_cast<const uint4*>(src + (first + r) * row_stride + d0 + c);
    const uint16_t* h = reinterpret_cast<const uint16_t*>(&v);
#pragma unroll
    for (int i = 0; i < 8; ++i) dst[(c + i) * (kKeys + 8) + r] = h[i];
  }
}

// The warp's 16 x 64 raw scores q . k (fp32) for the key tile in smem.
template <int D>
__device__ __forceinline__ void tile_dots(const uint16_t* qs, const uint16_t* ks, int warp, int lane, float (&acc)[8][4]) {
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] = 0.0f;
  const int ar = warp * 16 + lane / 4, ac = (lane % 4) * 2;
#pragma unroll 4
  for (int kk = 0; kk < D / 16; ++kk) {
    uint32_t a[4];
    a[0] = ld32(qs + ar * (D + 8) + kk * 16 + ac);
    a[1] = ld32(qs + (ar + 8) * (D + 8) + kk * 16 + ac);
    a[2] = ld32(qs + ar * (D + 8) + kk * 16 + 8 + ac);
    a[3] = ld32(qs + (ar + 8) * (D + 8) + kk * 16 + 8 + ac);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const uint16_t* kr = ks + (nt * 8 + lane / 4) * (D + 8) + kk * 16 + ac;
      mma_bf16(acc[nt], a, ld32(kr), ld32(kr + 8));
    }
  }
}

// grid: (64-row query tiles of the longest sequence, query heads, sequences * (D / kDv))
template <int D, int kDv>
__global__ void __launch_bounds__(kThreads) attention_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v,
                                                             float scale, SeqTable seqs, uint16_t* o, int Hq,
                                                             int Hkv) {
  extern __shared__ __align__(16) uint16_t sm[];
  uint16_t* qs = sm;                       // [64][D + 8]
  uint16_t* ks = sm + kRows * (D + 8);     // [64][D + 8] keys, then [kDv][72] values transposed
  constexpr int splits = D / kDv;
  const int seq = blockIdx.z / splits, d0 = (blockIdx.z % splits) * kDv;
  const int h = blockIdx.y, hk = h / (Hq / Hkv);
  const int64_t start = seqs.offsets[seq], end = seqs.offsets[seq + 1];
  const int64_t row0 = start + int64_t(blockIdx.x) * kRows;
  if (row0 >= end) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t last = (row0 + kRows < end ? row0 + kRows : end) - 1;
  const int n_keys = static_cast<int>(last - start + 1);
  // this thread's two rows, as positions in the sequence (causal limit)
  const int64_t pr0 = row0 - start + warp * 16 + lane / 4, pr1 = pr0 + 8;

  load_tile<D>(qs, q + int64_t(h) * D, row0, end, int64_t(Hq) * D);

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

  for (int j0 = 0; j0 < n_keys; j0 += kKeys) {
    __syncthreads();
    load_tile<D>(ks, k + int64_t(hk) * D, start + j0, start + n_keys, int64_t(Hkv) * D);
    __syncthreads();
    tile_dots<D>(qs, ks, warp, lane, acc);
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
  }
  // merge the quad's partial (m, l): a fixed butterfly, the same bits in all four lanes
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float rm = m[r];
    rm = fmaxf(rm, __shfl_xor_sync(0xffffffffu, rm, 1));
    rm = fmaxf(rm, __shfl_xor_sync(0xffffffffu, rm, 2));
    float rl = (m[r] == -INFINITY) ? 0.0f : l[r] * expf(m[r] - rm);
    rl = rl + __shfl_xor_sync(0xffffffffu, rl, 1);
    rl = rl + __shfl_xor_sync(0xffffffffu, rl, 2);
    m[r] = rm;
    l[r] = rl;
  }

  float oacc[kDv / 8][4];
#pragma unroll
  for (int nt = 0; nt < kDv / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) oacc[nt][e] = 0.0f;
  for (int j0 = 0; j0 < n_keys; j0 += kKeys) {
    __syncthreads();
    load_tile<D>(ks, k + int64_t(hk) * D, start + j0, start + n_keys, int64_t(Hkv) * D);
    __syncthreads();
    tile_dots<D>(qs, ks, warp, lane, acc);
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
    __syncthreads();
    load_values_t<D, kDv>(ks, v + int64_t(hk) * D, start + j0, start + n_keys, int64_t(Hkv) * D, d0);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int nt = 0; nt < kDv / 8; ++nt) {
        const uint16_t* vr = ks + (nt * 8 + lane / 4) * (kKeys + 8) + kk * 16 + (lane % 4) * 2;
        mma_bf16(oacc[nt], pa[kk], ld32(vr), ld32(vr + 8));
      }
  }
  const int64_t t0 = row0 + warp * 16 + lane / 4;
#pragma unroll
  for (int nt = 0; nt < kDv / 8; ++nt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t t = t0 + 8 * r;
      if (t >= end) continue;
      uint16_t* orow = o + (t * Hq + h) * D + d0 + nt * 8 + (lane % 4) * 2;
      *reinterpret_cast<uint32_t*>(orow) = pack_bf16(oacc[nt][2 * r], oacc[nt][2 * r + 1]);
    }
}

template <int D, int kDv>
constexpr size_t smem_bytes() {
  size_t kv = size_t(kRows) * (D + 8) > size_t(kDv) * (kKeys + 8) ? size_t(kRows) * (D + 8) : size_t(kDv) * (kKeys + 8);
  return sizeof(uint16_t) * (size_t(kRows) * (D + 8) + kv);
}

}  // namespace tf::cuda::attention_mma
