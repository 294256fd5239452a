// The CPU stores the upsampled picture, then convolves it.
#include "backend/conv/conv2d.h"
#include "backend/conv/upsample_nearest2x.h"
#include "backend/conv/upsample_nearest2x_conv2d.h"

namespace tf::cpu {

void upsample_nearest2x_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g,
                               Tensor& y, const Tensor* residual, GroupStats* y_stats) {
  Tensor u = empty(DType::F32, {x.dim(0), 2 * x.dim(1), 2 * x.dim(2)}, Device::CPU);
  cpu::upsample_nearest2x(x, u);
  cpu::conv2d(u, w, bias, g, y, residual, y_stats);
}

}  // namespace tf::cpu
