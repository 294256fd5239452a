#pragma once
// Elementwise sum of two F32 tensors of one shape: y = a + b (one fp32 rounding). y may alias a or b.
#include "core/tensor.h"

namespace tf {

void add(const Tensor& a, const Tensor& b, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void add(const Tensor& a, const Tensor& b, Tensor& y);
}  // namespace cpu
namespace cuda {
void add(const Tensor& a, const Tensor& b, Tensor& y);
}  // namespace cuda

}  // namespace tf
