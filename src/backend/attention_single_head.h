#pragma once
// One attention head over all positions, channel-major as 1x1 convolutions produce it:
// o[:, i] = sum_j softmax_j(scale * q[:, i] . k[:, j]) v[:, j].
// Never forms the N x N matrix: keys are visited in fixed blocks with a streaming (online)
// softmax. Numerics (CPU): each score is one fp32 sum over d in order (fused multiply-adds), then
// multiplied by `scale`; per key block of 256 the running maximum, p = exp(s - max) and the running
// denominator (sequential sum) are fp32; the output row accumulates p * v in fp32 (fused
// multiply-adds) and is multiplied by exp(old max - new max) before each block; o is divided by
// the denominator at the end.
#include "core/tensor.h"

namespace tf {

// q, k, v: F32 [D, N]; o: F32 [D, N] (may not alias the inputs).
void attention_single_head(const Tensor& q, const Tensor& k, const Tensor& v, float scale, Tensor& o);

}  // namespace tf
