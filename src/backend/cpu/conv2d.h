#pragma once
// CPU convolution: a blocked fp32 GEMM over output channels x output positions (see backend/conv2d.h).
#include "backend/conv2d.h"

namespace tf::cpu {
void conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeometry& g, Tensor& y,
            const Tensor* residual);
}
