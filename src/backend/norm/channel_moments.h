#pragma once
// Per-channel moments of a channel-major picture, the statistics a GroupNorm needs: m[c] = (sum of
// x[c, :], sum of x[c, :]^2), F64 [C, 2]. A convolution may write its output's (conv2d's y_moments) so the
// GroupNorm that reads the picture next (group_norm's x_moments) makes no pass over it.
// Numerics: sums in double of the fp32 values (each square exact), every backend in a fixed order, so the
// same bytes every run; the order (and so the last bits) differs between backends and kernels.
// CPU: 8 interleaved lanes a channel, then the lanes in order. CUDA: per thread, then a fixed tree; from a
// convolution's store warps, each tile's row by one lane in fp32 shifted by the row's first value (four
// chains of 32: the sums of squared deviations within ~32 eps of their own size, not of x^2's), then
// unshifted in double and the tiles summed in a fixed tree.
#include "core/tensor.h"

namespace tf {

// x: F32 [C, ...]; m: F64 [C, 2] on x's device.
void channel_moments(const Tensor& x, Tensor& m);
// The checks of a moments argument of C channels (conv2d's y_moments, group_norm's x_moments); throws
// naming op and arg.
void check_channel_moments(const char* op, const char* arg, const Tensor& m, int64_t C);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void channel_moments(const Tensor& x, Tensor& m);
}  // namespace cpu
namespace cuda {
void channel_moments(const Tensor& x, Tensor& m);
}  // namespace cuda

}  // namespace tf
