#pragma once
// RMSNorm with a plain weight, then adaptive modulation (DiT's adaLN after its norm), the bytes of
// rms_norm (NormWeight::plain) then modulate in turn:
//   n = bf16(bf16(x32 * r) * w);  y = bf16(bf16(n * bf16(1 + scale)) + shift)
// CUDA does both in one pass over the rows.
#include "core/tensor.h"

namespace tf {

// x, y: BF16 [rows, d] (y may alias x); w, shift, scale: BF16 [d].
void rms_norm_modulate(const Tensor& x, const Tensor& w, float eps, const Tensor& shift, const Tensor& scale, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void rms_norm_modulate(const Tensor& x, const Tensor& w, float eps, const Tensor& shift, const Tensor& scale, Tensor& y);
}  // namespace cpu
namespace cuda {
void rms_norm_modulate(const Tensor& x, const Tensor& w, float eps, const Tensor& shift, const Tensor& scale, Tensor& y);
}  // namespace cuda

}  // namespace tf
