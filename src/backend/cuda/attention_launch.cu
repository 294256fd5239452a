// Single-head attention in blocks of query rows: S = scale * Q_b^T K ([nq, N], the only score
// storage), P = softmax(S) row by row in place, O_b = V P^T. Both products run on the split-bf16
// GEMM (hi*hi + hi*lo + lo*hi in fp32), so scores and outputs keep fp32-class accuracy.
#include <algorithm>

#include "backend/cuda/launch_check.h"
#include "backend/cuda/split_gemm.cuh"
#include "backend/cuda/split_gemm_wgmma.cuh"
#include "backend/cuda/vae_kernels.h"

namespace tf::cuda {

namespace {

constexpr int kSoftmaxThreads = 256;
bool g_wgmma = true;  // both products on the wgmma kernel

__device__ float block_max(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float t = scratch[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) t = fmaxf(t, scratch[w]);
  return t;
}

__device__ double block_sum(double v, double* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  double t = scratch[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) t += scratch[w];
  return t;
}

// One block per row of s [rows, N]: s <- exp(s - max) / sum, the sum in double.
__global__ void softmax_rows_kernel(float* __restrict__ s, int N) {
  __shared__ float fscratch[kSoftmaxThreads / 32];
  __shared__ double dscratch[kSoftmaxThreads / 32];
  float* row = s + int64_t(blockIdx.x) * N;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < N; i += kSoftmaxThreads) m = fmaxf(m, row[i]);
  m = block_max(m, fscratch);
  double sum = 0.0;
  for (int i = threadIdx.x; i < N; i += kSoftmaxThreads) sum += double(expf(__fsub_rn(row[i], m)));
  const float sum_f = float(block_sum(sum, dscratch));
  for (int i = threadIdx.x; i < N; i += kSoftmaxThreads) row[i] = __fdiv_rn(expf(__fsub_rn(row[i], m)), sum_f);
}

template <class A, class B>
void run_gemm(const A& a, const B& b, const gemm::Epilogue& e, cudaStream_t stream, const char* what) {
  using namespace gemm;
  if (g_wgmma) {
    auto kernel = gemm_wgmma::split_wgmma_f32_kernel<A, B>;
    static bool wattr = false;
    if (!wattr) {
      check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(gemm_wgmma::kSmemBytesF32)), what);
      wattr = true;
    }
    const unsigned grid = unsigned((e.M + gemm_wgmma::BM - 1) / gemm_wgmma::BM) *
                          unsigned((e.N + gemm_wgmma::BN - 1) / gemm_wgmma::BN);
    kernel<<<grid, gemm_wgmma::THREADS, gemm_wgmma::kSmemBytesF32, stream>>>(a, b, e);
    return check_launch(what);
  }
  auto kernel = split_gemm_kernel<A, B>;
  static bool attr = false;
  if (!attr) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)), what);
    attr = true;
  }
  const unsigned grid = unsigned((e.M + BM - 1) / BM) * unsigned((e.N + BN - 1) / BN);
  kernel<<<grid, THREADS, kSmemBytes, stream>>>(a, b, e);
  check_launch(what);
}

}  // namespace

void set_attention_wgmma(bool on) { g_wgmma = on; }

int attention_query_block(int N) { return std::min(N, 4096); }

size_t attention_workspace_floats(int N) { return size_t(attention_query_block(N)) * size_t(N); }

void launch_attention_single_head(const float* q, const float* k, const float* v, int D, int N, float scale,
                                  float* o, float* workspace, cudaStream_t stream) {
  using namespace gemm;
  const int block = attention_query_block(N);
  for (int i0 = 0; i0 < N; i0 += block) {
    const int nq = std::min(block, N - i0);
    // S[i, j] = scale * sum_d q[d, i0 + i] k[d, j]
    F32RContig qa{q + i0, N, nq, D};
    F32RContig kb{k, N, N, D};
    Epilogue es{workspace, N, scale, nullptr, nullptr, nq, N};
    run_gemm(qa, kb, es, stream, "attention (scores: split_gemm_kernel)");
    softmax_rows_kernel<<<nq, kSoftmaxThreads, 0, stream>>>(workspace, N);
    check_launch("attention (softmax_rows_kernel)");
    // O[d, i0 + i] = sum_j v[d, j] P[i, j]
    F32KContig va{v, N, D, N};
    F32KContig pb{workspace, N, nq, N};
    Epilogue eo{o + i0, N, 1.f, nullptr, nullptr, D, nq};
    run_gemm(va, pb, eo, stream, "attention (values: split_gemm_kernel)");
  }
}

}  // namespace tf::cuda
