#pragma once
// GroupNorm's per-element map once the group statistics are known, shared by the normalising pass
// and the passes that fold it into their reads (the convolution's operand split): the affine in
// double rounded once to fp32 (as the CPU backend), then SiLU in fp32.
#include <cuda_bf16.h>

#include "backend/cuda/kernels/channels_f32.h"

namespace tf::cuda {

// Channel c's affine: y = (x - mean) * scale + shift, scale = rstd * gamma[c], shift = beta[c].
struct ChannelAffine {
  double mean, scale, shift;
};

__device__ __forceinline__ ChannelAffine channel_affine(const GroupNormApply& n, int c) {
  const double2 stats = n.mean_rstd[c / n.Cg];
  return {stats.x, stats.y * double(__bfloat162float(n.gamma[c])), double(__bfloat162float(n.beta[c]))};
}

__device__ __forceinline__ float group_norm_value(const ChannelAffine& a, bool silu, float x) {
  const float v = float(__dadd_rn(__dmul_rn(__dsub_rn(double(x), a.mean), a.scale), a.shift));
  return silu ? __fdiv_rn(v, __fadd_rn(1.f, expf(-v))) : v;
}

}  // namespace tf::cuda
