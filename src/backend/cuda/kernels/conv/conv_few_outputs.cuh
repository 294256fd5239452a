#pragma once
// 3x3 stride-1 convolutions with at most 4 output channels (the VAE's conv_out: 3): a thread an output
// position on CUDA cores, reading the split picture (channels last, hi and lo bf16) and summing
// (hi + lo) * w in fp32; the tensor-core kernel's 128-wide channel tile would be 3/128 full.
#include <cuda_bf16.h>

#include "backend/cuda/kernels/split_products/split_gemm.cuh"

namespace tf::cuda {

constexpr int kFewOutputsMax = 4;
// Whether conv_few_outputs takes a convolution: its weights (fp32 [9][Ci][Co]) in 48 KB of shared memory.
inline bool conv_few_outputs_apply(int Co, int Ci, int kh, int stride) {
  return Co <= kFewOutputsMax && kh == 3 && stride == 1 && Ci % 8 == 0 && 9 * Ci * Co * 4 <= 48 * 1024;
}

// hi, lo: [H, W, Ci] bf16 (hi + lo the input, zero outside the picture); w: bf16 [CO, Ci, 3, 3];
// e: channel-major output [CO, Ho * Wo] with bias and residual as the GEMM epilogue's.
template <int CO>
__global__ void __launch_bounds__(256) conv_few_outputs_kernel(const __nv_bfloat16* __restrict__ hi,
                                                               const __nv_bfloat16* __restrict__ lo, int Ci, int H,
                                                               int W, const __nv_bfloat16* __restrict__ w,
                                                               int pad_top, int pad_left, int Ho, int Wo,
                                                               gemm::Epilogue e) {
  extern __shared__ float wsm[];  // [tap][ci][co]
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
  for (int i = tid; i < 9 * Ci * CO; i += threads) {
    const int co = i % CO, ci = (i / CO) % Ci, tap = i / (CO * Ci);
    wsm[i] = __bfloat162float(w[(int64_t(co) * Ci + ci) * 9 + tap]);
  }
  __syncthreads();
  const int ox = blockIdx.x * blockDim.x + threadIdx.x, oy = blockIdx.y * blockDim.y + threadIdx.y;
  if (ox >= Wo || oy >= Ho) return;
  float acc[CO];
#pragma unroll
  for (int co = 0; co < CO; ++co) acc[co] = 0.f;
  for (int tap = 0; tap < 9; ++tap) {
    const int iy = oy - pad_top + tap / 3, ix = ox - pad_left + tap % 3;
    if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
    const int64_t at = (int64_t(iy) * W + ix) * Ci;
    const uint4* ph = reinterpret_cast<const uint4*>(hi + at);
    const uint4* pl = reinterpret_cast<const uint4*>(lo + at);
    const float* wt = wsm + tap * Ci * CO;
    for (int c8 = 0; c8 < Ci / 8; ++c8) {
      const uint4 a = __ldg(ph + c8), b = __ldg(pl + c8);
      const __nv_bfloat16* ah = reinterpret_cast<const __nv_bfloat16*>(&a);
      const __nv_bfloat16* bl = reinterpret_cast<const __nv_bfloat16*>(&b);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float v = __fadd_rn(__bfloat162float(ah[j]), __bfloat162float(bl[j]));  // exact: lo is hi's remainder
#pragma unroll
        for (int co = 0; co < CO; ++co) acc[co] = fmaf(v, wt[(c8 * 8 + j) * CO + co], acc[co]);
      }
    }
  }
  const int n = oy * Wo + ox;
#pragma unroll
  for (int co = 0; co < CO; ++co) gemm::store_one(e, co, n, e.bias ? __bfloat162float(e.bias[co]) : 0.f, acc[co]);
}

inline void launch_conv_few_outputs(const __nv_bfloat16* hi, const __nv_bfloat16* lo, int Ci, int H, int W,
                                    const __nv_bfloat16* w, int Co, int pad_top, int pad_left, int Ho, int Wo,
                                    const gemm::Epilogue& e, cudaStream_t stream) {
  const dim3 block(32, 8), grid((Wo + 31) / 32, (Ho + 7) / 8);
  const size_t smem = size_t(9) * Ci * Co * sizeof(float);
  auto go = [&](auto kernel) { kernel<<<grid, block, smem, stream>>>(hi, lo, Ci, H, W, w, pad_top, pad_left, Ho, Wo, e); };
  switch (Co) {
    case 1: go(conv_few_outputs_kernel<1>); break;
    case 2: go(conv_few_outputs_kernel<2>); break;
    case 3: go(conv_few_outputs_kernel<3>); break;
    default: go(conv_few_outputs_kernel<4>); break;
  }
}

}  // namespace tf::cuda
