#pragma once
// A convolution of the nearest-2x-upsampled picture (the decoder's upsampler):
// y = conv2d(upsample_nearest2x(x)) + bias (+ residual). CPU: the same bytes as the two ops in turn.
// CUDA: 3x3 at padding 1 with input channels a multiple of 64 and outputs neither 96 nor at most 4 runs
// as four sub-pixel classes, 2x2 convolutions of x itself whose weights are fp32 sums of the 3x3 weights
// kept as bf16 hi + lo (about 16 bits, as the split inputs; cuda/kernels/conv/subpixel_weights.h,
// TF_CONV_UPSAMPLE); otherwise conv2d's bytes over the upsampled picture, read through the split.
#include "backend/conv/conv2d.h"
#include "core/tensor.h"

namespace tf {

// x: F32 [Ci, H, W]; w, bias, g, residual, y_stats as conv2d; y: F32 [Co, Ho, Wo] of the 2H x 2W input.
void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual = nullptr, GroupStats* y_stats = nullptr);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual, GroupStats* y_stats = nullptr);
}  // namespace cpu
namespace cuda {
void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual, GroupStats* y_stats = nullptr);
}  // namespace cuda

}  // namespace tf
