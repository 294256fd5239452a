#pragma once
// Gated DeltaNet's inputs straight from the in-projection: causal_conv1d_silu then delta_net_prep,
// the conv's bf16 output never stored (each backend gives the bytes of its own two steps).
#include "backend/device/seq_offsets.h"
#include "core/tensor.h"

namespace tf {

// x: BF16 [T, 2*Hk*dk + Hv*dv] (before the conv); w: BF16 [channels, 1, K]; b, a: BF16 [T, Hv];
// A_log, dt_bias: F32 or BF16 [Hv]. Outputs F32: q, k [T, Hk, dk]; v [T, Hv, dv]; beta, g [T, Hv].
void causal_conv1d_silu_delta_net_prep(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets,
                                       const Tensor& b, const Tensor& a, const Tensor& A_log, const Tensor& dt_bias,
                                       Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void causal_conv1d_silu_delta_net_prep(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets,
                                       const Tensor& b, const Tensor& a, const Tensor& A_log, const Tensor& dt_bias,
                                       Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g);
}  // namespace cpu
namespace cuda {
void causal_conv1d_silu_delta_net_prep(const Tensor& x, const Tensor& w, const SeqOffsets& seq_offsets,
                                       const Tensor& b, const Tensor& a, const Tensor& A_log, const Tensor& dt_bias,
                                       Tensor& q, Tensor& k, Tensor& v, Tensor& beta, Tensor& g);
}  // namespace cuda

}  // namespace tf
