#pragma once
// Zero-centred RMSNorm (Qwen3.5's, weight stored as w with the scale 1 + w), per row of d values:
//   x32 = float(x); r = 1 / sqrt(sum(x32^2) / d + eps)   (fp32 sum, fixed order)
//   y = bf16((x32 * r) * (1 + float(w)))                  (fp32 products; the only rounding)
// Per-head norms (q_norm, k_norm) view [tokens * heads, head_dim].
#include "core/tensor.h"

namespace tf {

// x: BF16 [rows, d]; w: BF16 or F32 [d]; y: BF16 [rows, d] (may alias x).
void rms_norm_zero_centred(const Tensor& x, const Tensor& w, float eps, Tensor& y);

// The residual add fused ahead of the norm; the same roundings as the two ops apart:
//   h = bf16(float(h) + float(d))  (in place)
//   y = rms_norm_zero_centred(h, w)
// h, y: BF16 [rows, d]; d: BF16 [rows, d] or a product's F32 k-share sums (backend/elementwise/residual_add.h);
// y must not alias h or d.
void residual_add_rms_norm_zero_centred(Tensor& h, const Tensor& d, const Tensor& w, float eps, Tensor& y);

}  // namespace tf
