#pragma once
// The gated delta rule, recurrent form, fp32 state S [dk, dv] per (sequence, value head), S = 0 at
// each sequence start; value head h reads key head h / (Hv / Hk) (repeat_interleave). Per token t:
//   S = S * exp(g_t)                        (fp32, elementwise)
//   kv[j] = sum_i S[i, j] * k_t[i]           (fp32 sum over i in order)
//   d[j] = (v_t[j] - kv[j]) * beta_t         (fp32)
//   S[i, j] = S[i, j] + k_t[i] * d[j]        (fp32, product rounded before the add)
//   o_t[j] = bf16(sum_i S[i, j] * q_t[i])    (fp32 sum over i in order, one rounding)
// transformers computes the same recurrence chunked (chunk 64); equal in exact arithmetic.
// On CUDA a sequence of at least kDeltaRuleChunkedFrom tokens takes the chunked form below (its
// own length decides, never what it is packed with); TF_DELTA_RULE=recurrent or chunked puts
// every sequence on one form.
#include "backend/device/seq_offsets.h"
#include "core/tensor.h"

namespace tf {

// q, k: F32 [T, Hk, dk]; v: F32 [T, Hv, dv]; beta, g: F32 [T, Hv]; o: BF16 [T, Hv, dv].
void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                      const SeqOffsets& seq_offsets, Tensor& o);

// The same op in the chunked (WY) form, every sequence chunked: chunks of kDeltaRuleChunk tokens
// that never cross a sequence boundary; per chunk, with G_i = g_0 + .. + g_i and
// E_ij = exp(g_{j+1} + .. + g_i) (each pair's own fp32 sum, so near pairs keep their precision):
//   A = (I + strictly-lower(beta_i (k_i . k_j) E_ij))^-1   (in 16-row blocks, forward substitution)
//   W = A diag(beta exp(G)) K;  U = A diag(beta) V;  M = causal(Q K^T o E) (diagonal included)
//   V' = U - W S;  O = bf16(diag(exp(G)) Q S + M V');  S = exp(G_last) S + K^T diag(E_last,j) V'
// All in fp32; on CUDA the Gram, W / U and the pass's products are 3xTF32 on the tensor cores (an
// fp32-class product, summed in the MMAs' order), within the same contract. CUDA holds dk and dv up to 128.
void gated_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                              const SeqOffsets& seq_offsets, Tensor& o);

constexpr int64_t kDeltaRuleChunk = 64;
constexpr int64_t kDeltaRuleChunkedFrom = 128;  // where the chunked form starts to win on the H200

// The kernels behind the op; the front checks geometry, so they trust their arguments.
namespace cpu {
void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                      const SeqOffsets& seq_offsets, Tensor& o);
void gated_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                              const SeqOffsets& seq_offsets, Tensor& o);
}  // namespace cpu
namespace cuda {
void gated_delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                      const SeqOffsets& seq_offsets, Tensor& o);
void gated_delta_rule_chunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g,
                              const SeqOffsets& seq_offsets, Tensor& o);
}  // namespace cuda

}  // namespace tf
