#pragma once
// GroupNorm's statistics of a channel-major picture, per group: (mean, 1 / sqrt(var + eps)) in double, the
// variance biased (group_norm.h's groups). An op that writes a picture may take them as it writes it
// (`GroupStats* y_stats`) for the GroupNorm that reads the picture next (`const GroupStats* x_stats`), so
// that GroupNorm makes no pass of its own over it.
// Numerics: CPU: group_norm's own (two passes in fp64), so a GroupNorm given them has group_norm's bytes.
// CUDA: TF_GROUP_STATS=rows (row tiles) or all (halo tiles too), where those write the picture: each channel's
// runs of positions (16 a halo tile's warp, 128 a row tile) summed by the consumers in fp32, shifted by the run's
// first value (within fp32 rounding of the spread), then combined in fp64 in a fixed order; otherwise (`pass`, or
// other kernels) group_norm's own pass (sums in fp64 shifted by the group's first value). They round differently,
// so the bytes may differ.
#include "core/tensor.h"

namespace tf {

struct GroupStats {
  int groups = 0;
  float eps = 0.f;
  Tensor mean_rstd;  // F64 [groups, 2] on the picture's device
};

// Room for the statistics of `groups` groups on device d, filled by the op given it.
GroupStats make_group_stats(int groups, float eps, Device d);
// The checks of statistics for a picture of `channels` channels on device d; throws naming op and arg.
void check_group_stats(const char* op, const char* arg, const GroupStats& s, int64_t channels, Device d);
// s = the statistics of x (F32 [C, H, W] or [C, N]) with s.groups and s.eps.
void group_stats(const Tensor& x, GroupStats& s);

namespace cpu {
void group_stats(const Tensor& x, GroupStats& s);
// mean[g], rstd[g] of x's groups as group_norm takes them.
void group_stats_f64(const Tensor& x, int groups, float eps, double* mean, double* rstd);
}  // namespace cpu
namespace cuda {
void group_stats(const Tensor& x, GroupStats& s);
}  // namespace cuda

}  // namespace tf
