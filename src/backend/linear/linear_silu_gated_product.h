#pragma once
// The MLP's two products and its gated product in one op: y = silu_gated_product(linear(x, w_gate),
// linear(x, w_up)), i.e. y = bf16(bf16(silu(bf16(x w_gate^T))) * bf16(x w_up^T)), each product with
// linear's numerics. Each backend gives the bytes of those three steps; on CUDA the weight-streaming
// kernel makes y in one launch where it applies, so gate and up are never stored.
#include "core/tensor.h"

namespace tf {

// x: BF16 [n, K]; w_gate, w_up: BF16 [N, K]; y: BF16 [n, N] (must not alias x).
void linear_silu_gated_product(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void linear_silu_gated_product(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, Tensor& y);
}  // namespace cpu
namespace cuda {
void linear_silu_gated_product(const Tensor& x, const Tensor& w_gate, const Tensor& w_up, Tensor& y);
}  // namespace cuda

}  // namespace tf
