#pragma once
// 3x3 stride-1 convolutions with at most 4 output channels (the VAE's conv_out: 3): a thread an output
// position on CUDA cores, reading the split picture (channels last, hi and lo bf16) and summing
// (hi + lo) * w in fp32; the tensor-core kernel's 128-wide channel tile would be 3/128 full.
#include <cuda_bf16.h>

#include "backend/cuda/kernels/split_products/split_gemm.cuh"

namespace tf::cuda {

constexpr int kFewOutputsMax = 4;
constexpr int kFewTileX = 32, kFewTileY = 8, kFewChunk = 16;  // outputs a block; channels a staged chunk
// Whether conv_few_outputs takes a convolution: its weights (fp32 [9][Ci][4]) and one staged chunk of
// the input tile in 48 KB of shared memory.
inline size_t conv_few_outputs_smem(int Ci) {
  return (size_t(9) * Ci * 4 + size_t(kFewTileY + 2) * (kFewTileX + 2) * (kFewChunk + 1)) * sizeof(float);
}
inline bool conv_few_outputs_apply(int Co, int Ci, int kh, int stride) {
  return Co <= kFewOutputsMax && kh == 3 && stride == 1 && Ci % kFewChunk == 0 && conv_few_outputs_smem(Ci) <= 48 * 1024;
}

// hi, lo: [H, W, Ci] bf16 (hi + lo the input, zero outside the picture); w: bf16 [CO, Ci, 3, 3];
// e: channel-major output [CO, Ho * Wo] with bias and residual as the GEMM epilogue's. A block's
// 32 x 8 outputs read their 34 x 10 inputs from shared memory, 16 channels at a time.
template <int CO>
__global__ void __launch_bounds__(kFewTileX * kFewTileY) conv_few_outputs_kernel(
    const __nv_bfloat16* __restrict__ hi, const __nv_bfloat16* __restrict__ lo, int Ci, int H, int W,
    const __nv_bfloat16* __restrict__ w, int pad_top, int pad_left, int Ho, int Wo, gemm::Epilogue e) {
  constexpr int PX = kFewTileX + 2, PY = kFewTileY + 2, LD = kFewChunk + 1;  // LD: a lane a bank
  extern __shared__ float4 smem4[];
  float4* wsm = smem4;                                          // [tap][ci] -> the CO weights (padded to 4)
  float* tile = reinterpret_cast<float*>(smem4 + 9 * Ci);     // [PY * PX][LD]
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kFewTileX + tx, threads = kFewTileX * kFewTileY;
  for (int i = tid; i < 9 * Ci; i += threads) {
    const int ci = i % Ci, tap = i / Ci;
    float v[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int co = 0; co < CO; ++co) v[co] = __bfloat162float(w[(int64_t(co) * Ci + ci) * 9 + tap]);
    wsm[i] = make_float4(v[0], v[1], v[2], v[3]);
  }
  const int ox = blockIdx.x * kFewTileX + tx, oy = blockIdx.y * kFewTileY + ty;
  const int x0 = blockIdx.x * kFewTileX - pad_left, y0 = blockIdx.y * kFewTileY - pad_top;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int c0 = 0; c0 < Ci; c0 += kFewChunk) {
    __syncthreads();  // the previous chunk is read (the first time: the weights are in)
    for (int i = tid; i < PY * PX * (kFewChunk / 8); i += threads) {
      const int g = i % (kFewChunk / 8), p = i / (kFewChunk / 8), iy = y0 + p / PX, ix = x0 + p % PX;
      float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
      if (iy >= 0 && iy < H && ix >= 0 && ix < W) {
        const int64_t at = (int64_t(iy) * W + ix) * Ci + c0 + g * 8;
        const uint4 a = __ldg(reinterpret_cast<const uint4*>(hi + at)), b = __ldg(reinterpret_cast<const uint4*>(lo + at));
        const __nv_bfloat16* ah = reinterpret_cast<const __nv_bfloat16*>(&a);
        const __nv_bfloat16* bl = reinterpret_cast<const __nv_bfloat16*>(&b);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = __fadd_rn(__bfloat162float(ah[j]), __bfloat162float(bl[j]));  // exact
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) tile[p * LD + g * 8 + j] = v[j];
    }
    __syncthreads();
#pragma unroll
    for (int tap = 0; tap < 9; ++tap) {
      const float* t = tile + ((ty + tap / 3) * PX + tx + tap % 3) * LD;
      const float4* wt = wsm + tap * Ci + c0;
#pragma unroll
      for (int ci = 0; ci < kFewChunk; ++ci) {
        const float v = t[ci];
        const float4 k = wt[ci];
        acc[0] = fmaf(v, k.x, acc[0]);
        if (CO > 1) acc[1] = fmaf(v, k.y, acc[1]);
        if (CO > 2) acc[2] = fmaf(v, k.z, acc[2]);
        if (CO > 3) acc[3] = fmaf(v, k.w, acc[3]);
      }
    }
  }
  if (ox >= Wo || oy >= Ho) return;
  const int n = oy * Wo + ox;
#pragma unroll
  for (int co = 0; co < CO; ++co) gemm::store_one(e, co, n, e.bias ? __bfloat162float(e.bias[co]) : 0.f, acc[co]);
}

inline void launch_conv_few_outputs(const __nv_bfloat16* hi, const __nv_bfloat16* lo, int Ci, int H, int W,
                                    const __nv_bfloat16* w, int Co, int pad_top, int pad_left, int Ho, int Wo,
                                    const gemm::Epilogue& e, cudaStream_t stream) {
  const dim3 block(kFewTileX, kFewTileY), grid((Wo + kFewTileX - 1) / kFewTileX, (Ho + kFewTileY - 1) / kFewTileY);
  const size_t smem = conv_few_outputs_smem(Ci);
  auto go = [&](auto kernel) { kernel<<<grid, block, smem, stream>>>(hi, lo, Ci, H, W, w, pad_top, pad_left, Ho, Wo, e); };
  switch (Co) {
    case 1: go(conv_few_outputs_kernel<1>); break;
    case 2: go(conv_few_outputs_kernel<2>); break;
    case 3: go(conv_few_outputs_kernel<3>); break;
    default: go(conv_few_outputs_kernel<4>); break;
  }
}

}  // namespace tf::cuda
