#pragma once
// Residual add of bf16 activations in place: h = bf16(float(h) + float(d)) (one rounding).
#include "core/tensor.h"

namespace tf {

// h, d: BF16 of one shape; or h BF16 [rows, n] and d a product's F32 k-share sums [P, rows, n]
// (linear's), which enter as bf16(((d[0] + d[1]) + ...) + d[P - 1]), the product's own rounding.
// With gate (BF16 [n], h's last dimension, d BF16): the gated residual h = bf16(float(h) + float(d) * float(gate)),
// rounded once (as kohakumoss's fused op; the official eager ops round the gated product first), no fma.
void residual_add(Tensor& h, const Tensor& d, const Tensor* gate = nullptr);

// The d both residual adds take, as above; the error names op and what was expected.
void check_residual_delta(const char* op, const Tensor& h, const Tensor& d);

namespace cpu {
void residual_add(Tensor& h, const Tensor& d);
void residual_add_gated(Tensor& h, const Tensor& d, const Tensor& gate);
}  // namespace cpu
namespace cuda {
void residual_add(Tensor& h, const Tensor& d);
void residual_add_gated(Tensor& h, const Tensor& d, const Tensor& gate);
}  // namespace cuda

}  // namespace tf
