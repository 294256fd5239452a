#pragma once
// 3x3 stride-1 convolutions with at most 4 output channels (the VAE's conv_out: 3) on CUDA cores: the fp32
// picture is staged as it is (its GroupNorm applied and its bf16 split taken there, so no split pass), and
// (hi + lo) * w summed in fp32 (conv2d.h's CUDA numerics); the tensor-core kernels' 96- or 128-wide channel
// tiles would be 3/128 full.
#include <cuda_bf16.h>

#include "backend/cuda/kernels/norm/group_norm_affine.cuh"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"
#include "backend/cuda/primitives/tensor_core.cuh"
#include "backend/cuda/runtime/launch_check.h"

namespace tf::cuda {

constexpr int kFewOutputsMax = 4;

// A block 32 x 32 outputs, a thread 4 of one column; 8 channels of the 34 x 34 inputs staged at a time,
// channel-major as the picture is.
constexpr int kFewTileX = 32, kFewTileY = 8, kFewRows = 4, kFewChunk = 8;
constexpr int kFewPX = kFewTileX + 2, kFewPY = kFewTileY * kFewRows + 2;
constexpr int kFewThreads = kFewTileX * kFewTileY;
constexpr int kFewChunkFloats = kFewChunk * kFewPY * kFewPX;
constexpr int kFewEdge = kFewPY * (kFewPX - 32);  // a channel's last two staged columns
constexpr int kFewEdgePerLane = (kFewEdge + 31) / 32;
static_assert(kFewTileY == kFewChunk && kFewPX > 32 && kFewPX <= 2 * 32, "a warp a staged channel");

// Shared memory: the weights (fp32 [9][Ci][4]), the channels' GroupNorm maps, two staged chunks.
inline size_t conv_few_outputs_smem(int Ci, bool norm) {
  return size_t(9) * Ci * sizeof(float4) + (norm ? size_t(Ci) * sizeof(ChannelAffine) : 0) +
         size_t(2) * kFewChunkFloats * sizeof(float);
}
constexpr size_t kFewSmemLimit = 113 * 1024;  // two blocks an SM (so inputs up to 248 channels with a GroupNorm)
// Whether conv_few_outputs takes a convolution.
inline bool conv_few_outputs_apply(int Co, int Ci, int kh, int stride) {
  return Co <= kFewOutputsMax && kh == 3 && stride == 1 && Ci % kFewChunk == 0 &&
         conv_few_outputs_smem(Ci, true) <= kFewSmemLimit;
}

// Warp ty stages channel c0 + ty of a chunk, lane l its column l of the kFewPY rows and its share of the last two
// columns (item l + 32 k: column 32 + item / kFewPY, row item % kFewPY). Each calls f(staged row, staged column,
// in the picture).
template <class F>
__device__ __forceinline__ void few_own_positions(int W, uint64_t rows_in, int x0, int tx, const F& f) {
  const bool col_in = x0 + tx >= 0 && x0 + tx < W;
#pragma unroll 2
  for (int r = 0; r < kFewPY; ++r) f(r, tx, col_in && (rows_in >> r & 1));
#pragma unroll
  for (int k = 0; k < kFewEdgePerLane; ++k) {
    const int q = tx + 32 * k, r = q % kFewPY, px = 32 + q / kFewPY;
    if (q < kFewEdge) f(r, px, x0 + px < W && (rows_in >> r & 1));
  }
}

// Bit r: staged row r (picture row y0 + r) lies in the picture.
__device__ __forceinline__ uint64_t few_rows_in(int y0, int H) {
  uint64_t m = 0;
  for (int r = 0; r < kFewPY; ++r) m |= uint64_t(y0 + r >= 0 && y0 + r < H) << r;
  return m;
}

// The thread's positions of chunk c0 copied as they are (cp.async, one group); those outside the picture left.
__device__ __forceinline__ void few_copy_chunk(float* buf, const float* __restrict__ x, int c0, int64_t plane, int Ws,
                                               int W, bool up, uint64_t rows_in, int x0, int y0, int tx, int ty) {
  const float* xc = x + int64_t(c0 + ty) * plane;
  float* t = buf + ty * kFewPY * kFewPX;
  few_own_positions(W, rows_in, x0, tx, [&](int r, int px, bool in) {
    const int iy = y0 + r, ix = x0 + px;
    if (in) cp_async_4(t + r * kFewPX + px, xc + int64_t(up ? iy >> 1 : iy) * Ws + (up ? ix >> 1 : ix));
  });
  cp_async_commit();
}

// The thread's copied positions staged in place: the GroupNorm's map with NORM, then hi + lo of the bf16 split
// (exact in fp32); outside the picture zero (after the norm).
template <bool NORM>
__device__ __forceinline__ void few_stage_chunk(float* buf, const ChannelAffine* affine, int c0, bool silu, int W,
                                                uint64_t rows_in, int x0, int tx, int ty) {
  ChannelAffine a{};
  if constexpr (NORM) a = affine[c0 + ty];
  float* t = buf + ty * kFewPY * kFewPX;
  few_own_positions(W, rows_in, x0, tx, [&](int r, int px, bool in) {
    float v = t[r * kFewPX + px];
    if (in) {
      if constexpr (NORM) v = group_norm_value(a, silu, v);
      __nv_bfloat16 hi, lo;
      gemm::split_bf16(v, hi, lo);
      v = __fadd_rn(__bfloat162float(hi), __bfloat162float(lo));
    }
    t[r * kFewPX + px] = in ? v : 0.f;
  });
}

// x: fp32 [Ci, Hs, Ws] (read through a nearest 2x upsample when up; through GroupNorm's map with NORM),
// zero outside the picture; each staged value is hi + lo of its bf16 split (exact in fp32), as the split
// pass would give. w: bf16 [CO, Ci, 3, 3]; e: channel-major output [CO, Ho * Wo] with bias and residual as
// the GEMM epilogue's. Each output's sum runs over the chunks, their channels, kx, then ky (a fixed order).
// Two chunks in flight: chunk n + 2 is copied (cp.async) while chunk n is staged and multiplied.
template <int CO, bool NORM>
__global__ void __launch_bounds__(kFewThreads, 2) conv_few_outputs_kernel(
    const float* __restrict__ x, int Ci, int Hs, int Ws, bool up, GroupNormApply norm,
    const __nv_bfloat16* __restrict__ w, int pad_top, int pad_left, int Ho, int Wo, gemm::Epilogue e) {
  extern __shared__ float4 smem4[];
  float4* wsm = smem4;                                                       // [tap][ci] -> the CO weights
  ChannelAffine* affine = reinterpret_cast<ChannelAffine*>(smem4 + 9 * Ci);  // [ci] with NORM
  float* bufs = reinterpret_cast<float*>(affine + (NORM ? Ci : 0));          // 2 x [chunk channel][kFewPY][kFewPX]
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kFewTileX + tx;
  const int H = up ? 2 * Hs : Hs, W = up ? 2 * Ws : Ws;
  const int x0 = blockIdx.x * kFewTileX - pad_left, y0 = blockIdx.y * kFewTileY * kFewRows - pad_top;
  const int64_t plane = int64_t(Hs) * Ws;
  const uint64_t rows_in = few_rows_in(y0, H);
  const int chunks = Ci / kFewChunk;
  for (int n = 0; n < 2; ++n) {
    if (n < chunks) few_copy_chunk(bufs + n * kFewChunkFloats, x, n * kFewChunk, plane, Ws, W, up, rows_in, x0, y0, tx, ty);
    else cp_async_commit();
  }
  for (int i = tid; i < 9 * Ci; i += kFewThreads) {
    const int ci = i % Ci, tap = i / Ci;
    float v[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int co = 0; co < CO; ++co) v[co] = __bfloat162float(w[(int64_t(co) * Ci + ci) * 9 + tap]);
    wsm[i] = make_float4(v[0], v[1], v[2], v[3]);
  }
  if constexpr (NORM) {
    for (int c = tid; c < Ci; c += kFewThreads) affine[c] = channel_affine(norm, c);
  }
  __syncthreads();  // the weights and maps are in
  float acc[kFewRows][4] = {};
  for (int n = 0; n < chunks; ++n) {
    const int c0 = n * kFewChunk;
    float* buf = bufs + (n & 1) * kFewChunkFloats;
    cp_async_wait<1>();  // this thread's copies of chunk n have landed (chunk n + 1's may not)
    few_stage_chunk<NORM>(buf, affine, c0, norm.silu, W, rows_in, x0, tx, ty);
    __syncthreads();
    const float* base = buf + ty * kFewRows * kFewPX + tx;
#pragma unroll 1
    for (int c = 0; c < kFewChunk; ++c) {
      const float* t = base + c * kFewPY * kFewPX;
      const float4* wc = wsm + c0 + c;
#pragma unroll
      for (int kx = 0; kx < 3; ++kx) {
        float col[kFewRows + 2];
#pragma unroll
        for (int r = 0; r < kFewRows + 2; ++r) col[r] = t[r * kFewPX + kx];
#pragma unroll
        for (int ky = 0; ky < 3; ++ky) {
          const float4 k = wc[(ky * 3 + kx) * Ci];
#pragma unroll
          for (int r = 0; r < kFewRows; ++r) {
            acc[r][0] = fmaf(col[r + ky], k.x, acc[r][0]);
            if (CO > 1) acc[r][1] = fmaf(col[r + ky], k.y, acc[r][1]);
            if (CO > 2) acc[r][2] = fmaf(col[r + ky], k.z, acc[r][2]);
            if (CO > 3) acc[r][3] = fmaf(col[r + ky], k.w, acc[r][3]);
          }
        }
      }
    }
    __syncthreads();  // chunk n is read: its buffer takes chunk n + 2
    if (n + 2 < chunks) few_copy_chunk(buf, x, c0 + 2 * kFewChunk, plane, Ws, W, up, rows_in, x0, y0, tx, ty);
    else cp_async_commit();
  }
  const int ox = blockIdx.x * kFewTileX + tx;
  if (ox >= Wo) return;
#pragma unroll
  for (int r = 0; r < kFewRows; ++r) {
    const int oy = blockIdx.y * kFewTileY * kFewRows + ty * kFewRows + r;
    if (oy >= Ho) break;
#pragma unroll
    for (int co = 0; co < CO; ++co)
      gemm::store_one(e, co, oy * Wo + ox, e.bias ? __bfloat162float(e.bias[co]) : 0.f, acc[r][co]);
  }
}

template <bool NORM>
void launch_conv_few_outputs_norm(const float* x, int Ci, int Hs, int Ws, bool up, const GroupNormApply& norm,
                                  const __nv_bfloat16* w, int Co, int pad_top, int pad_left, int Ho, int Wo,
                                  const gemm::Epilogue& e, cudaStream_t stream) {
  const dim3 block(kFewTileX, kFewTileY);
  const dim3 grid((Wo + kFewTileX - 1) / kFewTileX, (Ho + kFewTileY * kFewRows - 1) / (kFewTileY * kFewRows));
  const size_t smem = conv_few_outputs_smem(Ci, NORM);
  static bool ready = false;  // the dynamic shared-memory limit raised once for the four instantiations
  if (!ready) {
    for (auto kernel : {conv_few_outputs_kernel<1, NORM>, conv_few_outputs_kernel<2, NORM>,
                        conv_few_outputs_kernel<3, NORM>, conv_few_outputs_kernel<4, NORM>})
      check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kFewSmemLimit)),
                 "conv2d (conv_few_outputs_kernel): shared memory limit");
    ready = true;
  }
  auto go = [&](auto kernel) {
    kernel<<<grid, block, smem, stream>>>(x, Ci, Hs, Ws, up, norm, w, pad_top, pad_left, Ho, Wo, e);
  };
  switch (Co) {
    case 1: go(conv_few_outputs_kernel<1, NORM>); break;
    case 2: go(conv_few_outputs_kernel<2, NORM>); break;
    case 3: go(conv_few_outputs_kernel<3, NORM>); break;
    default: go(conv_few_outputs_kernel<4, NORM>); break;
  }
}

// norm: the GroupNorm (and SiLU) before the convolution, or null.
inline void launch_conv_few_outputs(const float* x, int Ci, int Hs, int Ws, bool up, const GroupNormApply* norm,
                                    const __nv_bfloat16* w, int Co, int pad_top, int pad_left, int Ho, int Wo,
                                    const gemm::Epilogue& e, cudaStream_t stream) {
  if (norm)
    return launch_conv_few_outputs_norm<true>(x, Ci, Hs, Ws, up, *norm, w, Co, pad_top, pad_left, Ho, Wo, e, stream);
  launch_conv_few_outputs_norm<false>(x, Ci, Hs, Ws, up, GroupNormApply{}, w, Co, pad_top, pad_left, Ho, Wo, e, stream);
}

}  // namespace tf::cuda
