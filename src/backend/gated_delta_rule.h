#pragma once
// The gated delta rule, recurrent form, fp32 state S [dk, dv] per (sequence, value head), S = 0 at
// each sequence start; value head h reads key head h / (Hv / Hk) (repeat_interleave). Per token t:
//   S = S * exp(g_t)                        (fp32, elementwise)
//   kv[j] = sum_i S[i, j] * k_t[i]           (fp32 sum over i in order)
//   d[j] = (v_t[j] - kv[j]) * beta_t         (fp32)
//   S[i, j] = S[i, j] + k_t[i] * d[j]        (fp32, product rounded before the add)
//   o_t[j] = bf16(sum_i S[i, j] * q_t[i])    (fp32 sum over i in order, one rounding)
// transformers computes the same recurrence chunked (chunk 64); equal in exact arithmetic.
#include "backend/seq_offsets.h"
#include "core/tensor.h"

namespace tf {

// q, k: F32 [T, Hk, dk]; v: F32 [T, Hv, dv]; beta, g: F32 [T, Hv]; o: BF16 [T, Hv, dv].
void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                      const SeqOffsets& seq_offsets, Tensor& o);

}  // namespace tf
