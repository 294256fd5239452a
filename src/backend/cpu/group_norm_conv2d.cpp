// The CPU has nothing to fold: the normalised picture is stored, then convolved.
#include "backend/conv/conv2d.h"
#include "backend/conv/group_norm_conv2d.h"
#include "backend/norm/group_norm.h"

namespace tf::cpu {

void group_norm_conv2d(const Tensor& x, const Tensor& gamma, const Tensor& beta, int groups, float eps, bool silu,
                       const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
                       const Tensor* residual, const Conv1x1OfInput* beside, const GroupStats* x_stats,
                       GroupStats* y_stats) {
  Tensor t = empty(DType::F32, x.shape, Device::CPU);
  cpu::group_norm(x, gamma, beta, groups, eps, silu, t, x_stats);
  cpu::conv2d(t, w, bias, g, y, residual, y_stats);
  if (beside) cpu::conv2d(x, *beside->w, *beside->bias, kConvPointwise, *beside->y, nullptr);
}

}  // namespace tf::cpu
