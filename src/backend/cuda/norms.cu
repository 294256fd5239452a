// RMSNorms on CUDA: zero-centred (optionally fused with the residual add ahead of it) and the
// DeltaNet's gated norm. One group of threads per row; each thread sums its strided elements in
// order, then a fixed butterfly combines the group, so every run gives the same bits.
#include <string>

#include "backend/cuda/check.h"
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/transformer_ops.h"

namespace tf::cuda {

namespace {

constexpr int kBlock = 256;

// Sum over a group of `tpr` threads (a warp, or the whole block); all threads get the result.
template <int tpr>
__device__ __forceinline__ float row_sum(float v, float* scratch) {
  if constexpr (tpr <= 32) {
    return group_sum<tpr>(v);
  } else {
    v = group_sum<32>(v);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < tpr / 32; ++w) s = s + scratch[w];
    __syncthreads();
    return s;
  }
}

// y = bf16((x * r) * (1 + w)), r = 1 / sqrt(sum(x^2) / d + eps); with `delta`, first h = bf16(h + delta).
// A thread's N strided elements are loaded at once and kept in registers (d <= N * tpr).
template <int tpr, int N>
__global__ void rms_norm_zero_centred_kernel(uint16_t* x, const uint16_t* delta, const void* w, bool w_f32,
                                             float eps, uint16_t* y, int64_t rows, int d) {
  __shared__ float scratch[kBlock / 32];
  const int rows_per_block = kBlock / tpr;
  int64_t row = blockIdx.x * int64_t(rows_per_block) + threadIdx.x / tpr;
  const int lane = threadIdx.x % tpr;
  const bool live = row < rows;
  uint16_t* xr = x + (live ? row : 0) * d;
  float v[N], wv[N];  // the weights are read before any store, which the compiler may not move loads past
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const int i = lane + n * tpr;
    v[n] = live && i < d ? ld_bf16(xr, i) : 0.0f;
    wv[n] = live && i < d ? ld_weight(w, w_f32, i) : 0.0f;
  }
  if (delta && live) {
    float e[N];
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const int i = lane + n * tpr;
      e[n] = i < d ? ld_bf16(delta + row * d, i) : 0.0f;
    }
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const int i = lane + n * tpr;
      v[n] = round_bf16(v[n] + e[n]);
      if (i < d) xr[i] = st_bf16(v[n]);
    }
  }
  float ss = 0.0f;
#pragma unroll
  for (int n = 0; n < N; ++n)
    if (lane + n * tpr < d) ss = ss + v[n] * v[n];
  ss = row_sum<tpr>(ss, scratch);
  if (!live) return;
  const float r = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
  uint16_t* yr = y + row * d;
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const int i = lane + n * tpr;
    if (i < d) yr[i] = st_bf16((v[n] * r) * (1.0f + wv[n]));
  }
}

// n = bf16(x * r); t = bf16(w * n) for bf16 w (exact fp32 product for f32 w); y = bf16(t * silu(z)).
// One warp per row; a lane's N strided elements of x, z and w are loaded at once (d <= 32 N).
template <int N>
__global__ void rms_norm_gated_kernel(const uint16_t* x, const uint16_t* z, const void* w, bool w_f32, float eps,
                                      uint16_t* y, int64_t rows, int d) {
  int64_t row = blockIdx.x * int64_t(kBlock / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;  // whole warps leave together
  const uint16_t* xr = x + row * d;
  float xv[N], zv[N], wv[N];
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const int i = lane + 32 * n;
    const bool in = i < d;
    xv[n] = in ? ld_bf16(xr, i) : 0.0f;
    zv[n] = in ? ld_bf16(z, row * d + i) : 0.0f;
    wv[n] = in ? ld_weight(w, w_f32, i) : 0.0f;
  }
  float ss = 0.0f;
#pragma unroll
  for (int n = 0; n < N; ++n)
    if (lane + 32 * n < d) ss = ss + xv[n] * xv[n];
  ss = group_sum<32>(ss);
  const float r = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const int i = lane + 32 * n;
    if (i >= d) continue;
    float nv = round_bf16(xv[n] * r);
    float t = wv[n] * nv;
    if (!w_f32) t = round_bf16(t);
    y[row * d + i] = st_bf16(t * silu32(zv[n]));
  }
}

// The widest row the register-resident kernel holds.
constexpr int64_t kMaxRow = 32 * kBlock;

template <int tpr>
void launch_zero_centred_rows(uint16_t* x, const uint16_t* delta, const void* w, bool f32, float eps, uint16_t* y,
                              int64_t rows, int d) {
  const unsigned blocks = static_cast<unsigned>(blocks_for(rows, kBlock / tpr));
  const int per = (d + tpr - 1) / tpr;
  auto go = [&](auto kernel) { kernel<<<blocks, kBlock, 0, stream()>>>(x, delta, w, f32, eps, y, rows, d); };
  if (per <= 1) go(rms_norm_zero_centred_kernel<tpr, 1>);
  else if (per <= 2) go(rms_norm_zero_centred_kernel<tpr, 2>);
  else if (per <= 4) go(rms_norm_zero_centred_kernel<tpr, 4>);
  else if (per <= 8) go(rms_norm_zero_centred_kernel<tpr, 8>);
  else if (per <= 16) go(rms_norm_zero_centred_kernel<tpr, 16>);
  else go(rms_norm_zero_centred_kernel<tpr, 32>);
}

void launch_zero_centred(uint16_t* x, const uint16_t* delta, const Tensor& w, float eps, uint16_t* y, int64_t rows,
                         int64_t d) {
  if (rows == 0) return;
  if (d > kMaxRow)
    fail("rms_norm_zero_centred: the CUDA kernel holds rows of up to " + std::to_string(kMaxRow) + " elements, got " +
         std::to_string(d));
  const bool f32 = w.dtype == DType::F32;
  if (d >= 1024) launch_zero_centred_rows<kBlock>(x, delta, w.data, f32, eps, y, rows, static_cast<int>(d));
  else launch_zero_centred_rows<32>(x, delta, w.data, f32, eps, y, rows, static_cast<int>(d));
  TF_CUDA_LAUNCH("rms_norm_zero_centred_kernel");
}

}  // namespace

void rms_norm_zero_centred(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  // x is only read when no delta is given
  launch_zero_centred(static_cast<uint16_t*>(x.data), nullptr, w, eps, static_cast<uint16_t*>(y.data), x.dim(0),
                      x.dim(1));
}

void residual_add_rms_norm_zero_centred(Tensor& h, const Tensor& d, const Tensor& w, float eps, Tensor& y) {
  launch_zero_centred(static_cast<uint16_t*>(h.data), static_cast<const uint16_t*>(d.data), w, eps,
                      static_cast<uint16_t*>(y.data), h.dim(0), h.dim(1));
}

void rms_norm_gated(const Tensor& x, const Tensor& z, const Tensor& w, float eps, Tensor& y) {
  int64_t rows = x.dim(0), d = x.dim(1);
  if (rows == 0) return;
  if (d > 32 * 32) fail("rms_norm_gated: the CUDA kernel holds rows of up to 1024 elements, got " + std::to_string(d));
  const unsigned blocks = blocks_for(rows, kBlock / 32);
  auto go = [&](auto kernel) {
    kernel<<<blocks, kBlock, 0, stream()>>>(static_cast<const uint16_t*>(x.data), static_cast<const uint16_t*>(z.data),
                                            w.data, w.dtype == DType::F32, eps, static_cast<uint16_t*>(y.data), rows,
                                            static_cast<int>(d));
  };
  const int64_t per = (d + 31) / 32;
  if (per <= 1) go(rms_norm_gated_kernel<1>);
  else if (per <= 2) go(rms_norm_gated_kernel<2>);
  else if (per <= 4) go(rms_norm_gated_kernel<4>);
  else if (per <= 8) go(rms_norm_gated_kernel<8>);
  else if (per <= 16) go(rms_norm_gated_kernel<16>);
  else go(rms_norm_gated_kernel<32>);
  TF_CUDA_LAUNCH("rms_norm_gated_kernel");
}

}  // namespace tf::cuda
