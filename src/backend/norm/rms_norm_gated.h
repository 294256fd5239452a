#pragma once
// Gated RMSNorm of the DeltaNet output (Qwen3_5RMSNormGated), per row of d values:
//   x32 = float(x); n = bf16(x32 * (1 / sqrt(sum(x32^2) / d + eps)))   (fp32 sum in order)
//   t = w * n: bf16(float(w) * float(n)) when w is BF16; exact fp32 product when w is F32
//   y = bf16(t * silu(float(z)))                                          (fp32 silu and product)
#include "core/tensor.h"

namespace tf {

// x, z: BF16 [rows, d]; w: BF16 or F32 [d] (plain w, not 1 + w); y: BF16 [rows, d].
void rms_norm_gated(const Tensor& x, const Tensor& z, const Tensor& w, float eps, Tensor& y);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void rms_norm_gated(const Tensor& x, const Tensor& z, const Tensor& w, float eps, Tensor& y);
}  // namespace cpu
namespace cuda {
void rms_norm_gated(const Tensor& x, const Tensor& z, const Tensor& w, float eps, Tensor& y);
}  // namespace cuda

}  // namespace tf
