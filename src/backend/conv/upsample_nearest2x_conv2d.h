#pragma once
// A convolution of the nearest-2x-upsampled picture (the decoder's upsampler):
// y = conv2d(upsample_nearest2x(x)) + bias (+ residual), the same bytes as the two ops in turn on
// every backend; a backend may read x through the upsample instead of storing the 4x picture
// (CUDA: the convolution's operand split reads it so).
#include "backend/conv/conv2d.h"
#include "core/tensor.h"

namespace tf {

// x: F32 [Ci, H, W]; w, bias, g, residual as conv2d; y: F32 [Co, Ho, Wo] of the 2H x 2W input.
void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual = nullptr);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual);
}  // namespace cpu
namespace cuda {
void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual);
}  // namespace cuda

}  // namespace tf
