#pragma once
// Causal grouped-query attention with torch eager's bf16 rounding points, per sequence; query head h
// reads kv head h / (Hq / Hkv):
//   s_ij = bf16(bf16(sum_d q_i[d] k_j[d]) * scale)      (fp32 sum, rounded; then the scale, rounded)
//   p_ij = bf16(exp(s_ij - m_i) / sum_j exp(s_ij - m_i))  (fp32 softmax over j <= i, m_i = max s)
//   o_i = bf16(sum_j float(p_ij) * float(v_j))           (fp32 sum over j in order)
#include "backend/device/seq_offsets.h"
#include "core/tensor.h"

namespace tf {

// q: BF16 [T, Hq, d]; k, v: BF16 [T, Hkv, d]; o: BF16 [T, Hq, d] (must not alias the inputs).
void attention_causal_gqa(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                          const SeqOffsets& seq_offsets, Tensor& o);

}  // namespace tf
