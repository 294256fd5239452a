#pragma once
// Gated attention's queries and keys made ready in one op: qg (q_proj's output, per head the query
// then the gate) split, the query and the keys each given their per-head zero-centred RMSNorm, then
// partial RoPE. The bytes of split_query_gate, rms_norm one_plus (q_norm, k_norm) and
// rope, sequential (each) in turn; CUDA does all of it in one launch where the geometry allows.
#include "backend/device/seq_offsets.h"
#include "core/tensor.h"

namespace tf {

// qg: BF16 [T, Hq * 2 * d]; kraw: BF16 [T, Hkv * d]; q_norm, k_norm: BF16 or F32 [d]; cos, sin:
// BF16 [positions, half] (2 * half <= d, positions >= the longest sequence); q, gate: BF16 [T, Hq,
// d]; k: BF16 [T, Hkv, d]. No output may alias an input or another output.
void attention_query_key_prep(const Tensor& qg, const Tensor& kraw, const Tensor& q_norm, const Tensor& k_norm,
                              float eps, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& q,
                              Tensor& k, Tensor& gate);

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void attention_query_key_prep(const Tensor& qg, const Tensor& kraw, const Tensor& q_norm, const Tensor& k_norm,
                              float eps, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& q,
                              Tensor& k, Tensor& gate);
}  // namespace cpu
namespace cuda {
void attention_query_key_prep(const Tensor& qg, const Tensor& kraw, const Tensor& q_norm, const Tensor& k_norm,
                              float eps, const Tensor& cos, const Tensor& sin, const SeqOffsets& seq_offsets, Tensor& q,
                              Tensor& k, Tensor& gate);
}  // namespace cuda

}  // namespace tf
