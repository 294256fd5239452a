#include "backend/conv/upsample_nearest2x_conv2d.h"

#include "backend/conv/conv2d.h"
#include "backend/device/dispatch.h"

namespace tf {

void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual, GroupStats* y_stats) {
  const char* op = "upsample_nearest2x_conv2d";
  expect_dtype(op, "x", x, DType::F32);
  require(x.rank() == 3, std::string(op) + ": x is " + x.describe() + ", expected [Ci, H, W]");
  // conv2d's checks on the upsampled picture's shape (x's bytes, only its shape is read).
  const Tensor up{nullptr, x.data, DType::F32, {x.dim(0), 2 * x.dim(1), 2 * x.dim(2)}, x.device};
  check_conv2d(op, up, w, bias, g, y, residual, y_stats);
  const Device d = conv2d_device(op, {&x, &w, &bias, &y}, residual);
  run_kernel(op, d, cpu::upsample_nearest2x_conv2d, TF_CUDA_KERNEL(cuda::upsample_nearest2x_conv2d), x, w, bias, g, y,
             residual, y_stats);
}

}  // namespace tf
