#pragma once
// A convolution of a GroupNorm'd picture (the resnet block's norm -> SiLU -> conv):
// y = conv2d(group_norm(x)[, SiLU]) + bias (+ residual), the same bytes as group_norm followed by
// conv2d on every backend; a backend may fold the normalisation into the convolution's operand
// preparation so the normalised picture is never stored (CUDA, TMA convolution kernel).
#include "backend/conv/conv2d.h"
#include "core/tensor.h"

namespace tf {

// x: F32 [Ci, H, W]; gamma, beta: BF16 [Ci]; w, bias, g, y, residual as conv2d.
void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual = nullptr);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual);
}  // namespace cpu
namespace cuda {
void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual);
}  // namespace cuda

}  // namespace tf
