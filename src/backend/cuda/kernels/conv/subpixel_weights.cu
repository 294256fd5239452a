// The sub-pixel classes' weights (subpixel_weights.h).
#include "backend/cuda/kernels/conv/subpixel_weights.h"

#include <cstdint>

#include "backend/cuda/kernels/split_products/conv_tiles.cuh"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"
#include "backend/cuda/runtime/launch_check.h"

namespace tf::cuda {

namespace {

constexpr int kTaps = 7;  // a class's 4 hi taps and 3 lo taps

// The 3x3 rows (or columns) that 2x2 tap u of parity a covers: [first, last].
__device__ __forceinline__ int first_of(int a, int u) { return u == 0 ? 0 : 1 + a; }
__device__ __forceinline__ int last_of(int a, int u) { return u == 0 ? a : 2; }

__global__ void subpixel_weights_kernel(const __nv_bfloat16* __restrict__ w, int C, int Cp, int64_t total,
                                       __nv_bfloat16* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // index into out
  if (i >= total) return;
  const int ci = int(i % Cp);
  const int64_t rest = i / Cp;
  const int j = int(rest % kTaps), cls = int(rest / kTaps % 4);
  const int64_t m = rest / (kTaps * 4);
  if (ci >= C) {
    out[i] = __float2bfloat16(0.f);
    return;
  }
  const int tap = j < 4 ? j : conv_tma::lo_tap(cls, j - 4), u = tap / 2, v = tap % 2, a = cls / 2, b = cls % 2;
  const __nv_bfloat16* wc = w + (m * C + ci) * 9;
  float sum = 0.f;
  for (int ky = first_of(a, u); ky <= last_of(a, u); ++ky)
    for (int kx = first_of(b, v); kx <= last_of(b, v); ++kx) sum = __fadd_rn(sum, __bfloat162float(wc[3 * ky + kx]));
  __nv_bfloat16 hi, lo;
  gemm::split_bf16(sum, hi, lo);
  out[i] = j < 4 ? hi : lo;
}

}  // namespace

void launch_subpixel_weights(const __nv_bfloat16* w, int M, int C, __nv_bfloat16* out, cudaStream_t stream) {
  const int Cp = (C + 63) / 64 * 64;
  const int64_t total = int64_t(M) * 4 * kTaps * Cp;
  subpixel_weights_kernel<<<unsigned((total + 255) / 256), 256, 0, stream>>>(w, C, Cp, total, out);
  check_launch("conv2d (subpixel_weights_kernel)");
}

}  // namespace tf::cuda
