// Single-head attention in blocks of query rows: S = scale * Q_b^T K ([nq, N], the only score
// storage), P = softmax(S) row by row in place, O_b = V P^T. Both products run on the split-bf16
// GEMM (hi*hi + hi*lo + lo*hi in fp32), so scores and outputs keep fp32-class accuracy.
// Where the TMA-fed kernel applies, q and k are split once into channels-last hi/lo, v into hi/lo,
// and the softmax writes P already split: the same bytes as splitting inside the products. There the
// softmax is split over the products (TF_SOFTMAX_ROWS=tiles, the default): the scores' epilogue writes each
// 128-key tile's e = exp(s - tile max) split, with the tile's max and sum; a pass turns a row's tile stats
// into a factor per tile, exp(tile max - row max) / row sum; the values' product joins each 128-key block's
// sums times its factor. The scores are never stored and no pass reads them.
#include <algorithm>

#include "backend/cuda/runtime/launch_check.h"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"
#include "backend/cuda/kernels/split_products/softmax_tiles.cuh"
#include "backend/cuda/kernels/split_products/split_gemm_wgmma.cuh"
#include "backend/cuda/kernels/split_products/tma_gemm.h"
#include "backend/cuda/kernels/channels_f32.h"
#include "backend/variants.h"

namespace tf::cuda {

namespace {

constexpr int kSoftmaxThreads = 256;

// Both products on the wgmma kernel (TF_CHANNELS_ATTENTION_KERNEL).
bool wgmma_on() { return variant_is<Variant::channels_attention_kernel>("wgmma"); }

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

// p of element i of a row: over the scores in place, or (SPLIT) as bf16 hi and lo at at + i.
template <bool SPLIT>
__device__ __forceinline__ void store_p(float p, float* row, int64_t at, int i, __nv_bfloat16* p_hi,
                                        __nv_bfloat16* p_lo) {
  if constexpr (SPLIT) {
    __nv_bfloat16 h, l;
    gemm::split_bf16(p, h, l);
    p_hi[at + i] = h;
    p_lo[at + i] = l;
  } else {
    row[i] = p;
  }
}

// One block per row of s [rows, N]: p = exp(s - max) / sum, the sum in double; p over s in place,
// or (SPLIT) as bf16 hi and lo rows of p_hi, p_lo.
template <bool SPLIT>
__global__ void softmax_rows_kernel(float* __restrict__ s, int N, __nv_bfloat16* __restrict__ p_hi,
                                    __nv_bfloat16* __restrict__ p_lo) {
  __shared__ float fscratch[kSoftmaxThreads / 32];
  __shared__ double dscratch[kSoftmaxThreads / 32];
  float* row = s + int64_t(blockIdx.x) * N;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < N; i += kSoftmaxThreads) m = fmaxf(m, row[i]);
  m = block_max(m, fscratch);
  double sum = 0.0;
  for (int i = threadIdx.x; i < N; i += kSoftmaxThreads) sum += double(expf(__fsub_rn(row[i], m)));
  const float sum_f = float(block_sum(sum, dscratch));
  const int64_t at = int64_t(blockIdx.x) * N;
  for (int i = threadIdx.x; i < N; i += kSoftmaxThreads) {
    const float p = __fdiv_rn(expf(__fsub_rn(row[i], m)), sum_f);
    store_p<SPLIT>(p, row, at, i, p_hi, p_lo);
  }
}

// The same rows, sums and roundings as softmax_rows_kernel for N = 256 V: each thread keeps its V
// values (i = thread + 256 u) in registers, so a row is read from memory once, not three times.
template <int V, bool SPLIT>
__global__ void __launch_bounds__(kSoftmaxThreads) softmax_rows_resident_kernel(float* __restrict__ s,
                                                                               __nv_bfloat16* __restrict__ p_hi,
                                                                               __nv_bfloat16* __restrict__ p_lo) {
  __shared__ float fscratch[kSoftmaxThreads / 32];
  __shared__ double dscratch[kSoftmaxThreads / 32];
  constexpr int N = kSoftmaxThreads * V;
  float* row = s + int64_t(blockIdx.x) * N;
  float x[V];
#pragma unroll
  for (int u = 0; u < V; ++u) x[u] = row[threadIdx.x + kSoftmaxThreads * u];
  float m = -INFINITY;
#pragma unroll
  for (int u = 0; u < V; ++u) m = fmaxf(m, x[u]);
  m = block_max(m, fscratch);
  double sum = 0.0;
#pragma unroll
  for (int u = 0; u < V; ++u) {
    x[u] = expf(__fsub_rn(x[u], m));
    sum += double(x[u]);
  }
  const float sum_f = float(block_sum(sum, dscratch));
  const int64_t at = int64_t(blockIdx.x) * N;
#pragma unroll
  for (int u = 0; u < V; ++u) {
    const int i = threadIdx.x + kSoftmaxThreads * u;
    const float p = __fdiv_rn(x[u], sum_f);
    store_p<SPLIT>(p, row, at, i, p_hi, p_lo);
  }
}

// softmax_rows over nq rows of N: the register-resident kernel where N is one of its widths.
template <bool SPLIT>
void launch_softmax_rows(float* s, int nq, int N, __nv_bfloat16* p_hi, __nv_bfloat16* p_lo, cudaStream_t stream) {
  const int resident = softmax_rows_resident_width(N);
  if (resident == kSoftmaxThreads * 64)
    softmax_rows_resident_kernel<64, SPLIT><<<nq, kSoftmaxThreads, 0, stream>>>(s, p_hi, p_lo);
  else if (resident == kSoftmaxThreads * 16)
    softmax_rows_resident_kernel<16, SPLIT><<<nq, kSoftmaxThreads, 0, stream>>>(s, p_hi, p_lo);
  else
    softmax_rows_kernel<SPLIT><<<nq, kSoftmaxThreads, 0, stream>>>(s, N, p_hi, p_lo);
  check_launch("attention (softmax_rows_kernel)");
}

template <class A, class B>
void run_gemm(const A& a, const B& b, const gemm::Epilogue& e, cudaStream_t stream, const char* what) {
  using namespace gemm;
  if (wgmma_on()) {
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

int softmax_rows_resident_width(int N) {
  return !variant_is<Variant::softmax_rows>("strided") && (N == kSoftmaxThreads * 64 || N == kSoftmaxThreads * 16) ? N
                                                                                                                   : 0;
}

int attention_query_block(int N) { return std::min(N, 4096); }

namespace {

bool tma_applies(int D, int N) {
  return wgmma_on() && variant_is<Variant::split_operands>("auto") && D % 64 == 0 && N % 8 == 0;
}

// One warp per query row i of nq: from the row's tile stats (max m_b, sum l_b; stats[i * tiles + b]) the row's
// max M and sum L = sum_b l_b exp(m_b - M) in double (lane partials over b = lane + 32 u in order, then a fixed
// butterfly), then factor[b * nq + i] = fp32(exp(m_b - M) / L) for each tile.
__global__ void tile_factors_kernel(const float2* __restrict__ stats, int nq, int tiles, float* __restrict__ factor) {
  const int i = int(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (i >= nq) return;
  const float2* row = stats + int64_t(i) * tiles;
  float m = -INFINITY;
  for (int b = lane; b < tiles; b += 32) m = fmaxf(m, row[b].x);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  double sum = 0.0;
  for (int b = lane; b < tiles; b += 32) sum += double(row[b].y) * double(expf(__fsub_rn(row[b].x, m)));
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  for (int b = lane; b < tiles; b += 32)
    factor[int64_t(b) * nq + i] = float(double(expf(__fsub_rn(row[b].x, m))) / sum);
}

// Scores (or, softmax by tiles, the tiles' stats and factors), P hi/lo, then q^T, k^T (channels last) and v,
// each as hi and lo.
void attention_tma(const float* q, const float* k, const float* v, int D, int N, float scale, float* o,
                   float* workspace, cudaStream_t stream) {
  const int block = attention_query_block(N);
  const bool tiles = variant_is<Variant::softmax_rows>("tiles");
  float* s = workspace;
  const int n_tiles = (N + conv_tma::kSoftmaxTile - 1) / conv_tma::kSoftmaxTile;
  auto* stats = reinterpret_cast<float2*>(workspace);  // (tiles) where the scores would be
  float* factor = workspace + 2 * size_t(block) * n_tiles;
  auto* split = reinterpret_cast<__nv_bfloat16*>(workspace + size_t(block) * N);
  __nv_bfloat16 *p_hi = split, *p_lo = p_hi + size_t(block) * N;
  const size_t DN = size_t(D) * N;
  __nv_bfloat16 *qt_hi = p_lo + size_t(block) * N, *qt_lo = qt_hi + DN, *kt_hi = qt_lo + DN, *kt_lo = kt_hi + DN;
  __nv_bfloat16 *v_hi = kt_lo + DN, *v_lo = v_hi + DN;
  launch_split_channels_last(q, D, 1, N, false, nullptr, qt_hi, qt_lo, stream);
  launch_split_channels_last(k, D, 1, N, false, nullptr, kt_hi, kt_lo, stream);
  launch_split_elementwise(v, int64_t(DN), v_hi, v_lo, stream);
  for (int i0 = 0; i0 < N; i0 += block) {
    const int nq = std::min(block, N - i0);
    // S[i, j] = scale * sum_d q[d, i0 + i] k[d, j]: a 1x1 window over the one-row picture k^T
    gemm::Epilogue es{s, N, scale, nullptr, nullptr, nq, N};
    if (tiles) es.exp_tiles = {p_hi, p_lo, stats, n_tiles};
    launch_split_tma(qt_hi + size_t(i0) * D, qt_lo + size_t(i0) * D, nq, {kt_hi, kt_lo, D, 1, N}, {1, 1, 0, 0, 1, N},
                     es, stream);
    if (tiles) {
      constexpr int kRowsPerBlock = 8;
      tile_factors_kernel<<<unsigned((nq + kRowsPerBlock - 1) / kRowsPerBlock), 32 * kRowsPerBlock, 0, stream>>>(
          stats, nq, n_tiles, factor);
      check_launch("attention (tile_factors_kernel)");
    } else {
      launch_softmax_rows<true>(s, nq, N, p_hi, p_lo, stream);
    }
    // O[d, i0 + i] = sum_j v[d, j] P[i, j]: P's rows are the one-row picture, N channels deep
    gemm::Epilogue eo{o + i0, N, 1.f, nullptr, nullptr, D, nq};
    if (tiles) eo.k_block_scale = factor;
    launch_split_tma(v_hi, v_lo, D, {p_hi, p_lo, N, 1, nq}, {1, 1, 0, 0, 1, nq}, eo, stream);
  }
}

}  // namespace

size_t attention_workspace_floats(int D, int N) {
  const size_t scores = size_t(attention_query_block(N)) * size_t(N);
  return 2 * scores + 3 * size_t(D) * N;  // the TMA path's need; the other uses the scores only
}

void launch_attention_single_head(const float* q, const float* k, const float* v, int D, int N, float scale,
                                  float* o, float* workspace, cudaStream_t stream) {
  using namespace gemm;
  if (tma_applies(D, N)) return attention_tma(q, k, v, D, N, scale, o, workspace, stream);
  const int block = attention_query_block(N);
  for (int i0 = 0; i0 < N; i0 += block) {
    const int nq = std::min(block, N - i0);
    // S[i, j] = scale * sum_d q[d, i0 + i] k[d, j]
    F32RContig qa{q + i0, N, nq, D};
    F32RContig kb{k, N, N, D};
    Epilogue es{workspace, N, scale, nullptr, nullptr, nq, N};
    run_gemm(qa, kb, es, stream, "attention (scores: split_gemm_kernel)");
    launch_softmax_rows<false>(workspace, nq, N, nullptr, nullptr, stream);
    // O[d, i0 + i] = sum_j v[d, j] P[i, j]
    F32KContig va{v, N, D, N};
    F32KContig pb{workspace, N, nq, N};
    Epilogue eo{o + i0, N, 1.f, nullptr, nullptr, D, nq};
    run_gemm(va, pb, eo, stream, "attention (values: split_gemm_kernel)");
  }
}

}  // namespace tf::cuda
