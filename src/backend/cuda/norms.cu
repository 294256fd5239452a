// RMSNorms on CUDA: zero-centred (optionally fused with the residual add ahead of it) and the
// DeltaNet's gated norm. One group of threads per row; each thread sums its strided elements in
// order, then a fixed butterfly combines the group, so every run gives the same bits.
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
template <int tpr>
__global__ void rms_norm_zero_centred_kernel(uint16_t* x, const uint16_t* delta, const void* w, bool w_f32,
                                             float eps, uint16_t* y, int64_t rows, int d) {
  __shared__ float scratch[kBlock / 32];
  const int rows_per_block = kBlock / tpr;
  int64_t row = blockIdx.x * int64_t(rows_per_block) + threadIdx.x / tpr;
  const int lane = threadIdx.x % tpr;
  const bool live = row < rows;
  uint16_t* xr = x + (live ? row : 0) * d;
  float ss = 0.0f;
  if (live) {
    for (int i = lane; i < d; i += tpr) {
      float v = ld_bf16(xr, i);
      if (delta) {
        v = round_bf16(v + ld_bf16(delta + row * d, i));
        xr[i] = st_bf16(v);
      }
      ss = ss + v * v;
    }
  }
  ss = row_sum<tpr>(ss, scratch);
  if (!live) return;
  const float r = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
  uint16_t* yr = y + row * d;
  for (int i = lane; i < d; i += tpr) {
    float v = ld_bf16(xr, i);
    yr[i] = st_bf16((v * r) * (1.0f + ld_weight(w, w_f32, i)));
  }
}

// n = bf16(x * r); t = bf16(w * n) for bf16 w (exact fp32 product for f32 w); y = bf16(t * silu(z)).
__global__ void rms_norm_gated_kernel(const uint16_t* x, const uint16_t* z, const void* w, bool w_f32, float eps,
                                      uint16_t* y, int64_t rows, int d) {
  int64_t row = blockIdx.x * int64_t(kBlock / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;  // whole warps leave together
  const uint16_t* xr = x + row * d;
  float ss = 0.0f;
  for (int i = lane; i < d; i += 32) {
    float v = ld_bf16(xr, i);
    ss = ss + v * v;
  }
  ss = group_sum<32>(ss);
  const float r = 1.0f / sqrtf(ss / static_cast<float>(d) + eps);
  for (int i = lane; i < d; i += 32) {
    float n = round_bf16(ld_bf16(xr, i) * r);
    float t = ld_weight(w, w_f32, i) * n;
    if (!w_f32) t = round_bf16(t);
    y[row * d + i] = st_bf16(t * silu32(ld_bf16(z, row * d + i)));
  }
}

void launch_zero_centred(uint16_t* x, const uint16_t* delta, const Tensor& w, float eps, uint16_t* y, int64_t rows,
                         int64_t d) {
  if (rows == 0) return;
  const bool f32 = w.dtype == DType::F32;
  if (d >= 1024) {
    rms_norm_zero_centred_kernel<kBlock><<<static_cast<unsigned>(rows), kBlock, 0, stream()>>>(
        x, delta, w.data, f32, eps, y, rows, static_cast<int>(d));
  } else {
    rms_norm_zero_centred_kernel<32><<<blocks_for(rows, kBlock / 32), kBlock, 0, stream()>>>(
        x, delta, w.data, f32, eps, y, rows, static_cast<int>(d));
  }
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
  rms_norm_gated_kernel<<<blocks_for(rows, kBlock / 32), kBlock, 0, stream()>>>(
      static_cast<const uint16_t*>(x.data), static_cast<const uint16_t*>(z.data), w.data, w.dtype == DType::F32, eps,
      static_cast<uint16_t*>(y.data), rows, static_cast<int>(d));
  TF_CUDA_LAUNCH("rms_norm_gated_kernel");
}

}  // namespace tf::cuda
