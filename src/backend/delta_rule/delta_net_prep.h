#pragma once
// Gated DeltaNet inputs from the conv output and the b, a projections (transformers 5.17's
// torch_chunk_gated_delta_rule: q/k are cast to fp32 first, then L2-normalised in fp32):
//   q32 = float(q); q = (q32 * (1 / sqrt(sum(q32^2) + 1e-6))) * float(dk^-0.5)   (fp32; per key head)
//   k32 = float(k); k = k32 * (1 / sqrt(sum(k32^2) + 1e-6))                      (fp32)
//   v = float(v)                                                                (exact)
//   beta = float(bf16(sigmoid(float(b))))                                       (bf16 rounding, as b.sigmoid())
//   g = -exp(float(A_log)) * softplus(float(a) + float(dt_bias))                (fp32; softplus(x) = x for x > 20,
//                                                                                else log1p(exp(x)))
// The conv output's channels are [q: Hk x dk | k: Hk x dk | v: Hv x dv] (in_proj_qkv's row order).
#include "core/tensor.h"

namespace tf {

// mixed: BF16 [T, 2*Hk*dk + Hv*dv]; b, a: BF16 [T, Hv]; A_log, dt_bias: F32 or BF16 [Hv].
// Outputs F32: q, k [T, Hk, dk]; v [T, Hv, dv]; beta, g [T, Hv]. Shapes of the outputs fix Hk, dk, Hv, dv.
void delta_net_prep(const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                    const Tensor& dt_bias, Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g);

// The checks delta_net_prep makes, in the words of op (for ops that end in the prep), its input
// named input (the conv's output, or the conv's input of the same shape). Returns their device.
Device check_delta_net_prep(const char* op, const char* input, const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                            const Tensor& dt_bias, const Tensor& q, const Tensor& k, const Tensor& v,
                            const Tensor& beta, const Tensor& g);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void delta_net_prep(const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                    const Tensor& dt_bias, Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g);
}  // namespace cpu
namespace cuda {
void delta_net_prep(const Tensor& mixed, const Tensor& b, const Tensor& a, const Tensor& A_log,
                    const Tensor& dt_bias, Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g);
}  // namespace cuda

}  // namespace tf
