#pragma once
// A fused q|k|v product's rows made ready for attention in one op, as kohakumoss's qk_norm_rope
// (a diffusion transformer's joint attention): split per head into q, k and v; q and k each given
// their per-head RMSNorm with a plain weight and split-half RoPE over the whole head from fp32
// per-token tables, all in fp32 with one rounding:
//   r = rsqrt(fp32 sum(x^2) / d + eps),  n[i] = (x[i] r) w[i],  rot = cat(-n[half:], n[:half])
//   y[i] = bf16(n[i] c + rot[i] s)     (c, s: the token's table row at i mod half; each product fp32)
// v is copied.
#include "backend/rope/rope_tables.h"
#include "core/tensor.h"

namespace tf {

// qkv: BF16 [T, 3 * H * d] (each row: q's heads, then k's, then v's); q_norm, k_norm: BF16 [d];
// tables: F32 [T, half] on qkv's device (row t for token t), 2 * half == d; q, k, v: BF16 [T, H, d].
// No output may alias an input or another output.
void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const RopeTables& tables,
                   Tensor& q, Tensor& k, Tensor& v);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const Tensor& cos,
                   const Tensor& sin, Tensor& q, Tensor& k, Tensor& v);
}  // namespace cpu
namespace cuda {
void qkv_norm_rope(const Tensor& qkv, const Tensor& q_norm, const Tensor& k_norm, float eps, const Tensor& cos,
                   const Tensor& sin, Tensor& q, Tensor& k, Tensor& v);
}  // namespace cuda

}  // namespace tf
