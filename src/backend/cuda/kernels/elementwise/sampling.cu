// CUDA kernels of a sampling step's element-wise work (backend/cpu/sampling.cpp's ops): latents to
// token rows, and the guided Euler update in fp32 with every op rounded on its own (no contraction).
#include "backend/cuda/primitives/device_math.cuh"
#include "backend/cuda/runtime/check.h"
#include "backend/elementwise/guided_euler_step.h"
#include "backend/elementwise/transpose_to_bf16.h"

namespace tf::cuda {

namespace {

constexpr int kTile = 32;

// y[k, r] = bf16(x[r, k]) through a 32 x 32 tile: both sides read and written along rows.
__global__ void transpose_to_bf16_kernel(const float* __restrict__ x, uint16_t* __restrict__ y, int64_t R, int64_t K) {
  __shared__ float tile[kTile][kTile + 1];
  const int64_t r0 = int64_t(blockIdx.y) * kTile, k0 = int64_t(blockIdx.x) * kTile;
  for (int i = threadIdx.y; i < kTile; i += blockDim.y) {
    const int64_t r = r0 + i, k = k0 + threadIdx.x;
    if (r < R && k < K) tile[i][threadIdx.x] = x[r * K + k];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTile; i += blockDim.y) {
    const int64_t k = k0 + i, r = r0 + threadIdx.x;
    if (r < R && k < K) y[k * R + r] = st_bf16(tile[threadIdx.x][i]);
  }
}

// Thread per x element (channel ch, token i): the velocities' token rows read across channels.
__global__ void guided_euler_step_kernel(float* __restrict__ x, const uint16_t* __restrict__ cond,
                                         const uint16_t* __restrict__ uncond, const float* __restrict__ scalars,
                                         int64_t C, int64_t n) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= C * n) return;
  const int64_t ch = j / n, i = j - ch * n;
  const float g = scalars[0], dt = __fsub_rn(scalars[2], scalars[1]);
  const float c = bf16_bits_to_float(cond[i * C + ch]);
  float pred = c;
  if (uncond) {
    const float u = bf16_bits_to_float(uncond[i * C + ch]);
    pred = __fadd_rn(u, __fmul_rn(g, __fsub_rn(c, u)));
  }
  x[j] = __fadd_rn(x[j], __fmul_rn(dt, pred));
}

}  // namespace

void transpose_to_bf16(const Tensor& x, Tensor& y) {
  const int64_t R = x.dim(0), K = x.dim(1);
  if (R == 0 || K == 0) return;
  const dim3 grid(blocks_for(K, kTile), blocks_for(R, kTile)), block(kTile, 8);
  transpose_to_bf16_kernel<<<grid, block, 0, stream()>>>(x.ptr<const float>(), y.ptr<uint16_t>(), R, K);
  TF_CUDA_LAUNCH("transpose_to_bf16_kernel");
}

void guided_euler_step(Tensor& x, const Tensor& cond, const Tensor* uncond, const Tensor& scalars) {
  const int64_t C = x.dim(0), n = x.dim(1);
  if (C * n == 0) return;
  guided_euler_step_kernel<<<blocks_for(C * n, 256), 256, 0, stream()>>>(
      x.ptr<float>(), cond.ptr<const uint16_t>(), uncond ? uncond->ptr<const uint16_t>() : nullptr,
      scalars.ptr<const float>(), C, n);
  TF_CUDA_LAUNCH("guided_euler_step_kernel");
}

}  // namespace tf::cuda
