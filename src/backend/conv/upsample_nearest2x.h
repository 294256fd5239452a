#pragma once
// Nearest-neighbour 2x upsampling (torch's interpolate(scale_factor=2, mode="nearest")):
// y[c, i, j] = x[c, i / 2, j / 2]. Exact (a copy).
#include "core/tensor.h"

namespace tf {

// x: F32 [C, H, W]; y: F32 [C, 2H, 2W].
void upsample_nearest2x(const Tensor& x, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void upsample_nearest2x(const Tensor& x, Tensor& y);
}  // namespace cpu
namespace cuda {
void upsample_nearest2x(const Tensor& x, Tensor& y);
}  // namespace cuda

}  // namespace tf
