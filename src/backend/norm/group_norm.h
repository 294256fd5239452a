#pragma once
// Group normalisation of one channel-major picture (torch's GroupNorm, affine), with an optional
// fused SiLU: y = silu?((x - mean_g) / sqrt(var_g + eps) * gamma[c] + beta[c]).
// Groups are `groups` runs of C/groups consecutive channels; statistics over (C/groups)*H*W values,
// biased variance. Numerics (CPU): mean and variance are two passes in fp64 (the variance of
// x - mean); the affine map is evaluated in fp64 and rounded once to fp32; SiLU is then
// y / (1 + exp(-y)) in fp32.
#include "backend/norm/group_stats.h"
#include "core/tensor.h"

namespace tf {

// x: F32 [C, H, W] (or [C, N]); gamma, beta: BF16 [C]; y: F32 like x (may alias x). x_stats: x's statistics
// (groups and eps as given here) taken by the op that wrote x, or null: computed here.
void group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                Tensor& y, const GroupStats* x_stats = nullptr);
// The checks of given statistics against a GroupNorm's groups, eps and picture; throws naming op.
void check_given_group_stats(const char* op, const GroupStats& s, int groups, float eps, const Tensor& x);
// The dispatcher's checks of group_norm's arguments (y: the normalised picture's shape and dtype);
// throws naming op.
void check_group_norm(const char* op, const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps,
                      const Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                Tensor& y, const GroupStats* x_stats);
}  // namespace cpu
namespace cuda {
void group_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                Tensor& y, const GroupStats* x_stats);
}  // namespace cuda

}  // namespace tf
