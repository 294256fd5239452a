#include "backend/conv/group_norm_conv2d.h"

#include "backend/device/dispatch.h"
#include "backend/norm/group_norm.h"

namespace tf {

void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual, const Conv1x1OfInput* beside, const GroupStats* x_stats,
                       GroupStats* y_stats) {
  const char* op = "group_norm_conv2d";
  check_group_norm(op, x, gamma, beta, groups, eps, x);
  check_conv2d(op, x, w, bias, g, y, residual, y_stats);
  if (x_stats) check_given_group_stats(op, *x_stats, groups, eps, x);
  if (beside) {
    if (!beside->w || !beside->bias || !beside->y) fail("group_norm_conv2d: the 1x1 convolution beside needs w, bias and y");
    if (beside->w->rank() != 4 || beside->w->dim(2) != 1 || beside->w->dim(3) != 1)
      fail("group_norm_conv2d: the convolution beside must be 1x1, got w " + beside->w->describe());
    if (beside->y->data == y.data && y.numel() > 0) fail("group_norm_conv2d: the convolution beside writes y's memory");
    check_conv2d(op, x, *beside->w, *beside->bias, kConvPointwise, *beside->y, nullptr);
  }
  const Device d = beside ? conv2d_device(op, {&x, &gamma, &beta, &w, &bias, &y, beside->w, beside->bias, beside->y},
                                          residual)
                          : conv2d_device(op, {&x, &gamma, &beta, &w, &bias, &y}, residual);
  run_kernel(op, d, cpu::group_norm_conv2d, TF_CUDA_KERNEL(cuda::group_norm_conv2d), x, gamma, beta, groups, eps, silu,
             w, bias, g, y, residual, beside, x_stats, y_stats);
}

}  // namespace tf
