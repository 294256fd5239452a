#pragma once
// The VAE's ops on CPU tensors (the shared list in backend/vae_kernels.inc). Convolution is a
// blocked fp32 GEMM over output channels x output positions (see backend/conv/conv2d.h).
#include "backend/conv/conv2d.h"
#include "core/tensor.h"

namespace tf::cpu {

#include "backend/vae_kernels.inc"

}  // namespace tf::cpu
