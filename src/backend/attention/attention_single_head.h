#pragma once
// One attention head over all positions, channel-major as 1x1 convolutions produce it:
// o[:, i] = sum_j softmax_j(scale * q[:, i] . k[:, j]) v[:, j].
// CPU: never forms the N x N matrix: keys are visited in fixed blocks with a streaming (online)
// softmax. Numerics (CPU): each score is one fp32 sum over d in order (fused multiply-adds), then
// multiplied by `scale`; per key block of 256 the running maximum, p = exp(s - max) and the running
// denominator (sequential sum) are fp32; the output row accumulates p * v in fp32 (fused
// multiply-adds) and is multiplied by exp(old max - new max) before each block; o is divided by
// the denominator at the end.
// CUDA: scores for blocks of up to 4096 queries against all keys in a workspace; both products on
// the bf16 tensor cores with every fp32 operand split into hi = bf16(x) and lo = bf16(x - hi)
// (hi*hi + hi*lo + lo*hi in fp32, about 16 significant bits per operand); s = scale * (q . k);
// p = exp(s - max) / (their sum in double, rounded to fp32), one row at a time; o = v . p.
#include "core/tensor.h"

namespace tf {

// q, k, v: F32 [D, N]; o: F32 [D, N] (may not alias the inputs).
void attention_single_head(const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& o);

}  // namespace tf
