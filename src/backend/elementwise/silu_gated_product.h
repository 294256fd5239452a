#pragma once
// The MLP's gated product: y = bf16(bf16(silu(float(gate))) * float(up)), silu(x) = x / (1 + exp(-x)).
// Two roundings, as torch's act_fn(gate) * up on bf16 tensors.
#include "core/tensor.h"

namespace tf {

// gate, up, y: BF16 of one shape (y may alias either).
void silu_gated_product(const Tensor& gate, const Tensor& up, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void silu_gated_product(const Tensor& gate, const Tensor& up, Tensor& y);
}  // namespace cpu
namespace cuda {
void silu_gated_product(const Tensor& gate, const Tensor& up, Tensor& y);
}  // namespace cuda

}  // namespace tf
