#pragma once
// A fused q|k|v product's rows made ready for attention in one op: split per head into q, k and v,
// q and k each given their per-head RMSNorm with a plain weight, then RoPE from per-token tables
// (a diffusion transformer's joint attention). The bytes of the copy, rms_norm (NormWeight::plain;
// q_norm, k_norm) and rope (RopePositions::per_token) in turn; CUDA does all of it in one launch
// where the geometry allows.
#include "backend/rope/rope_tables.h"
#include "core/tensor.h"

namespace tf {

// qkv: BF16 [T, 3 * H * d] (each row: q's heads, then k's, then v's); q_norm, k_norm: BF16 [d];
// tables: BF16 [T, half] on qkv's device (row t for token t), 2 * half <= d; q, k, v: BF16 [T, H, d].
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
