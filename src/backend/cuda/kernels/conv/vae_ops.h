#pragma once
// The VAE's ops on CUDA tensors (the shared list in backend/vae_kernels.inc). Work is queued on the
// runtime's stream.
#include "backend/conv/conv2d.h"
#include "core/tensor.h"

namespace tf::cuda {

#include "backend/vae_kernels.inc"

}  // namespace tf::cuda
