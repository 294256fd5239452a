#pragma once
// An MLP's two products and their gated product in one op, each product with linear's numerics:
//   silu: y = silu_gated_product(linear(x, w_gate), linear(x, w_up)) = bf16(bf16(silu(g)) * u)
//   situ: y = situ_gated_product(linear(x, w_up), linear(x, w_gate))  (SiTU-GLU, its header's steps)
// Each backend gives the bytes of those three steps; on CUDA one launch makes y where a kernel
// applies (the weight-streaming kernel for silu up to 128 rows, the wgmma kernel's situ epilogue
// above 128 rows under TF_LINEAR_EPILOGUE=fused), so the two products are never stored.
#include "core/tensor.h"

namespace tf {

enum class GatedActivation { silu, situ };

// x: BF16 [n, K]; w_gate, w_up: BF16 [N, K]; y: BF16 [n, N] (must not alias x).
void linear_gated_product(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, GatedActivation act, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void linear_gated_product(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, GatedActivation act, Tensor& y);
}  // namespace cpu
namespace cuda {
void linear_gated_product(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, GatedActivation act, Tensor& y);
}  // namespace cuda

}  // namespace tf
