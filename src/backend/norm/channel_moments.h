#pragma once
// Per-channel moments of a channel-major picture, the statistics a GroupNorm of it needs, so the op that
// writes a picture can hand them to the op that normalises it (on CUDA the convolutions' epilogues sum
// their own outputs, and the picture is not read again for its statistics):
//   m[c] = (sum_i x[c, i], sum_i x[c, i]^2), F64 [C, 2].
// Numerics: each term is exact in fp64 (an fp32 value or its square); the sums are fp64 in a fixed order
// on each backend (CPU: 8 interleaved lanes a channel; CUDA: per-tile sums, then the tiles in order), so
// the backends agree to a few fp64 ulps and each repeats its bytes.
// A GroupNorm from moments (group_norm's x_moments): mean = S / n and var = max(Q / n - mean^2, 0) in fp64
// over the group's channels in order: one pass without a shift, the two-pass variance's fp32 value unless
// |mean| is beyond ~1e4 standard deviations.
#include "core/tensor.h"

namespace tf {

// x: F32 [C, ...]; m: F64 [C, 2], on x's device.
void channel_moments(const Tensor& x, Tensor& m);
// Checks that m is F64 [C, 2] on `device`; throws naming op and arg.
void check_channel_moments(const char* op, const char* arg, const Tensor& m, int64_t C);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void channel_moments(const Tensor& x, Tensor& m);
// A group's (mean, rstd) from channel moments m (F64 [C, 2]), as the header states.
void group_stats_from_moments(const Tensor& m, int groups, int64_t per_channel, float eps, double* mean,
                              double* rstd);
}  // namespace cpu
namespace cuda {
void channel_moments(const Tensor& x, Tensor& m);
}  // namespace cuda

}  // namespace tf
