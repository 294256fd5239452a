#pragma once
// Adaptive modulation after a norm (DiT's adaLN), each step one rounding as torch's bf16 ops:
//   y = bf16(bf16(float(x) * float(bf16(1 + float(scale)))) + float(shift))
// (1 + scale is rounded to bf16 before the product, as the reference's bf16 tensors do).
#include "core/tensor.h"

namespace tf {

// x, y: BF16 [rows, d] (y may alias x); shift, scale: BF16 [d], one vector for every row (samples
// packed into one pass share their timestep, so their modulation).
void modulate(const Tensor& x, const Tensor& shift, const Tensor& scale, Tensor& y);

namespace cpu {
void modulate(const Tensor& x, const Tensor& shift, const Tensor& scale, Tensor& y);
}  // namespace cpu
namespace cuda {
void modulate(const Tensor& x, const Tensor& shift, const Tensor& scale, Tensor& y);
}  // namespace cuda

}  // namespace tf
