#include "backend/conv/group_norm_conv2d.h"

#include "backend/device/dispatch.h"
#include "backend/norm/group_norm.h"

namespace tf {

void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual) {
  const char* op = "group_norm_conv2d";
  check_group_norm(op, x, gamma, beta, groups, eps, x);
  check_conv2d(op, x, w, bias, g, y, residual);
  const Device d = conv2d_device(op, {&x, &gamma, &beta, &w, &bias, &y}, residual);
  run_kernel(op, d, cpu::group_norm_conv2d, TF_CUDA_KERNEL(cuda::group_norm_conv2d), x, gamma, beta, groups, eps, silu,
             w, bias, g, y, residual);
}

}  // namespace tf
