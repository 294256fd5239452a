// Per-channel moments (sum, sum of squares) in double: from a picture in one pass, or from the
// per-tile shifted fp32 sums a convolution's store warps wrote. Each in a fixed order, so the same bytes
// every run whatever the blocks' placement.
#include <algorithm>

#include "backend/cuda/kernels/channels_f32.h"
#include "backend/cuda/runtime/launch_check.h"

namespace tf::cuda {

namespace {

constexpr int kThreads = 256;

// The block's (s, ss) summed in a fixed tree: each warp's butterfly, then the warps in order.
__device__ double2 block_sum2(double s, double ss) {
  __shared__ double2 warp_sums[kThreads / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    s += __shfl_xor_sync(0xffffffffu, s, o);
    ss += __shfl_xor_sync(0xffffffffu, ss, o);
  }
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = make_double2(s, ss);
  __syncthreads();
  double2 t = make_double2(0.0, 0.0);
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) t.x += warp_sums[w].x, t.y += warp_sums[w].y;
  return t;  // valid in thread 0
}

// The slices a channel's values are summed in, each by one block (up to ~8k blocks: a group statistics
// pass's parallelism).
int slices_per_channel(int C, int64_t HW) {
  const int64_t per_block = int64_t(kThreads) * 16;
  return int(std::clamp<int64_t>((HW + per_block - 1) / per_block, 1, std::max<int64_t>(1, 8192 / C)));
}

// grid (P, C): block p sums slice p of channel c's HW values (whole float4s where aligned), thread t its
// elements t, t + 256, ...; partials[c, p].
__global__ void channel_moments_kernel(const float* __restrict__ x, int64_t HW, double2* __restrict__ partials) {
  const int P = gridDim.x, p = blockIdx.x;
  const float* xc = x + int64_t(blockIdx.y) * HW;
  double s = 0.0, ss = 0.0;
  auto add = [&](float v) {
    const double d = v;
    s += d;
    ss += d * d;
  };
  if (HW % 4 == 0 && (reinterpret_cast<uintptr_t>(x) & 15) == 0) {
    const int64_t n4 = HW / 4, end = n4 * (p + 1) / P;
    for (int64_t i = n4 * p / P + threadIdx.x; i < end; i += kThreads) {
      const float4 f = reinterpret_cast<const float4*>(xc)[i];
      add(f.x), add(f.y), add(f.z), add(f.w);
    }
  } else {
    const int64_t end = HW * (p + 1) / P;
    for (int64_t i = HW * p / P + threadIdx.x; i < end; i += kThreads) add(xc[i]);
  }
  const double2 t = block_sum2(s, ss);
  if (threadIdx.x == 0) partials[int64_t(blockIdx.y) * P + p] = t;
}

// grid C: block c sums channel c's P slices' partial sums, thread t the slices t, t + 256, ...
__global__ void slice_sums_kernel(const double2* __restrict__ partials, int P, double2* __restrict__ out) {
  const double2* row = partials + int64_t(blockIdx.x) * P;
  double s = 0.0, ss = 0.0;
  for (int i = threadIdx.x; i < P; i += kThreads) s += row[i].x, ss += row[i].y;
  const double2 t = block_sum2(s, ss);
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}

// grid M: block m sums row m's slots (x0, s, ss, n) partials unshifted in double (sum: n x0 + s; sum of squares:
// n x0^2 + 2 x0 s + ss), thread t the slots t, t + 256, ...
__global__ void moment_slots_kernel(const float4* __restrict__ partials, int slots, double2* __restrict__ out) {
  const float4* row = partials + int64_t(blockIdx.x) * slots;
  double s = 0.0, ss = 0.0;
  for (int i = threadIdx.x; i < slots; i += kThreads) {
    const float4 p = row[i];
    const double x0 = p.x, n = p.w;
    s += fma(n, x0, double(p.y));
    ss += fma(n * x0, x0, fma(2.0 * x0, double(p.y), double(p.z)));
  }
  const double2 t = block_sum2(s, ss);
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}

}  // namespace

size_t channel_moments_workspace_bytes(int C, int64_t HW) {
  return C > 0 ? sizeof(double2) * size_t(C) * slices_per_channel(C, HW) : 0;
}

void launch_channel_moments(const float* x, int C, int64_t HW, double2* moments, void* workspace,
                            cudaStream_t stream) {
  if (C == 0) return;
  const int P = slices_per_channel(C, HW);
  auto* partials = static_cast<double2*>(workspace);
  channel_moments_kernel<<<dim3(unsigned(P), unsigned(C)), kThreads, 0, stream>>>(x, HW, partials);
  check_launch("channel_moments_kernel");
  slice_sums_kernel<<<unsigned(C), kThreads, 0, stream>>>(partials, P, moments);
  check_launch("slice_sums_kernel");
}

void launch_moment_slots_sum(const float4* partials, int M, int slots, double2* moments, cudaStream_t stream) {
  if (M == 0) return;
  moment_slots_kernel<<<unsigned(M), kThreads, 0, stream>>>(partials, slots, moments);
  check_launch("moment_slots_kernel");
}

}  // namespace tf::cuda
