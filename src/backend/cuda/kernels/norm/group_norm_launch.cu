// GroupNorm in two launches: one pass over x for each group's statistics (per-block sums of the
// values shifted by the group's first value, in double, combined in a fixed order), then one
// pass that normalises, applies the affine and SiLU.
#include <algorithm>

#include "backend/cuda/kernels/norm/group_norm_affine.cuh"
#include "backend/cuda/runtime/launch_check.h"
#include "backend/cuda/kernels/channels_f32.h"
#include "backend/cuda/kernels/split_products/split_gemm.cuh"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;

int stats_blocks_per_group(int64_t L) {
  const int64_t per_block = int64_t(kThreads) * 16;
  return int(std::clamp<int64_t>((L + per_block - 1) / per_block, 1, 128));
}

__device__ double block_sum(double v, double* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  double t = 0.0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) t += scratch[w];
  return t;  // valid in thread 0
}

// grid (P, G): block p sums its slice [p*L/P, (p+1)*L/P) of group g; group g's P partials, then its shift, at
// partials[g * (P + 1)].
__global__ void group_stats_kernel(const float* __restrict__ x, int64_t L, double2* __restrict__ partials) {
  __shared__ double scratch[kThreads / 32];
  const int g = blockIdx.y, P = gridDim.x, p = blockIdx.x;
  const float* xg = x + int64_t(g) * L;
  const double shift = xg[0];
  const int64_t begin = L * p / P, end = L * (p + 1) / P;
  double s = 0.0, ss = 0.0;
  if (L % 4 == 0 && (reinterpret_cast<uintptr_t>(x) & 15) == 0) {  // slices of whole float4s
    const int64_t b4 = (L / 4) * p / P, e4 = (L / 4) * (p + 1) / P;
    const float4* x4 = reinterpret_cast<const float4*>(xg);
    for (int64_t i = b4 + threadIdx.x; i < e4; i += kThreads) {
      const float4 f = x4[i];
      const double d0 = double(f.x) - shift, d1 = double(f.y) - shift, d2 = double(f.z) - shift,
                   d3 = double(f.w) - shift;
      s += (d0 + d1) + (d2 + d3);
      ss += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
    }
  } else {
    for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
      const double d = double(xg[i]) - shift;
      s += d;
      ss += d * d;
    }
  }
  const double ts = block_sum(s, scratch);
  const double tss = block_sum(ss, scratch);
  if (threadIdx.x == 0) partials[int64_t(g) * (P + 1) + p] = make_double2(ts, tss);
  // the shift is kept here: with y == x, x[g * L] is overwritten while other blocks still need it
  if (threadIdx.x == 0 && p == 0) partials[int64_t(g) * (P + 1) + P] = make_double2(shift, 0.0);
}

// grid G, 128 threads: group g's P partial sums combined in a fixed tree order -> mean_rstd[g].
__global__ void group_finalize_kernel(const double2* partials, int P, int64_t L, float eps, double2* mean_rstd) {
  __shared__ double s_sum[128], s_sq[128];
  const int g = blockIdx.x, t = threadIdx.x;
  const double2* part = partials + int64_t(g) * (P + 1);
  const double2 v = t < P ? part[t] : make_double2(0.0, 0.0);
  s_sum[t] = v.x;
  s_sq[t] = v.y;
  __syncthreads();
  for (int w = 64; w > 0; w >>= 1) {
    if (t < w) s_sum[t] += s_sum[t + w], s_sq[t] += s_sq[t + w];
    __syncthreads();
  }
  if (t == 0) {
    const double mean_shifted = s_sum[0] / double(L);
    const double var = s_sq[0] / double(L) - mean_shifted * mean_shifted;
    mean_rstd[g] = make_double2(part[P].x + mean_shifted, 1.0 / sqrt(var + double(eps)));
  }
}

// Groups without values: (0, 1 / sqrt(eps)), as the CPU's.
__global__ void empty_group_stats_kernel(int groups, float eps, double2* mean_rstd) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < groups) mean_rstd[g] = make_double2(0.0, 1.0 / sqrt(double(eps)));
}

// grid (P, G): block p takes its slice of group g's run summaries (E entries: Cg rows x T runs, gemm::TileStat),
// each run's sums moved from its own shift k to the group's (the run's first k) in double; partials and shift laid
// out as group_stats_kernel's.
__global__ void group_stats_of_tiles_kernel(const gemm::TileStat* __restrict__ tiles, int64_t E,
                                            double2* __restrict__ partials) {
  __shared__ double scratch[kThreads / 32];
  const int g = blockIdx.y, P = gridDim.x, p = blockIdx.x;
  const gemm::TileStat* run = tiles + int64_t(g) * E;
  const double shift = run[0].k;
  double s = 0.0, ss = 0.0;
  for (int64_t i = E * p / P + threadIdx.x; i < E * (p + 1) / P; i += kThreads) {
    const gemm::TileStat a = run[i];
    const double n = a.n, d = double(a.k) - shift;
    s += fma(n, d, double(a.s));
    ss += fma(n * d, d, fma(2.0 * d, double(a.s), double(a.q)));
  }
  const double ts = block_sum(s, scratch);
  const double tss = block_sum(ss, scratch);
  if (threadIdx.x == 0) partials[int64_t(g) * (P + 1) + p] = make_double2(ts, tss);
  if (threadIdx.x == 0 && p == 0) partials[int64_t(g) * (P + 1) + P] = make_double2(shift, 0.0);
}

// grid (Q, C): block q normalises its slice of channel c (group c / Cg).
__global__ void group_apply_kernel(const float* __restrict__ x, GroupNormApply n, int64_t HW, float* y) {
  const int c = blockIdx.y;
  const ChannelAffine a = channel_affine(n, c);
  auto f = [&](float x) { return group_norm_value(a, n.silu, x); };
  const int Q = gridDim.x, q = blockIdx.x;
  const float* xc = x + int64_t(c) * HW;
  float* yc = y + int64_t(c) * HW;
  if (HW % 4 == 0) {
    const int64_t n4 = HW / 4, begin = n4 * q / Q, end = n4 * (q + 1) / Q;
    for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
      float4 v = reinterpret_cast<const float4*>(xc)[i];
      v.x = f(v.x), v.y = f(v.y), v.z = f(v.z), v.w = f(v.w);
      reinterpret_cast<float4*>(yc)[i] = v;
    }
  } else {
    const int64_t begin = HW * q / Q, end = HW * (q + 1) / Q;
    for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) yc[i] = f(xc[i]);
  }
}

}  // namespace

size_t group_norm_workspace_bytes(int C, int64_t HW, int groups) {
  return sizeof(double2) * size_t(groups) * (stats_blocks_per_group(int64_t(C / groups) * HW) + 2);
}

void launch_group_stats(const float* x, int C, int64_t HW, int groups, float eps, double2* mean_rstd, void* workspace,
                        cudaStream_t stream) {
  if (groups <= 0 || C % groups != 0) fail("group_norm (cuda): channels not divisible by groups");
  const int64_t L = int64_t(C / groups) * HW;
  if (L == 0) {  // no values: mean 0, variance 0
    empty_group_stats_kernel<<<(groups + 127) / 128, 128, 0, stream>>>(groups, eps, mean_rstd);
    return check_launch("group_norm (empty_group_stats_kernel)");
  }
  const int P = stats_blocks_per_group(L);
  auto* partials = static_cast<double2*>(workspace);
  group_stats_kernel<<<dim3(P, groups), kThreads, 0, stream>>>(x, L, partials);
  check_launch("group_norm (group_stats_kernel)");
  group_finalize_kernel<<<groups, 128, 0, stream>>>(partials, P, L, eps, mean_rstd);
  check_launch("group_norm (group_finalize_kernel)");
}

size_t group_stats_of_tiles_workspace_bytes(int C, int T, int groups) {
  return sizeof(double2) * size_t(groups) * (stats_blocks_per_group(int64_t(C / groups) * T) + 1);
}

void launch_group_stats_of_tiles(const gemm::TileStat* tiles, int C, int T, int64_t L, int groups, float eps,
                                 double2* mean_rstd, void* workspace, cudaStream_t stream) {
  if (groups <= 0 || C % groups != 0) fail("group_norm (cuda): channels not divisible by groups");
  if (T <= 0 || L <= 0) fail("group_norm (cuda): run summaries of an empty picture");
  const int64_t E = int64_t(C / groups) * T;
  const int P = stats_blocks_per_group(E);
  auto* partials = static_cast<double2*>(workspace);
  group_stats_of_tiles_kernel<<<dim3(P, groups), kThreads, 0, stream>>>(tiles, E, partials);
  check_launch("group_norm (group_stats_of_tiles_kernel)");
  group_finalize_kernel<<<groups, 128, 0, stream>>>(partials, P, L, eps, mean_rstd);
  check_launch("group_norm (group_finalize_kernel)");
}

GroupNormApply launch_group_norm_stats(const float* x, const __nv_bfloat16* gamma, const __nv_bfloat16* beta, int C,
                                       int64_t HW, int groups, float eps, bool silu, void* workspace,
                                       cudaStream_t stream) {
  if (groups <= 0 || C % groups != 0) fail("group_norm (cuda): channels not divisible by groups");
  // the groups' (mean, rstd) after the partials and shifts
  const int P = stats_blocks_per_group(int64_t(C / groups) * HW);
  double2* mean_rstd = static_cast<double2*>(workspace) + size_t(groups) * (P + 1);
  launch_group_stats(x, C, HW, groups, eps, mean_rstd, workspace, stream);
  return {mean_rstd, gamma, beta, C / groups, silu};
}

void launch_group_norm(const float* x, const __nv_bfloat16* gamma, const __nv_bfloat16* beta, int C, int64_t HW,
                       int groups, float eps, bool silu, float* y, void* workspace, cudaStream_t stream) {
  launch_group_norm_apply(x, launch_group_norm_stats(x, gamma, beta, C, HW, groups, eps, silu, workspace, stream), C,
                          HW, y, stream);
}

void launch_group_norm_apply(const float* x, const GroupNormApply& n, int C, int64_t HW, float* y,
                             cudaStream_t stream) {
  const int Q = int(std::clamp<int64_t>((HW + kThreads * 16 - 1) / (kThreads * 16), 1, 1024));
  group_apply_kernel<<<dim3(Q, C), kThreads, 0, stream>>>(x, n, HW, y);
  check_launch("group_norm (group_apply_kernel)");
}

}  // namespace tf::cuda
