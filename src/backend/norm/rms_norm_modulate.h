#pragma once
// RMSNorm with a plain weight, then adaptive modulation (DiT's adaLN after its norm), in fp32 and rounded
// once (as kohakumoss's fused op; the official eager ops round after each of the five steps, further
// from float32):
//   r = 1 / sqrt(sum(x32^2) / d + eps);  y = bf16(((x32 * r) * w) * (1 + scale) + shift)   (no fma)
#include "core/tensor.h"

namespace tf {

// x, y: BF16 [rows, d] (y may alias x); w, shift, scale: BF16 [d].
void rms_norm_modulate(const Tensor& x, const Tensor& w, float eps, const Tensor& shift, const Tensor& scale, Tensor& y);

// The gated residual add fused ahead of the modulated norm; the same roundings as the two ops apart:
//   h = bf16(float(h) + float(d) * float(gate))  (in place, residual_add's gated form);  y = rms_norm_modulate(h, w)
// h, d, y: BF16 [rows, d] (y must not alias h or d); gate, w, shift, scale: BF16 [d].
void residual_add_rms_norm_modulate(Tensor& h, const Tensor& d, const Tensor& gate, const Tensor& w, float eps,
                                    const Tensor& shift, const Tensor& scale, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void rms_norm_modulate(const Tensor& x, const Tensor& w, float eps, const Tensor& shift, const Tensor& scale, Tensor& y);
void residual_add_rms_norm_modulate(Tensor& h, const Tensor& d, const Tensor& gate, const Tensor& w, float eps,
                                    const Tensor& shift, const Tensor& scale, Tensor& y);
}  // namespace cpu
namespace cuda {
void rms_norm_modulate(const Tensor& x, const Tensor& w, float eps, const Tensor& shift, const Tensor& scale, Tensor& y);
void residual_add_rms_norm_modulate(Tensor& h, const Tensor& d, const Tensor& gate, const Tensor& w, float eps,
                                    const Tensor& shift, const Tensor& scale, Tensor& y);
}  // namespace cuda

}  // namespace tf
