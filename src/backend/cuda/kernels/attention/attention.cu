// Full attention on CUDA: partial rope and causal grouped-query attention at torch eager's bf16
// rounding points. Attention runs in two passes over the keys: the first finds each row's softmax
// max and sum, the second forms p = bf16(exp(s - m) / sum) (times 1 / sum on wgmma) and accumulates
// p V in key order (on wgmma, mma.sync or the CUDA cores, by head dim).
#include <cmath>
#include <string>

#include "backend/cuda/kernels/attention/attention_mma.cuh"
#include "backend/cuda/kernels/attention/attention_wgmma.cuh"
#include "backend/cuda/runtime/check.h"
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/runtime/tensor_map.h"
#include "backend/attention/attention.h"
#include "backend/rope/rope.h"
#include "backend/variants.h"

namespace tf::cuda {

namespace {

// One thread per (token, head, i < half) rotates the pair (i, i + half), so y may alias x.
__global__ void rope_partial_kernel(const uint16_t* x, const uint16_t* cos, const uint16_t* sin, SeqTable seqs,
                                    uint16_t* y, int64_t T, int heads, int hd, int half) {
  int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (idx >= T * heads * half) return;
  const int i = static_cast<int>(idx % half);
  const int64_t th = idx / half, t = th / heads;
  const int64_t pos = t - seqs.offsets[seq_of(seqs, static_cast<int>(t))];
  const float c = ld_bf16(cos, pos * half + i), s = ld_bf16(sin, pos * half + i);
  const uint16_t* xr = x + th * hd;
  uint16_t* yr = y + th * hd;
  const float lo = ld_bf16(xr, i), hi = ld_bf16(xr, i + half);
  yr[i] = st_bf16(round_bf16(lo * c) + round_bf16(-hi * s));
  yr[i + half] = st_bf16(round_bf16(hi * c) + round_bf16(lo * s));
}

__global__ void copy_tail_kernel(const uint16_t* x, uint16_t* y, int64_t rows, int hd, int from) {
  int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int w = hd - from;
  if (idx >= rows * w) return;
  int64_t r = idx / w;
  int c = from + static_cast<int>(idx % w);
  y[r * hd + c] = x[r * hd + c];
}

constexpr int kRows = 16;                   // query rows per block
constexpr int kKeys = 32;                   // keys per tile
constexpr int kThreads = 128;               // 8 threads per query row
constexpr int kLanesPerRow = kThreads / kRows;

struct Smem {
  float* q;  // [kRows][d + 1]
  float* kv; // [kKeys][d + 1]  (keys, then values)
  float* p;  // [kRows][kKeys]
};

// Group of the 8 lanes serving one query row (consecutive lanes).
__device__ __forceinline__ float row_max(float v) {
  for (int o = 1; o < kLanesPerRow; o *= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// s = bf16(bf16(q . k) * scale) for this thread's keys c = lane + 8u of the tile at `j0`; -inf where masked.
__device__ __forceinline__ void tile_scores(const Smem& sm, int d, int r, int lane, int j0, int jmax, float scale,
                                            float* s) {
  const float* qr = sm.q + r * (d + 1);
#pragma unroll
  for (int u = 0; u < kKeys / kLanesPerRow; ++u) {
    const int c = lane + kLanesPerRow * u;
    const float* kr = sm.kv + c * (d + 1);
    float dot = 0.0f;
    for (int i = 0; i < d; ++i) dot = dot + qr[i] * kr[i];
    s[u] = (j0 + c <= jmax) ? round_bf16(round_bf16(dot) * scale) : -INFINITY;
  }
}

__device__ __forceinline__ void load_rows(float* dst, const uint16_t* src, int64_t first, int count, int64_t limit,
                                          int64_t stride, int d) {
  for (int e = threadIdx.x; e < count * d; e += blockDim.x) {
    const int r = e / d, i = e % d;
    dst[r * (d + 1) + i] = (first + r < limit) ? ld_bf16(src, (first + r) * stride + i) : 0.0f;
  }
}

// grid: (query tiles of the longest sequence, query heads, sequences)
__global__ void attention_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v, float scale, SeqTable seqs,
                                 uint16_t* o, int Hq, int Hkv, int d) {
  extern __shared__ float smem[];
  Smem sm{smem, smem + kRows * (d + 1), smem + (kRows + kKeys) * (d + 1)};
  const int seq = blockIdx.z, h = blockIdx.y, hk = h / (Hq / Hkv);
  const int64_t start = seqs.offsets[seq], end = seqs.offsets[seq + 1];
  const int64_t row0 = start + int64_t(blockIdx.x) * kRows;
  if (row0 >= end) return;
  const int r = threadIdx.x / kLanesPerRow, lane = threadIdx.x % kLanesPerRow;
  const int64_t t = row0 + r;             // this thread's query token
  const bool live = t < end;
  const int jmax = static_cast<int>((live ? t : row0) - start);  // causal: keys 0..jmax of the sequence
  const int64_t last_row = (row0 + kRows < end ? row0 + kRows : end) - 1;
  const int n_keys = static_cast<int>(last_row - start + 1);

  load_rows(sm.q, q + int64_t(h) * d, row0, kRows, end, int64_t(Hq) * d, d);

  // pass 1: running max and sum of exp over this thread's keys, then merged across the row's lanes
  float m = -INFINITY, l = 0.0f;
  float s[kKeys / kLanesPerRow];
  for (int j0 = 0; j0 < n_keys; j0 += kKeys) {
    __syncthreads();
    load_rows(sm.kv, k + int64_t(hk) * d, start + j0, kKeys, start + n_keys, int64_t(Hkv) * d, d);
    __syncthreads();
    tile_scores(sm, d, r, lane, j0, jmax, scale, s);
#pragma unroll
    for (int u = 0; u < kKeys / kLanesPerRow; ++u) {
      if (s[u] == -INFINITY) continue;
      if (s[u] > m) {
        l = l * expf(m - s[u]) + 1.0f;
        m = s[u];
      } else {
        l = l + expf(s[u] - m);
      }
    }
  }
  const float row_m = row_max(m);
  l = (m == -INFINITY) ? 0.0f : l * expf(m - row_m);
  for (int o2 = 1; o2 < kLanesPerRow; o2 *= 2) l = l + __shfl_xor_sync(0xffffffffu, l, o2);

  // pass 2: p = bf16(exp(s - m) / l), o = sum_j p_j v_j in key order
  constexpr int kMaxDims = 256 / kLanesPerRow;
  float acc[kMaxDims];
#pragma unroll
  for (int u = 0; u < kMaxDims; ++u) acc[u] = 0.0f;
  for (int j0 = 0; j0 < n_keys; j0 += kKeys) {
    __syncthreads();
    load_rows(sm.kv, k + int64_t(hk) * d, start + j0, kKeys, start + n_keys, int64_t(Hkv) * d, d);
    __syncthreads();
    tile_scores(sm, d, r, lane, j0, jmax, scale, s);
#pragma unroll
    for (int u = 0; u < kKeys / kLanesPerRow; ++u)
      sm.p[r * kKeys + lane + kLanesPerRow * u] = (s[u] == -INFINITY) ? 0.0f : round_bf16(expf(s[u] - row_m) / l);
    __syncthreads();
    load_rows(sm.kv, v + int64_t(hk) * d, start + j0, kKeys, start + n_keys, int64_t(Hkv) * d, d);
    __syncthreads();
    const int keys_here = min(kKeys, n_keys - j0);
    for (int c = 0; c < keys_here; ++c) {
      const float pc = sm.p[r * kKeys + c];
      const float* vr = sm.kv + c * (d + 1);
#pragma unroll
      for (int u = 0; u < kMaxDims; ++u) {
        const int i = lane + kLanesPerRow * u;
        if (i < d) acc[u] = acc[u] + pc * vr[i];
      }
    }
  }
  if (!live) return;
  uint16_t* orow = o + (t * Hq + h) * d;
#pragma unroll
  for (int u = 0; u < kMaxDims; ++u) {
    const int i = lane + kLanesPerRow * u;
    if (i < d) orow[i] = st_bf16(acc[u]);
  }
}

}  // namespace

void rope_split_half(const Tensor& x, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& y) {
  int64_t T = x.dim(0);
  int heads = int(x.dim(1)), hd = int(x.dim(2)), half = int(cos.dim(1));
  if (T * heads == 0) return;
  SeqTable seqs = make_seq_table("rope", seq_offsets);
  const uint16_t* xp = static_cast<const uint16_t*>(x.data);
  uint16_t* yp = static_cast<uint16_t*>(y.data);
  if (half > 0) {
    int64_t n = T * heads * half;
    rope_partial_kernel<<<blocks_for(n, 256), 256, 0, stream()>>>(xp, static_cast<const uint16_t*>(cos.data),
                                                                  static_cast<const uint16_t*>(sin.data), seqs, yp, T,
                                                                  heads, hd, half);
    TF_CUDA_LAUNCH("rope_partial_kernel");
  }
  if (yp != xp && hd > 2 * half) {
    int64_t n = T * heads * (hd - 2 * half);
    copy_tail_kernel<<<blocks_for(n, 256), 256, 0, stream()>>>(xp, yp, T * heads, hd, 2 * half);
    TF_CUDA_LAUNCH("copy_tail_kernel");
  }
}

void attention_bf16_causal(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                          const SeqOffsets& seq_offsets, Tensor& o) {
  int Hq = int(q.dim(1)), d = int(q.dim(2)), Hkv = int(k.dim(1));
  if (q.dim(0) == 0 || Hq == 0 || d == 0) return;
  if (d > 256) fail("attention: the CUDA kernel holds head dims up to 256, got " + std::to_string(d));
  SeqTable seqs = make_seq_table("attention", seq_offsets);
  int64_t longest = 0;
  for (int s = 0; s < seqs.count; ++s) longest = std::max<int64_t>(longest, seqs.offsets[s + 1] - seqs.offsets[s]);
  if (longest == 0) return;
  const uint16_t* qp = static_cast<const uint16_t*>(q.data);
  const uint16_t* kp = static_cast<const uint16_t*>(k.data);
  const uint16_t* vp = static_cast<const uint16_t*>(v.data);
  uint16_t* op = static_cast<uint16_t*>(o.data);
  // wgmma for head dims 64, 128 and 256, mma.sync for the other tensor-core head dims, the scalar
  // kernel otherwise; TF_ATTENTION=mma keeps the wgmma dims on mma.sync (to compare the two)
  const bool wgmma = variant_is<Variant::attention>("auto");
  // both tensor-core kernels: 64 query rows and 128 threads a block, grid (query tiles, heads, sequences)
  static_assert(attention_wgmma::kRows == attention_mma::kRows && attention_wgmma::kThreads == attention_mma::kThreads);
  const dim3 tc_grid(static_cast<unsigned>((longest + attention_mma::kRows - 1) / attention_mma::kRows),
                     static_cast<unsigned>(Hq), static_cast<unsigned>(seqs.count));
  auto on_mma = [&](auto kernel, size_t smem) {
    TF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    kernel<<<tc_grid, attention_mma::kThreads, smem, stream()>>>(qp, kp, vp, scale, seqs, op, Hq, Hkv);
    TF_CUDA_LAUNCH("attention_mma::attention_kernel");
  };
  auto on_wgmma = [&](auto kernel, size_t smem) {
    TF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    // keys and values as {d, kv heads, tokens}, boxes of 64 columns x 1 head x 64 tokens
    const uint64_t dims[3] = {uint64_t(d), uint64_t(Hkv), uint64_t(k.dim(0))};
    const uint64_t strides[2] = {uint64_t(d) * 2, uint64_t(Hkv) * d * 2};
    const uint32_t box[3] = {64, 1, uint32_t(attention_wgmma::kKeys)}, ones[3] = {1, 1, 1};
    const CUtensorMap kmap = bf16_tensor_map("attention: keys", kp, 3, dims, strides, box, ones);
    const CUtensorMap vmap = bf16_tensor_map("attention: values", vp, 3, dims, strides, box, ones);
    kernel<<<tc_grid, attention_wgmma::kThreads, smem, stream()>>>(qp, kmap, vmap, scale, seqs, op, Hq, Hkv);
    TF_CUDA_LAUNCH("attention_wgmma::attention_kernel");
  };
  namespace wg = attention_wgmma;
  namespace mma = attention_mma;
  if (wgmma) switch (d) {
      case 64: return on_wgmma(wg::attention_kernel<64>, wg::smem_bytes<64>());
      case 128: return on_wgmma(wg::attention_kernel<128>, wg::smem_bytes<128>());
      case 256: return on_wgmma(wg::attention_kernel<256>, wg::smem_bytes<256>());
      default: break;
    }
  switch (d) {
    case 16: return on_mma(mma::attention_kernel<16>, mma::smem_bytes<16>());
    case 32: return on_mma(mma::attention_kernel<32>, mma::smem_bytes<32>());
    case 64: return on_mma(mma::attention_kernel<64>, mma::smem_bytes<64>());
    case 128: return on_mma(mma::attention_kernel<128>, mma::smem_bytes<128>());
    case 256: return on_mma(mma::attention_kernel<256>, mma::smem_bytes<256>());
    default: break;
  }
  size_t smem = sizeof(float) * (size_t(kRows + kKeys) * (d + 1) + kRows * kKeys);
  static bool raised = false;
  if (!raised) {
    TF_CUDA(cudaFuncSetAttribute(attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(sizeof(float) * ((kRows + kKeys) * 257 + kRows * kKeys))));
    raised = true;
  }
  dim3 grid(static_cast<unsigned>((longest + kRows - 1) / kRows), static_cast<unsigned>(Hq),
            static_cast<unsigned>(seqs.count));
  attention_kernel<<<grid, kThreads, smem, stream()>>>(qp, kp, vp, scale, seqs, op, Hq, Hkv, d);
  TF_CUDA_LAUNCH("attention_kernel");
}

}  // namespace tf::cuda
