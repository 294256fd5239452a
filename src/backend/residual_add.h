#pragma once
// Residual add of bf16 activations in place: h = bf16(float(h) + float(d)) (one rounding).
#include "core/tensor.h"

namespace tf {

// h, d: BF16 of one shape.
void residual_add(Tensor& h, const Tensor& d);

}  // namespace tf
