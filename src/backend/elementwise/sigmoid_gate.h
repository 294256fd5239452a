#pragma once
// Attention output gate: y = bf16(float(x) * float(bf16(sigmoid(float(gate))))) (two roundings,
// as torch's attn_output * torch.sigmoid(gate) on bf16 tensors).
#include "core/tensor.h"

namespace tf {

// x, gate, y: BF16 of one shape (y may alias x).
void sigmoid_gate(const Tensor& x, const Tensor& gate, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void sigmoid_gate(const Tensor& x, const Tensor& gate, Tensor& y);
}  // namespace cpu
namespace cuda {
void sigmoid_gate(const Tensor& x, const Tensor& gate, Tensor& y);
}  // namespace cuda

}  // namespace tf
