// Narrow products (a handful of output columns, few tokens): y[m, n] = bf16(sum_k x[m, k] w[n, k]).
// cuBLASLt runs these at its ~15 us launch-and-tile latency whatever their size; here one block
// per token keeps x's row in shared memory and each warp owns output columns. Every lane sums its
// strided k in order (fp32), then a fixed butterfly combines the lanes: the same bits every run.
#include "backend/cuda/check.h"
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/gemm.h"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;

__global__ void gemm_small_n_kernel(const uint16_t* x, const uint16_t* w, uint16_t* y, int n, int k) {
  extern __shared__ float xs[];  // [k] this token's row in fp32
  const int64_t m = blockIdx.x;
  for (int i = threadIdx.x; i < k; i += kThreads) xs[i] = ld_bf16(x, m * k + i);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int col = warp; col < n; col += kThreads / 32) {
    const uint16_t* wr = w + int64_t(col) * k;
    float acc = 0.0f;
    for (int i = lane; i < k; i += 32) acc = acc + xs[i] * ld_bf16(wr, i);
    acc = group_sum<32>(acc);
    if (lane == 0) y[m * n + col] = st_bf16(acc);
  }
}

}  // namespace

bool gemm_small_n_fits(int64_t m, int64_t n, int64_t k) {
  return n <= 64 && m <= 512 && k <= 12288;
}

void gemm_small_n(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0) return;
  const size_t smem = sizeof(float) * size_t(k);
  if (smem > 48 * 1024) TF_CUDA(cudaFuncSetAttribute(gemm_small_n_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  gemm_small_n_kernel<<<static_cast<unsigned>(m), kThreads, smem, stream()>>>(
      static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(w), static_cast<uint16_t*>(y), int(n), int(k));
  TF_CUDA_LAUNCH("gemm_small_n_kernel");
}

}  // namespace tf::cuda
