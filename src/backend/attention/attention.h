#pragma once
// Scaled dot-product attention, o_i = sum_j softmax_j(scale * q_i . k_j) v_j, in two layouts, each
// with its reference's numerics; the mask and the packed sequences are parameters.
//
// tokens_heads: q BF16 [T, Hq, d], k, v BF16 [T, Hkv, d] (query head h reads kv head h / (Hq / Hkv)),
// sequences packed along T (a row never attends across a sequence boundary); torch eager's bf16
// rounding points:
//   s_ij = bf16(bf16(sum_d q_i[d] k_j[d]) * scale)      (fp32 sum, rounded; then the scale, rounded)
//   p_ij = bf16(exp(s_ij - m_i) / sum_j exp(s_ij - m_i))  (fp32 softmax over the row's keys, m_i = max s)
//   o_i = bf16(sum_j float(p_ij) * float(v_j))           (fp32 sum over j in order)
// where the row's keys are j <= i (mask causal) or every j of its sequence (mask none).
// With numerics fused (a fused kernel's, as SDPA's, one rounding at the end):
//   s_ij = fp32(sum_d q_i[d] k_j[d]) * scale;  e_ij = exp(s_ij - m_i) (fp32, m_i the row's max s)
//   o_i = bf16((sum_j e_ij * float(v_j)) / (sum_j e_ij))   (fp32 sums over j in order)
// (CPU; CUDA's flash kernel keeps a running m_i, rescales its sums once a key tile, evaluates exp as
// exp2 of scores scaled by scale * log2(e), flushing e_ij below 2^-126 to zero, and takes e_ij into
// the value sum as bf16, as SDPA does).
//
// channels: one head over all positions, channel-major as 1x1 convolutions produce it, q, k, v, o F32
// [D, N], mask none, one sequence; fp32-class numerics:
// CPU: never forms the N x N matrix: keys are visited in fixed blocks with a streaming (online)
// softmax. Each score is one fp32 sum over d in order (fused multiply-adds), then multiplied by
// `scale`; per key block of 256 the running maximum, p = exp(s - max) and the running denominator
// (sequential sum) are fp32; the output row accumulates p * v in fp32 (fused multiply-adds) and is
// multiplied by exp(old max - new max) before each block; o is divided by the denominator at the end.
// CUDA: blocks of up to 4096 queries against all keys; both products on the bf16 tensor cores with
// every fp32 operand split into hi = bf16(x) and lo = bf16(x - hi) (hi*hi + hi*lo + lo*hi in fp32,
// about 16 significant bits per operand); s = scale * (q . k). Where d % 64 == 0 and n % 8 == 0
// (TF_SOFTMAX_ROWS=tiles), per 128-key tile b of a row: m_b = max s, e = exp(s - m_b), l_b = fp32(sum e in
// double); M = max m_b, L = sum_b l_b exp(m_b - M) in double, f_b = fp32(exp(m_b - M) / L); o = sum over
// 64-key K tiles of fma(f_b, v . e over the K tile, o). Otherwise the scores are stored and
// p = exp(s - max) / (their sum in double, rounded to fp32), one row at a time; o = v . p.
#include "backend/device/seq_offsets.h"
#include "core/tensor.h"

namespace tf {

enum class AttentionMask { causal, none };
enum class AttentionLayout { tokens_heads, channels };
enum class AttentionNumerics { eager_bf16, fused };

struct AttentionOptions {
  float scale = 1.0f;
  AttentionMask mask = AttentionMask::causal;
  AttentionLayout layout = AttentionLayout::tokens_heads;
  SeqOffsets sequences{};  // tokens_heads: the packed sequences; empty is one sequence of all T tokens
  AttentionNumerics numerics = AttentionNumerics::eager_bf16;  // tokens_heads only
};

// o has q's shape and must not alias q, k or v.
void attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& options, Tensor& o);

// The kernels behind the op, one per (layout, mask); the front checks geometry, so they trust their arguments.
namespace cpu {
void attention_bf16_causal(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqOffsets& seq_offsets,
                           Tensor& o);
void attention_bf16_bidirectional(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                                  const SeqOffsets& seq_offsets, Tensor& o);
void attention_f32_channels(const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& o);
void attention_fused_causal(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqOffsets& seq_offsets,
                            Tensor& o);
void attention_fused_bidirectional(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                                   const SeqOffsets& seq_offsets, Tensor& o);
}  // namespace cpu
namespace cuda {
void attention_fused_causal(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqOffsets& seq_offsets,
                            Tensor& o);
void attention_fused_bidirectional(const Tensor& q, const Tensor& k, const Tensor& v, float scale,
                                   const SeqOffsets& seq_offsets, Tensor& o);
void attention_bf16_causal(const Tensor& q, const Tensor& k, const Tensor& v, float scale, const SeqOffsets& seq_offsets,
                           Tensor& o);
void attention_f32_channels(const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& o);
}  // namespace cuda

}  // namespace tf
