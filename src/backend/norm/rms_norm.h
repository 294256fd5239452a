#pragma once
// RMSNorm per row of d values, r = 1 / sqrt(sum(x32^2) / d + eps) (fp32 sum, fixed order), x32 = float(x),
// with the weight applied as one of two references rounds:
//   one_plus (Qwen3.5's zero-centred norm: w stored as the scale minus one, BF16 or F32):
//     y = bf16((x32 * r) * (1 + float(w)))              (fp32 products; the only rounding)
//   plain (torch's `(x.float() * r).to(bf16) * w`, w BF16):
//     n = bf16(x32 * r);  y = bf16(float(n) * float(w))  (two roundings)
// Per-head norms (q_norm, k_norm) view [tokens * heads, head_dim].
#include "core/tensor.h"

namespace tf {

enum class NormWeight { one_plus, plain };

struct RmsNormOptions {
  NormWeight weight = NormWeight::one_plus;
  float eps = 1e-6f;
};

// x: BF16 [rows, d]; w: [d]; y: BF16 [rows, d] (may alias x).
void rms_norm(const Tensor& x, const Tensor& w, const RmsNormOptions& options, Tensor& y);

// The residual add fused ahead of the norm; the same roundings as the two ops apart:
//   h = bf16(float(h) + float(d))  (in place);  y = rms_norm(h, w)
// h, y: BF16 [rows, d]; d: BF16 [rows, d] or a product's F32 k-share sums (backend/elementwise/residual_add.h);
// y must not alias h or d.
void residual_add_rms_norm(Tensor& h, const Tensor& d, const Tensor& w, const RmsNormOptions& options, Tensor& y);

// The kernels behind the op, one per weight form; the front checks geometry, so they trust their arguments.
namespace cpu {
void rms_norm_one_plus(const Tensor& x, const Tensor& w, float eps, Tensor& y);
void residual_add_rms_norm_one_plus(Tensor& h, const Tensor& d, const Tensor& w, float eps, Tensor& y);
void rms_norm_plain(const Tensor& x, const Tensor& w, float eps, Tensor& y);
}  // namespace cpu
namespace cuda {
void rms_norm_one_plus(const Tensor& x, const Tensor& w, float eps, Tensor& y);
void rms_norm_plain(const Tensor& x, const Tensor& w, float eps, Tensor& y);
void residual_add_rms_norm_one_plus(Tensor& h, const Tensor& d, const Tensor& w, float eps, Tensor& y);
}  // namespace cuda

}  // namespace tf
