#pragma once
// A convolution of a GroupNorm'd picture (the resnet block's norm -> SiLU -> conv):
// y = conv2d(group_norm(x)[, SiLU]) + bias (+ residual), the same bytes as group_norm followed by
// conv2d on every backend; a backend may fold the normalisation into the convolution's operand
// preparation so the normalised picture is never stored (CUDA, TMA convolution kernel).
#include "backend/conv/conv2d.h"
#include "core/tensor.h"

namespace tf {

// A 1x1 stride-1 convolution of x itself, not normalised, taken beside the main one (a resnet's
// shortcut): y = conv2d(x, w) + bias, conv2d's bytes; a backend may split x for both from one read.
struct Conv1x1OfInput {
  const Tensor* w;
  const Tensor* bias;
  Tensor* y;
};

// x: F32 [Ci, H, W]; gamma, beta: BF16 [Ci]; w, bias, g, y, residual, y_stats as conv2d; x_stats as group_norm.
void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual = nullptr, const Conv1x1OfInput* beside = nullptr,
                       const GroupStats* x_stats = nullptr, GroupStats* y_stats = nullptr);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual, const Conv1x1OfInput* beside, const GroupStats* x_stats = nullptr,
                       GroupStats* y_stats = nullptr);
}  // namespace cpu
namespace cuda {
void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual, const Conv1x1OfInput* beside, const GroupStats* x_stats = nullptr,
                       GroupStats* y_stats = nullptr);
}  // namespace cuda

}  // namespace tf
