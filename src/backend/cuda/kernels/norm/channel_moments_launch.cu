// Channel moments (channel_moments.h) on CUDA: per-block fp64 sums of a channel's slices, or a convolution
// epilogue's per-tile sums, combined per channel in a fixed order; and a GroupNorm's statistics from them.
#include <algorithm>

#include "backend/cuda/runtime/launch_check.h"
#include "backend/cuda/kernels/channels_f32.h"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;

int moment_blocks_per_channel(int64_t HW) {
  const int64_t per_block = int64_t(kThreads) * 16;
  return int(std::clamp<int64_t>((HW + per_block - 1) / per_block, 1, 64));
}

// (sum, sum of squares) of the block's threads, combined in a fixed order; valid in thread 0.
__device__ double2 block_moments(double s, double q) {
  __shared__ double2 scratch[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) {
    s = __dadd_rn(s, __shfl_down_sync(0xffffffffu, s, o));
    q = __dadd_rn(q, __shfl_down_sync(0xffffffffu, q, o));
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = make_double2(s, q);
  __syncthreads();
  double2 t = make_double2(0.0, 0.0);
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) t = make_double2(__dadd_rn(t.x, scratch[w].x), __dadd_rn(t.y, scratch[w].y));
  return t;
}

// grid (P, C): block p's slice [p HW / P, (p + 1) HW / P) of channel c -> partials[c * P + p].
__global__ void channel_moment_partials(const float* __restrict__ x, int64_t HW, double2* __restrict__ partials) {
  const int c = blockIdx.y, P = gridDim.x, p = blockIdx.x;
  const float* xc = x + int64_t(c) * HW;
  double s = 0.0, q = 0.0;
  for (int64_t i = HW * p / P + threadIdx.x; i < HW * (p + 1) / P; i += kThreads) {
    const double d = double(xc[i]);
    s = __dadd_rn(s, d);
    q = __dadd_rn(q, __dmul_rn(d, d));
  }
  const double2 t = block_moments(s, q);
  if (threadIdx.x == 0) partials[int64_t(c) * P + p] = t;
}

// grid C: m[c] = channel c's P partials, thread t taking t, t + 256, ..., then the block in order.
__global__ void reduce_moment_partials(const double2* __restrict__ partials, int P, double2* __restrict__ m) {
  const double2* pc = partials + int64_t(blockIdx.x) * P;
  double s = 0.0, q = 0.0;
  for (int i = threadIdx.x; i < P; i += kThreads) s = __dadd_rn(s, pc[i].x), q = __dadd_rn(q, pc[i].y);
  const double2 t = block_moments(s, q);
  if (threadIdx.x == 0) m[blockIdx.x] = t;
}

// grid 1, one thread a group: (mean, rstd) from the group's channel moments in order, as the CPU's
// group_stats_from_moments, at GroupNormApply's place with P = 0.
__global__ void group_stats_from_moments(const double2* __restrict__ m, int groups, int Cg, double n, float eps,
                                         double2* __restrict__ stats) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  double s = 0.0, q = 0.0;
  for (int c = g * Cg; c < (g + 1) * Cg; ++c) s = __dadd_rn(s, m[c].x), q = __dadd_rn(q, m[c].y);
  const double mean = n > 0 ? __ddiv_rn(s, n) : 0.0;
  const double var = n > 0 ? fmax(__dsub_rn(__ddiv_rn(q, n), __dmul_rn(mean, mean)), 0.0) : 0.0;
  stats[2 * g + 1] = make_double2(mean, __ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(var, double(eps)))));
}

}  // namespace

size_t channel_moments_workspace_bytes(int C, int64_t HW) {
  return sizeof(double2) * size_t(C) * moment_blocks_per_channel(HW);
}

void launch_channel_moments(const float* x, int C, int64_t HW, double2* m, void* workspace, cudaStream_t stream) {
  if (C == 0) return;
  const int P = moment_blocks_per_channel(HW);
  auto* partials = static_cast<double2*>(workspace);
  channel_moment_partials<<<dim3(P, C), kThreads, 0, stream>>>(x, HW, partials);
  check_launch("channel_moments (channel_moment_partials)");
  launch_reduce_moment_partials(partials, C, P, m, stream);
}

void launch_reduce_moment_partials(const double2* partials, int C, int P, double2* m, cudaStream_t stream) {
  if (C == 0) return;
  reduce_moment_partials<<<C, kThreads, 0, stream>>>(partials, P, m);
  check_launch("channel_moments (reduce_moment_partials)");
}

size_t group_norm_moments_workspace_bytes(int groups) { return sizeof(double2) * 2 * size_t(groups); }

GroupNormApply launch_group_norm_stats_from_moments(const double2* m, const __nv_bfloat16* gamma,
                                                    const __nv_bfloat16* beta, int C, int64_t HW, int groups,
                                                    float eps, bool silu, void* workspace, cudaStream_t stream) {
  if (groups <= 0 || C % groups != 0) fail("group_norm (cuda): channels not divisible by groups");
  const int Cg = C / groups;
  auto* stats = static_cast<double2*>(workspace);
  group_stats_from_moments<<<(groups + 127) / 128, 128, 0, stream>>>(m, groups, Cg, double(int64_t(Cg) * HW), eps,
                                                                      stats);
  check_launch("group_norm (group_stats_from_moments)");
  return {stats, 0, gamma, beta, Cg, silu};
}

}  // namespace tf::cuda
