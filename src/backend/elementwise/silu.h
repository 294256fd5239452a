#pragma once
// SiLU on bf16 tensors as torch computes it: y = bf16(silu(float(x))), silu(x) = x / (1 + exp(-x)).
#include "core/tensor.h"

namespace tf {

// x, y: BF16 of one shape (y may alias x).
void silu(const Tensor& x, Tensor& y);

namespace cpu {
void silu(const Tensor& x, Tensor& y);
}  // namespace cpu
namespace cuda {
void silu(const Tensor& x, Tensor& y);
}  // namespace cuda

}  // namespace tf
